# bench/lib.sh - helpers the benchmark scripts share; sourced, not run.
# Set BENCH_NAME (for messages) before sourcing.

# die TEXT: print "BENCH_NAME: TEXT" and exit 1
die() {
	echo "${BENCH_NAME:-bench}: $*" >&2
	exit 1
}

# median_of: the median of the numbers on standard input, one per line
median_of() {
	sort -g | awk '
		{ v[NR] = $1 }
		END { if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# median FILE FIELD: the median of FIELD=value over the lines of a bench/measure log
median() {
	sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$1" | median_of
}

# cpu_median FILE: the median of user_s + sys_s over the lines of a bench/measure log
cpu_median() {
	sed -n 's/.*user_s=\([0-9.]*\) sys_s=\([0-9.]*\).*/\1 \2/p' "$1" | awk '{ print $1 + $2 }' |
		median_of
}
