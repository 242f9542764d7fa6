#!/bin/bash
# record-spools.sh - 'memprof record' turning the spools of a command's
# processes into one trace.  The real injected library needs a GPU driver, so
# the recorded workload here writes its spools itself with
# tests/tools/spool_script (the real spool writer) into $MEMPROF_SPOOL_DIR, as
# the library would: a parent and a child process (ppid), the child killed
# with SIGKILL in the middle (the trace is marked truncated, what it wrote
# before is kept), rank labels, the summary line, the default output name,
# --keep-spool, spools of earlier runs left out, and spools kept when the
# conversion fails.
set -u
. "$(dirname "$0")/lib.sh"

SPOOL_SCRIPT=$top_builddir/tests/tools/spool_script
[ -x "$SPOOL_SCRIPT" ] || die "no '$SPOOL_SCRIPT' (make check builds it)"
have_sqlite3 || skip "no sqlite3 shell to read the traces"
cd "$TMP" || die "cd $TMP"
: >"$TMP/libmemprof-inject.so" # a stand-in: nothing here initialises CUDA
export MEMPROF_INJECT=$TMP/libmemprof-inject.so
export SPOOL_SCRIPT

q() {
	sql "$1" "$2" | tr '\n' ' ' | sed 's/ $//'
}

# The workload: rank 0 (pid 4000) and its child rank 1 (pid 4001), killed
# after writing two allocations; exits 5.
cat >workload.sh <<'EOF'
#!/bin/bash
[ -n "${MEMPROF_SPOOL_DIR:-}" ] || { echo "workload: no MEMPROF_SPOOL_DIR" >&2; exit 99; }
"$SPOOL_SCRIPT" <<SPOOL || exit 98
header pid=4000 ppid=1 start=1000
meta host nodeA
meta argv "python train.py --rank 0"
meta env:RANK 0
meta env:LOCAL_RANK 0
meta env:WORLD_SIZE 2
device 0 name="Test GPU" total=1000000
event kind=api name=cudaMalloc corr=1 thread=11 ts=100 duration=5 addr=0x1000 bytes=4096 device=0
event kind=mem_alloc corr=1 ts=101 addr=0x1000 bytes=4096 device=0 mem_kind=3
event kind=api name=cudaFree corr=2 thread=11 ts=500 duration=7 addr=0x1000 device=0 flags=4
SPOOL
sh -c '"$SPOOL_SCRIPT" 2>/dev/null' <<SPOOL
header pid=4001 ppid=4000 start=2000
meta host nodeA
meta env:OMPI_COMM_WORLD_RANK 1
meta env:OMPI_COMM_WORLD_LOCAL_RANK 1
meta env:OMPI_COMM_WORLD_SIZE 2
event kind=api name=cudaMalloc corr=1 thread=12 ts=200 addr=0x9000 bytes=512 device=0
event kind=api name=cuMemAlloc_v2 corr=2 thread=12 ts=300 addr=0xa000 bytes=1024 device=0 flags=2
kill
event kind=api name=cudaMalloc corr=3 thread=12 ts=400 addr=0xb000 bytes=1 device=0
SPOOL
exit 5
EOF
chmod +x workload.sh

step "two processes, one killed mid-spool"
mkdir tmpdir
TMPDIR=$TMP/tmpdir run "$MEMPROF" record -o job.db -- ./workload.sh
LAST_CMD="memprof record -o job.db -- ./workload.sh"
expect_status 5
expect_stderr_contains "memprof record: 4 events of 2 processes -> job.db (truncated)"
expect_stderr_contains "-4001-2000.mpt': ends early at byte"
expect_stderr_not_contains "nothing was recorded"
expect_file_present job.db
expect_dir_empty tmpdir
expect_eq "$(q job.db 'select pid, ppid, rank, local_rank, world_size, coalesce(host, ""), coalesce(command, "") from processes order by pid')" \
	"4000|1|0|0|2|nodeA|python train.py --rank 0 4001|4000|1|1|2|nodeA|" \
	"processes with their ranks"
