#!/bin/bash
# record-torch-history.sh - 'memprof record' turns PyTorch's own allocator history on in every
# Python process of the job through the sitecustomize it puts on PYTHONPATH
# (python/sitecustomize.py), and leaves each process's snapshot in the spool directory as
# torch-PID.pickle: at exit, on SIGTERM and from the out-of-memory observer.  A fake 'torch'
# package (tests/torch/fake_torch.py) records the calls it receives; no GPU is needed (nothing
# makes a CUDA call, so no spool is written and the snapshots stay where the test looks).
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || skip "no python3"
cd "$TMP" || die "cd $TMP"
use_inject_library
"$PY" "$top_srcdir/tests/torch/fake_torch.py" fake || die "cannot write the fake torch"
export MEMPROF_TORCH_SITE=$top_srcdir/python
export PYTHONPATH=$TMP/fake FAKE_TORCH_LOG=$TMP/calls.log

# calls: the log's calls, one per line as NAME[:key=value,...] (for the keys given)
calls() {
	"$PY" - "$@" <<'PY'
import json, sys
keys = sys.argv[1:]
for line in open("calls.log"):
    c = json.loads(line)
    extra = ",".join("%s=%s" % (k, c[k]) for k in keys if k in c)
    print(c["call"] + (":" + extra if extra else ""))
PY
}
# snapshot_info FILE: the memprof_history dict of a snapshot, as key=value words
snapshot_info() {
	"$PY" -c 'import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
h = d.get("memprof_history", {})
print(" ".join("%s=%s" % (k, h[k]) for k in ("reason", "max_entries", "stacks", "ours", "user")),
      "segments=%d" % len(d["segments"]))' "$1"
}
fresh() { rm -rf spool calls.log; mkdir spool; }

cat >init.py <<'PY'
import torch
torch.cuda.init()
PY

step "defaults: history on at CUDA's initialisation, snapshot at exit"
fresh
mp record --keep-spool --spool-dir=spool -o out.db -- "$PY" init.py
expect_status 0
expect_eq "$(calls enabled context stacks max_entries | tr '\n' ' ')" \
	"cuda_init record_memory_history:enabled=all,context=all,stacks=python,max_entries=100000 attach_oom_observer snapshot " \
	"the calls, in order"
n=$(ls spool/torch-*.pickle 2>/dev/null | wc -l)
expect_eq "$n" 1 "snapshots written"
expect_eq "$(snapshot_info spool/torch-*.pickle)" \
	"reason=exit max_entries=100000 stacks=all ours=True user=False segments=1" "the snapshot"
expect_eq "$(ls spool | grep -c '\.tmp$')" 0 "no temporary file left"

step "--history-entries and --stacks=off"
fresh
mp record --keep-spool --spool-dir=spool --history-entries=500 --stacks=off -o out.db -- "$PY" init.py
expect_status 0
expect_eq "$(calls context max_entries | sed -n 2p)" \
	"record_memory_history:context=None,max_entries=500" "no stacks, 500 entries"

step "--stacks=sampled: stacks of allocations only"
fresh
mp record --keep-spool --spool-dir=spool --stacks=sampled -o out.db -- "$PY" init.py
expect_eq "$(calls context stacks | sed -n 2p)" "record_memory_history:context=alloc,stacks=python" \
	"context alloc"

step "bad --history-entries"
mp record --history-entries=0 -o out.db -- true
expect_status 2
expect_stderr_contains "bad --history-entries '0'"

step "torch imported before CUDA is up: nothing until cuda init, never without it"
fresh
mp record --keep-spool --spool-dir=spool -o out.db -- "$PY" -c 'import torch'
expect_status 0
expect_file_absent calls.log
expect_eq "$(ls spool | wc -l)" 0 "no snapshot without CUDA"

step "the program's own history settings are kept"
fresh
cat >own.py <<'PY'
import torch
torch.cuda.memory._record_memory_history(max_entries=7)
torch.cuda.init()
PY
mp record --keep-spool --spool-dir=spool -o out.db -- "$PY" own.py
expect_status 0
expect_eq "$(calls max_entries | grep -c record_memory_history)" 1 "one call: the program's"
expect_eq "$(calls max_entries | grep record_memory_history)" "record_memory_history:max_entries=7" \
	"the program's call"
expect_stdout_empty
expect_eq "$(snapshot_info spool/torch-*.pickle | cut -d' ' -f4,5)" "ours=False user=True" \
	"the snapshot says whose settings"

step "SIGTERM: snapshot, then the default action"
fresh
cat >term.py <<'PY'
import os, time, torch
torch.cuda.init()
open("ready", "w").close()
while True:
    time.sleep(0.05)
