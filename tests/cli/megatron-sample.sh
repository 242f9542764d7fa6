#!/bin/bash
# megatron-sample.sh - samples/megatron/megatron_step.py writes the Megatron-style workload of
# samples/megatron/README.md: counts, sizes, phases and sites checked against the README's
# formulas, computed here from the dimensions (not with the generator's code).
#
# Run A: L=3 layers, h=64, f=4h=256, a=4 heads, V=256, s=32, b=2, t=2, d=2, B=2 buckets,
#   2 iterations (g = 1: tensor parallel, so TP all-gathers).
#   Per layer 12 parameter tensors: h+h + 3h*h/t + 3h/t + h*h/t + h + h+h + f*h/t + f/t
#   + h*f/t + h = 128 + 6144 + 96 + 2048 + 64 + 128 + 8192 + 128 + 8192 + 64 = 25184 elements.
#   Bucket 0 holds the last 2 layers (3 // 2 + 1) and the final LayerNorm (2h):
#   raw 2*25184 + 128 = 50496, padded to lcm(2, 128) = 128: E_0 = 50560; its MXFP8 param
#   buffer asks E_0 + ceil(E_0/32) = 50560 + 1580 = 52140 bytes (granted 52224).
#   Allocations per iteration 3B + 8 + 2g + L*(13 + 4g) = 6 + 8 + 2 + 51 = 67;
#   persistent (init) 12L + 3 + 4B = 47.
# Run B: the same with t=1 (g = 0), B=3 buckets, d=3, 3 iterations: no TP all-gathers.
set -u
. "$(dirname "$0")/lib.sh"

GEN=$top_srcdir/samples/megatron/megatron_step.py
[ -f "$GEN" ] || die "no generator at '$GEN'"
command -v python3 >/dev/null || skip "python3 is needed to run the generator"
have_sqlite3 || skip "the sqlite3 shell is needed to query the trace"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# q SQL: query t.db; phase_id NAME: the id of a phase.
q() {
	sql "$DB" "$1"
}
n_allocs_in_phase() {
	q "SELECT count(*) FROM events e JOIN phases p ON p.id = e.phase WHERE e.op = 1 AND p.name = '$1'"
}

# expected_counts L h f t d B: sets P (elements per layer), E0 (bucket 0, padded), PER_IT
# (allocations per iteration), PERSIST (never freed), GATHERS (TP all-gathers per iteration)
# and g (1 when t > 1).
expected_counts() {
	local L=$1 h=$2 f=$3 t=$4 d=$5 B=$6 n0 raw m a b r
	g=0
	[ "$t" -gt 1 ] && g=1
	P=$((h + h + 3 * h * h / t + 3 * h / t + h * h / t + h + h + h + f * h / t + f / t + h * f / t + h))
	n0=$((L / B + (L % B > 0 ? 1 : 0)))
	raw=$((n0 * P + 2 * h))
	[ "$B" -eq 1 ] && raw=$((raw + V / t * h))
	a=$d b=128 # m = lcm(d, 128)
	while [ "$b" -ne 0 ]; do r=$((a % b)) a=$b b=$r; done
	m=$((d * 128 / a))
	E0=$(((raw + m - 1) / m * m))
	PER_IT=$((3 * B + 8 + 2 * g + L * (13 + 4 * g)))
	PERSIST=$((12 * L + 3 + 4 * B))
	GATHERS=$((g * (4 * L + 2)))
}