expect_eq "$(q job.db 'select e.ts_ns, p.pid, e.op, e.size from events e join processes p on p.id = e.process order by e.seq')" \
	"101|4000|1|4096 200|4001|1|512 300|4001|1|1024 500|4000|2|4096" \
	"events of both processes in time order"
expect_eq "$(q job.db 'select coalesce(duration_ns, "-") from events order by seq')" \
	"5 - - 7" "the calls' durations (unknown where the spool has none)"
for kv in source:record truncated:1 lossy:1 clock:monotonic_ns; do
	expect_eq "$(q job.db "select value from meta where key = '${kv%%:*}'")" "${kv#*:}" "meta ${kv%%:*}"
done
expect_eq "$(q job.db "select value from meta where key = 'command_line'")" \
	"$MEMPROF record -o job.db -- ./workload.sh" "meta command_line"

step "--keep-spool and --spool-dir"
mp record --keep-spool --spool-dir="$TMP/spools" -o keep.db -- ./workload.sh
expect_status 5
expect_stderr_contains "memprof record: spools kept in '$TMP/spools'"
expect_eq "$(ls spools | sed 's/^.*-\([0-9]*-[0-9]*\.mpt\)$/\1/' | sort | tr '\n' ' ')" \
	"4000-1000.mpt 4001-2000.mpt " "the spools kept"

step "spools already in --spool-dir are not this run's"
cat >one.sh <<'EOF'
#!/bin/sh
"$SPOOL_SCRIPT" <<SPOOL
header pid=4100 ppid=1 start=3000
event kind=api name=cudaMalloc corr=1 thread=1 ts=100 addr=0x1000 bytes=64 device=0
SPOOL
EOF
chmod +x one.sh
mp record --spool-dir="$TMP/spools" -o one.db -- ./one.sh
expect_status 0
expect_stderr_contains "memprof record: 1 events of 1 process -> one.db"
expect_eq "$(q one.db 'select pid from processes')" "4100" "only this run's process"
expect_eq "$(ls spools | wc -l)" "2" "this run's spool removed, the earlier ones left"

step "-q prints no summary"
mp record -q -o quiet.db -- ./one.sh
expect_status 0
expect_stderr_empty
expect_file_present quiet.db

step "the default output name"
mkdir names && cd names || die "cd names"
mp record -- ../workload.sh
expect_status 5
name=$(ls)
if [[ "$name" =~ ^memprof-workload\.sh-[0-9]{8}-[0-9]{6}\.db$ ]]; then pass; else fail "default name: '$name'"; fi
expect_stderr_contains "-> $name (truncated)"
rm -f ./*.db
cat >train.py <<'EOF'
import os, subprocess, sys
sys.exit(subprocess.call([os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "one.sh")]))
EOF
mp record -- python3 train.py --epochs 1
expect_status 0
name=$(ls ./*.db 2>/dev/null | sed 's|^\./||')
if [[ "$name" =~ ^memprof-train-[0-9]{8}-[0-9]{6}\.db$ ]]; then pass; else fail "default name for python3 train.py: '$name'"; fi
cd "$TMP" || die "cd $TMP"

step "a spool that cannot be converted is kept"
cat >junk.sh <<'EOF'
#!/bin/sh
printf 'MPSPOOL\001 but too short' >"$MEMPROF_SPOOL_DIR/junk-1-1.mpt"
EOF
chmod +x junk.sh
mp record --spool-dir="$TMP/junk" -o junk.db -- ./junk.sh
expect_status 1
expect_stderr_contains "junk-1-1.mpt"
expect_stderr_contains "memprof record: the spools are kept in '$TMP/junk'"
expect_file_absent junk.db
expect_file_present junk/junk-1-1.mpt

finish