PY
rm -f ready
"$MEMPROF" record --keep-spool --spool-dir=spool -o out.db -- "$PY" term.py >"$OUT" 2>"$ERR" &
mp_pid=$!
for _ in $(seq 200); do
	[ -e ready ] && break
	sleep 0.05
done
[ -e ready ] || die "the recorded program did not start"
kill -TERM "$mp_pid"
wait "$mp_pid"
status=$?
LAST_CMD="memprof record -- python3 term.py, memprof sent SIGTERM"
expect_eq "$status" 143 "exit status (128 + SIGTERM)"
expect_eq "$(snapshot_info spool/torch-*.pickle | cut -d' ' -f1)" "reason=sigterm" "dumped on SIGTERM"

step "a mark: torch-mark-PID (left by 'memprof attach PID mark') makes a snapshot then"
fresh
cat >mark.py <<'PY'
import os, sys, time, torch
torch.cuda.init()
spool = os.environ["MEMPROF_SPOOL_DIR"]
with open(os.path.join(spool, "torch-mark-%d" % os.getpid()), "w") as f:
    f.write("epoch 3")  # what 'memprof attach PID mark "epoch 3"' leaves
snap = os.path.join(spool, "torch-%d.pickle" % os.getpid())
for _ in range(200):
    if os.path.exists(snap):
        break
    time.sleep(0.05)
os._exit(0 if os.path.exists(snap) else 5)  # no atexit: only the mark's snapshot
PY
mp record --keep-spool --spool-dir=spool -o out.db -- "$PY" mark.py
expect_status 0
expect_eq "$(snapshot_info spool/torch-*.pickle | cut -d' ' -f1-3)" "reason=mark: epoch 3" \
	"the snapshot at the mark"
expect_eq "$(ls spool | grep -c '^torch-mark-')" 0 "the mark file is taken"

step "out of memory: the observer dumps before the error propagates"
fresh
cat >oom.py <<'PY'
import os, torch
torch.cuda.init()
torch._C._fake_oom()
os._exit(3)  # no atexit: only the observer's snapshot
PY
mp record --keep-spool --spool-dir=spool -o out.db -- "$PY" oom.py
expect_status 3
expect_eq "$(snapshot_info spool/torch-*.pickle | cut -d' ' -f1)" "reason=oom" "dumped at the OOM"

step "every process of the job: one snapshot per pid"
fresh
cat >job.py <<'PY'
import subprocess, sys, torch
torch.cuda.init()
subprocess.run([sys.executable, "init.py"], check=True)
PY
mp record --keep-spool --spool-dir=spool -o out.db -- "$PY" job.py
expect_status 0
expect_eq "$(ls spool/torch-*.pickle | wc -l)" 2 "two processes, two snapshots"
expect_eq "$(calls | grep -c record_memory_history)" 2 "history on in both"

step "a forked child (no CUDA of its own) writes no snapshot"
fresh
cat >fork.py <<'PY'
import os, sys, torch
torch.cuda.init()
pid = os.fork()
if pid == 0:
    sys.exit(0)  # atexit runs in the child too
os.waitpid(pid, 0)
PY
mp record --keep-spool --spool-dir=spool -o out.db -- "$PY" fork.py
expect_status 0
expect_eq "$(ls spool/torch-*.pickle | wc -l)" 1 "the parent's snapshot only"
expect_eq "$(calls | grep -c snapshot)" 1 "one snapshot taken"
expect_stderr_not_contains "not written"

step "a sitecustomize already on the path still runs"
fresh
mkdir -p theirs
echo 'open("their-site-ran", "w").close()' >theirs/sitecustomize.py
rm -f their-site-ran
PYTHONPATH=$TMP/fake:$TMP/theirs mp record --keep-spool --spool-dir=spool -o out.db -- "$PY" init.py
expect_status 0
expect_file_present their-site-ran
expect_eq "$(ls spool/torch-*.pickle 2>/dev/null | wc -l)" 1 "and ours did too"

step "--no-torch-history and --no-framework-cache: not turned on"
for opt in --no-torch-history --no-framework-cache; do
	fresh
	mp record -q --keep-spool --spool-dir=spool $opt -o out.db -- "$PY" init.py
	expect_status 0
	expect_eq "$(calls | tr '\n' ' ')" "cuda_init " "$opt: no history call"
	expect_eq "$(ls spool | wc -l)" 0 "$opt: no snapshot"
done

step "no sitecustomize found: a warning, the command runs"
fresh
MEMPROF_TORCH_SITE=$TMP/none mp record --keep-spool --spool-dir=spool -o out.db -- "$PY" init.py
expect_status 0
expect_stderr_contains "memprof record: warning: no 'sitecustomize.py' in '$TMP/none': PyTorch's own allocator history is not recorded"
expect_eq "$(calls | tr '\n' ' ')" "cuda_init " "no history call"

finish