# check_run NAME L h f a V s b t d B I: generate, import and check one run.
check_run() {
	local name=$1 L=$2 h=$3 f=$4 a=$5 V=$6 s=$7 b=$8 t=$9 d=${10} B=${11} I=${12} k got want
	local args="--layers $L --hidden $h --ffn $f --heads $a --vocab $V --seq $s --micro-batch $b"
	args="$args --tp $t --dp $d --buckets $B --iterations $I"
	DB=$name.db
	expected_counts "$L" "$h" "$f" "$t" "$d" "$B"

	step "$name: generate twice with one seed, once with another"
	run python3 "$GEN" $args --seed 7 -o "$name.csv"
	expect_status 0
	run python3 "$GEN" $args --seed 7 -o "$name-again.csv"
	expect_status 0
	expect_same_file "$name.csv" "$name-again.csv"
	run python3 "$GEN" $args --seed 8 -o "$name-seed8.csv"
	expect_status 0
	if cmp -s "$name.csv" "$name-seed8.csv"; then fail "seeds 7 and 8 give the same file"; else pass; fi
	# another seed moves timestamps only: the same ops, ids, sizes and stacks
	expect_eq "$(grep -v -e '^#' -e SYNTHETIC "$name-seed8.csv" | cut -d, -f2-5,10- | md5sum)" \
		"$(grep -v -e '^#' -e SYNTHETIC "$name.csv" | cut -d, -f2-5,10- | md5sum)" "events apart from times"
	expect_eq "$(sed -n 1p "$name.csv" | grep -c SYNTHETIC)" 1 "SYNTHETIC in the first line"

	step "$name: import, and info's totals"
	mp import -o "$DB" "$name.csv"
	expect_status 0
	mp info "$DB"
	expect_status 0
	got="$((PERSIST + I * PER_IT)) \\($PERSIST live at the end, 0 frees without an allocation\\)"
	expect_stdout_match "^allocations +$got"

	step "$name: the phases of the conventions, and the SYNTHETIC one first"
	want="init forward backward optimizer"
	for ((k = 0; k < B; k++)); do
		want="$want grad@bucket@$k param@bucket@$k grad-reduce@bucket@$k"
	done
	got=$(q "SELECT name FROM phases WHERE name NOT LIKE 'SYNTHETIC %'" | tr ' ' @ | sort |
		tr '\n' ' ')
	expect_eq "$got" "$(printf '%s\n' $want | sort | tr '\n' ' ')" "phase names"
	expect_eq "$(q "SELECT substr(p.name, 1, 10) FROM events e JOIN phases p ON p.id = e.phase
	               ORDER BY e.seq LIMIT 1")" \
		"SYNTHETIC " "the first phase"

	step "$name: allocations per iteration, by phase and in all"
	got=$(q "SELECT (SELECT count(*) FROM events e WHERE e.op = 1 AND e.seq > f.seq AND e.seq <
	          coalesce((SELECT min(n.seq) FROM events n WHERE n.op = 9 AND n.phase = f.phase
	                    AND n.seq > f.seq), 1 << 62))
	         FROM events f JOIN phases p ON p.id = f.phase WHERE f.op = 9 AND p.name = 'forward'
	         ORDER BY f.seq" | tr '\n' ' ')
	expect_eq "$got" "$(for ((k = 0; k < I; k++)); do printf '%s ' $PER_IT; done)" \
		"allocations in each iteration (3B + 8 + 2g + L(13 + 4g))"
	expect_eq "$(n_allocs_in_phase forward)" $((I * (1 + L * (9 + 2 * g) + 4 + g))) "forward allocations"
	expect_eq "$(n_allocs_in_phase backward)" $((I * (2 + g + L * (4 + 2 * g)))) "backward allocations"
	expect_eq "$(n_allocs_in_phase optimizer)" $((I * (B + 1))) "optimizer allocations"
	expect_eq "$(n_allocs_in_phase init)" $((12 * L + 3 + 3 * B)) "init allocations"
	for ((k = 0; k < B; k++)); do
		expect_eq "$(n_allocs_in_phase "param bucket $k")" "$I" "param bucket $k allocations"
		expect_eq "$(n_allocs_in_phase "grad-reduce bucket $k")" "$I" "grad-reduce bucket $k allocations"
		expect_eq "$(n_allocs_in_phase "grad bucket $k")" 1 "grad bucket $k allocations"
	done

	step "$name: every allocation is freed but the persistent ones, made at init"
	got=$(q "SELECT count(*), sum(p.name = 'init' OR p.name LIKE 'grad bucket %')
	         FROM events a JOIN phases p ON p.id = a.phase
	         WHERE a.op = 1 AND NOT EXISTS (SELECT 1 FROM events f WHERE f.op = 2
	                                        AND f.alloc_id = a.alloc_id AND f.seq > a.seq)")
	expect_eq "$got" "$PERSIST|$PERSIST" "allocations never freed, and of them made at init"
	expect_eq "$(q 'SELECT count(*) FROM events WHERE op = 2')" $((I * PER_IT)) "frees"

	step "$name: sizes: bucket 0's buffers from E_0, 512-B blocks, parameters"
	expect_eq "$(q "SELECT DISTINCT e.requested || ' ' || e.size || ' ' || e.stream FROM events e
	               JOIN phases p ON p.id = e.phase WHERE e.op = 1 AND p.name = 'param bucket 0'")" \
		"$((E0 + (E0 + 31) / 32)) $(((E0 + (E0 + 31) / 32 + 511) / 512 * 512)) 9" \
		"MXFP8 param buffer of bucket 0: E0 + ceil(E0/32), stream 9"
	expect_eq "$(q "SELECT DISTINCT e.requested FROM events e JOIN phases p ON p.id = e.phase
	               WHERE e.op = 1 AND p.name = 'grad bucket 0'")" $((4 * E0)) "FP32 grad buffer 0"
	expect_eq "$(q "SELECT DISTINCT e.requested || ' ' || e.stream FROM events e
	               JOIN phases p ON p.id = e.phase WHERE e.op = 1 AND p.name = 'grad-reduce bucket 0'")" \
		"$((2 * E0)) 9" "BF16 reduce-scatter buffer 0"
	expect_eq "$(q 'SELECT count(*) FROM events WHERE op = 1 AND size != (requested + 511) / 512 * 512')" \
		0 "blocks are the requests rounded up to 512 B"
	expect_eq "$(q "SELECT sum(e.requested) FROM events e JOIN phases p ON p.id = e.phase
	               WHERE e.op = 1 AND p.name = 'init' AND e.seq < (SELECT min(g.seq) FROM events g
	               JOIN phases q ON q.id = g.phase WHERE q.name = 'grad bucket 0')")" \
		$((2 * (L * P + V / t * h + 2 * h))) "BF16 parameter bytes"

	step "$name: TP all-gathers at the _gather_along_first_dim site, freed right after"
	got=$(q "SELECT count(*), count(DISTINCT e.requested), min(e.requested), min(e.stream)
	         FROM events e JOIN stacks s ON s.id = e.stack JOIN frames fr ON fr.id = s.frame
	         WHERE e.op = 1 AND fr.name = '_gather_along_first_dim'
	         AND fr.file = 'megatron/core/tensor_parallel/mappings.py'")
	if [ "$GATHERS" -gt 0 ]; then
		expect_eq "$got" "$((I * GATHERS))|1|$((2 * s * b * h))|9" "TP all-gathers: count|sizes|bytes|stream"
	else
		expect_eq "$got" "0|0||" "no TP all-gathers with --tp 1"
	fi
	expect_eq "$(q 'SELECT count(*) FROM events a JOIN events b ON b.seq = a.seq + 1
	               WHERE b.ts_ns <= a.ts_ns')" \
		0 "timestamps strictly increase"
}

V=256
check_run A 3 64 256 4 256 32 2 2 2 2 2
V=96
check_run B 4 96 200 6 96 16 1 1 3 3 3

step "the committed example is what the documented command writes"
run python3 "$GEN" --layers 2 --hidden 64 --heads 4 --vocab 256 --seq 32 --micro-batch 2 \
	--tp 2 --dp 2 --buckets 2 --iterations 1 -o tiny.csv
expect_status 0
expect_same_file "$DATA/megatron-tiny.csv" tiny.csv

step "the workload replays with --verify on the baseline pools"
mp replay --pool=caching,direct,planned --backend=sim --verify --no-save --json A.db
expect_status 0
cp "$OUT" replay.json
check_json replay.json '
assert sorted(x["pool"] for x in j["results"]) == ["caching", "direct", "planned"]
for x in j["results"]:
    assert x["verify"] == "passed" and x["ooms"] == 0, x
'

step "dimensions Megatron would refuse are usage errors"
run python3 "$GEN" --layers 3 --buckets 4
expect_status 2
expect_stderr_contains "--buckets 4 exceeds --layers 3"
run python3 "$GEN" --hidden 100 --heads 3
expect_status 2
expect_stderr_contains "--hidden 100 is not a multiple of 3"
run python3 "$GEN" --format=json
expect_status 2

finish
