#!/bin/bash
# options-man.sh - one source for each command's options: the options a
# command's --help lists (generated from its option table, cmd/options.h)
# are the options its man page lists, and the man page's SYNOPSIS names
# every one of them but --help, and no other; so does its usage line,
# unless it says "[options]".  An alias (a second name getopt takes, such
# as --max-frag) is in neither list: the help of its option names it ("is
# an alias"), and so does the man page, in that option's text.  Commands
# whose options come from a table: the list below.
set -u
. "$(dirname "$0")/lib.sh"

COMMANDS="merge info import export analyze report diff check tune"
COMMANDS="$COMMANDS replay record attach watch"

# The options of --help: "-x" and "--name", one a line, sorted.
help_options() {
	sed -n 's/^  \(-[A-Za-z0-9]\), \(--[a-z][a-z0-9-]*\).*/\1\n\2/p; s/^      \(--[a-z][a-z0-9-]*\).*/\1/p' "$1" |
		LC_ALL=C sort -u
}

# The options of the man page's option list (".It Fl ..." lines), the same way.
man_options() {
	grep '^\.It Fl ' "$1" | tr ' ' '\n' | sed -n '/^\.\{0,1\}Fl$/{n;p}' |
		sed 's/^-\([a-z][a-z0-9-]*\)$/--\1/; t; s/^\([A-Za-z0-9]\)$/-\1/; t; d' | LC_ALL=C sort -u
}

# The options of the SYNOPSIS: "Fl -name", and "Fl abc" for -a, -b, -c.
synopsis_options() {
	sed -n '/^\.Sh SYNOPSIS/,/^\.Sh /p' "$1" | tr ' ' '\n' | sed -n '/^\.\{0,1\}Fl$/{n;p}' |
		while read -r w; do
			case $w in
			-) ;; # "Fl -" alone: the end of options, or --NAME for any NAME
			-*) echo "-$w" ;;
			*) printf '%s\n' "$w" | sed 's/./-&\n/g' | sed '/^$/d' ;;
			esac
		done | LC_ALL=C sort -u
}

# The options a usage line names: "[-fq]" as -f and -q, "[--top=N]" and "[-o FILE]" by name.
usage_options() {
	sed -n 's/^usage: //p' "$1" | head -n 1 | tr ' ' '\n' | sed -n 's/^\[\{0,1\}\(-[^]=|]*\).*/\1/p' |
		while read -r w; do
			case $w in
			--*) echo "$w" ;;
			*) printf '%s\n' "${w#-}" | sed 's/./-&\n/g' | sed '/^$/d' ;;
			esac
		done | LC_ALL=C sort -u
}

for c in $COMMANDS; do
	page=$top_srcdir/man/memprof-$c.1
	step "memprof $c: --help and the man page list the same options"
	mp "$c" --help
	expect_status 0
	help_options "$OUT" >"$TMP/help-$c"
	man_options "$page" >"$TMP/man-$c"
	[ -s "$TMP/help-$c" ] || fail "no option found in 'memprof $c --help'"
	expect_same_file "$TMP/help-$c" "$TMP/man-$c"

	step "memprof $c: the SYNOPSIS names every option but --help, and no other"
	# an option with a short form is named by it in the SYNOPSIS
	sed -n 's/^  \(-[A-Za-z0-9]\), --[a-z].*/\1/p; s/^      \(--[a-z][a-z0-9-]*\).*/\1/p' "$OUT" |
		grep -v -x -e '-h' -e '--help' | LC_ALL=C sort -u >"$TMP/want-$c"
	synopsis_options "$page" >"$TMP/syn-$c"
	expect_same_file "$TMP/want-$c" "$TMP/syn-$c"

	step "memprof $c: its usage line names every option but --help, and no other"
	mp "$c" --no-such-option
	expect_status 2
	cp "$ERR" "$TMP/usage-err-$c"
	if grep -q '^usage: .*\[options\]' "$TMP/usage-err-$c"; then
		pass
	else
		usage_options "$TMP/usage-err-$c" >"$TMP/usage-$c"
		expect_same_file "$TMP/want-$c" "$TMP/usage-$c"
	fi

	step "memprof $c: each alias its --help names is in the man page"
	mp "$c" --help
	for a in $(grep 'is an alias' "$OUT" | grep -o -- '--[a-z][a-z0-9-]*' | LC_ALL=C sort -u); do
		if grep -q "^\.Fl -${a#--}\( \|\$\)" "$page"; then pass; else fail "alias $a is not in $page"; fi
	done
done

step "the check can fail: an option missing from a usage line is found"
printf 'usage: memprof merge [-f] TRACE... -o JOB\n' >"$TMP/usage-broken"
usage_options "$TMP/usage-broken" >"$TMP/usage-broken-opts"
if cmp -s "$TMP/want-merge" "$TMP/usage-broken-opts"; then fail "a missing -q went unnoticed"; else pass; fi

step "the check can fail: an option missing from a page is found"
sed '/^\.It Fl q , Fl -quiet/d' "$top_srcdir/man/memprof-merge.1" >"$TMP/broken.1"
man_options "$TMP/broken.1" >"$TMP/man-broken"
if cmp -s "$TMP/help-merge" "$TMP/man-broken"; then fail "a missing --quiet went unnoticed"; else pass; fi

finish
