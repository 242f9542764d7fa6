#!/bin/bash
# trace-pages.sh - every command that reads the events gives the same output
# whether it decodes the events table's pages itself (the default) or reads
# the rows through SQLite (MEMPROF_READ_PAGES=0): analyze (text, JSON, by API
# and stack at an OOM), info, export (CSV, MiniMalloc, Perfetto), report
# (Markdown), check, replay of every pool (every field but the measured
# times; the plan a greedy pass, so that no time budget decides it), and
# merge's stored rows; on the bundled demo trace, a generated two-device
# trace, the same vacuumed to 1 KiB pages (a deep b-tree), and, when
# present, the real PyTorch snapshots and MiniMalloc files of
# ../shared/datasets.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed to compare replay results"
W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# Replay JSON less what is measured, not computed.
strip_times() {
	python3 -c '
import json, re, sys
def f(x):
    if isinstance(x, dict):
        return {k: f(v) for k, v in x.items() if not re.search(r"(host_ns|alloc_ns|free_ns|replay_ns|replay_cpu_ns|plan_ns|total_ns)", k)}
    if isinstance(x, list):
        return [f(v) for v in x]
    return x
print(json.dumps(f(json.load(sys.stdin)), sort_keys=True))' <"$1" >"$2"
}

# both_ways NAME DB ARGS...: the command's stdout and exit status, pages against SQL.
both_ways() {
	local name=$1 db=$2
	shift 2
	step "$name: memprof $* on the pages and through SQL"
	mp "$@" "$db"
	cp "$OUT" "$name.pages"
	local st=$status
	MEMPROF_READ_PAGES=0 run "$MEMPROF" "$@" "$db"
	cp "$OUT" "$name.sql"
	expect_eq "$status" "$st" "exit status through SQL"
	if [ "$1" = replay ]; then
		strip_times "$name.pages" "$name.pages.s"
		strip_times "$name.sql" "$name.sql.s"
		expect_same_file "$name.sql.s" "$name.pages.s"
	else
		expect_same_file "$name.sql" "$name.pages"
	fi
}

every_command() {
	local tag=$1 db=$2
	both_ways "$tag-analyze" "$db" analyze
	both_ways "$tag-analyze-json" "$db" analyze --json
	both_ways "$tag-analyze-oom" "$db" analyze --by=api,stack --at=oom
	both_ways "$tag-info" "$db" info --json
	both_ways "$tag-csv" "$db" export --format=csv
	both_ways "$tag-minimalloc" "$db" export --format=minimalloc
	both_ways "$tag-perfetto" "$db" export --format=perfetto -o -
	both_ways "$tag-md" "$db" report --format=md
	both_ways "$tag-check" "$db" check --max-peak=1GiB
	both_ways "$tag-replay" "$db" replay --pool=all --backend=sim --no-save --json --plan-time=0
}

step "import the demo trace"
mp import -q -o demo.db "$top_srcdir/samples/traces/demo.csv"
expect_status 0
every_command demo demo.db

step "a generated two-device trace"
python3 - <<'PY' >gen.csv
import random
r = random.Random(7)
print("ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack")
live, t = {}, 1000
for i in range(1, 6001):
    t += r.randint(1, 50)
    if live and r.random() < 0.45:
        k = r.choice(sorted(live))
        s, a, d = live.pop(k)
        print(f"{t},free,{k},{s},{s},0x{a:x},{d},0,{5000 + d},bwd,cudaFree,,{11 + d},")
    else:
        s = r.choice([512, 4096, 1 << 20, 3 << 20, 1 << 30])
        d = r.randint(0, 1)
        a = 0x7f0000000000 + i * (1 << 31)
        live[i] = (s, a, d)
        print(f"{t},alloc,{i},{s},{s - r.randint(0, 256)},0x{a:x},{d},{r.randint(0, 2)},{5000 + d},fwd,cudaMalloc,,{11 + d},main@t.py:{r.randint(1, 40)}")
PY
mp import -q -o gen.db gen.csv
expect_status 0
every_command gen gen.db

if have_sqlite3; then
	step "the same with 1 KiB pages: interior and leaf pages"
	cp gen.db deep.db
	sql deep.db "PRAGMA page_size=1024; VACUUM;" >/dev/null
	expect_eq "$(sql deep.db 'PRAGMA page_size;')" 1024 "page size"
	every_command deep deep.db
fi

step "merge: the stored rows"
mp merge -o merged-pages.db demo.db gen.db
expect_status 0
MEMPROF_READ_PAGES=0 run "$MEMPROF" merge -o merged-sql.db demo.db gen.db
expect_status 0
both_ways merged merged-pages.db export --format=csv
mp export --format=csv merged-sql.db
cp "$OUT" merged-sql.csv
expect_same_file merged-sql.csv merged.pages

datasets=$top_srcdir/../shared/datasets
for f in "$datasets"/torch-snapshots/*.pickle "$datasets"/minimalloc/*.csv; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	step "import $name"
	mp import -q -o "$name.db" "$f"
	expect_status 0
	both_ways "$name-analyze-json" "$name.db" analyze --json
	both_ways "$name-csv" "$name.db" export --format=csv
	both_ways "$name-replay" "$name.db" replay --pool=all --backend=sim --no-save --json --plan-time=0
done
finish
