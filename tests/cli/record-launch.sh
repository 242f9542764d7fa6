#!/bin/bash
# record-launch.sh - 'memprof record' as a launcher: the command's exit status
# comes back (128+N for death by signal N, 127 not found, 126 not
# executable), signals sent to memprof reach the command, the checks made
# before launching stop it from running at all (existing output, unwritable
# directory, no injected library), usage errors, and the environment the
# command gets.  No command here makes a CUDA call, so no spool is written.
set -u
. "$(dirname "$0")/lib.sh"

cd "$TMP" || die "cd $TMP"

use_inject_library

have_driver() {
	python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null
}

step "exit status passes through"
mp record -o out.db -- sh -c 'exit 3'
expect_status 3
expect_stderr_contains "nothing was recorded"
if have_driver; then
	expect_stderr_contains "made no CUDA call"
else
	expect_stderr_contains "memprof record: no GPU driver (libcuda.so.1: "
fi
expect_file_absent out.db
expect_stdout_empty

step "exit status 0"
mp record -o out.db -- true
expect_status 0
expect_file_absent out.db

step "death by signal"
mp record -o out.db -- sh -c 'kill -TERM $$'
expect_eq "$status" 143 "exit status (128 + SIGTERM)" # not expect_status: it takes 143 for a crash
expect_stderr_contains "memprof record: 'sh' was killed by signal 15 (Terminated)"

step "signals sent to memprof reach the command"
rm -f ready trapped
"$MEMPROF" record -o out.db -- bash -c \
	'trap "echo TERM >trapped; exit 7" TERM; : >ready; while :; do sleep 0.05; done' \
	>"$OUT" 2>"$ERR" &
mp_pid=$!
for _ in $(seq 200); do
	[ -e ready ] && break
	sleep 0.05
done
[ -e ready ] || die "the recorded command did not start"
kill -TERM "$mp_pid"
wait "$mp_pid"
status=$?
LAST_CMD="memprof record -- bash (trapping TERM), memprof sent SIGTERM"
expect_status 7
expect_file_present trapped
expect_eq "$(cat trapped 2>/dev/null)" "TERM" "the trap's output"

step "SIGUSR1 is passed on too"
rm -f ready trapped
"$MEMPROF" record -o out.db -- bash -c \
	'trap "echo USR1 >trapped; exit 0" USR1; : >ready; while :; do sleep 0.05; done' \
	>"$OUT" 2>"$ERR" &
mp_pid=$!
for _ in $(seq 200); do
	[ -e ready ] && break
	sleep 0.05
done
kill -USR1 "$mp_pid"
wait "$mp_pid"
status=$?
expect_status 0
expect_eq "$(cat trapped 2>/dev/null)" "USR1" "the trap's output"

step "existing output: the command does not run"
echo old >exists.db
mp record -o exists.db -- touch marker
expect_status 1
expect_one_message "memprof record: "
expect_stderr_contains "output 'exists.db' exists"
expect_stderr_contains "--force"
expect_file_absent marker
expect_eq "$(cat exists.db)" "old" "the existing output is untouched"

step "--force: the command runs"
mp record --force -o exists.db -- touch marker
expect_status 0
expect_file_present marker
rm -f marker

step "output in a missing directory: the command does not run"
mp record -o "$TMP/nodir/x.db" -- touch marker
expect_status 1
expect_one_message "memprof record: "
expect_stderr_contains "cannot write the trace in '$TMP/nodir': No such file or directory"
expect_file_absent marker

if [ "$(id -u)" != 0 ]; then
	step "output in a read-only directory: the command does not run"
	mkdir ro && chmod 555 ro
	mp record -o ro/x.db -- touch marker
	expect_status 1
	expect_stderr_contains "cannot write the trace in 'ro': Permission denied"
	expect_file_absent marker
	expect_dir_empty ro
fi

step "output is a directory"
mkdir adir
mp record --force -o adir -- touch marker
expect_status 1
expect_stderr_contains "output 'adir' is a directory"
expect_file_absent marker

step "no injected library: the command does not run"
mp record --inject="$TMP/none.so" -o out.db -- touch marker
expect_status 1
expect_one_message "memprof record: "
expect_stderr_contains "no injected library '$TMP/none.so': No such file or directory"
expect_file_absent marker

step "a command that does not exist"
mp record -o out.db -- no-such-command-memprof arg
expect_status 127
expect_stderr_contains "memprof record: cannot run 'no-such-command-memprof': No such file or directory"

step "a command that is not executable"
echo 'echo hi' >notexec.sh
chmod 644 notexec.sh
mp record -o out.db -- ./notexec.sh
expect_status 126
expect_stderr_contains "memprof record: cannot run './notexec.sh': Permission denied"

step "usage: no command"
mp record -o out.db
expect_status 2
expect_stderr_contains "no command given"
mp record -o out.db --
expect_status 2
expect_stderr_contains "no command given"

step "usage: bad values"
for bad in --stacks=some --stack-sample=0 --stack-sample=x --stack-depth=129 --stack-depth=0; do
	mp record "$bad" -o out.db -- touch marker
	expect_status 2
	expect_stderr_contains "bad --"
	expect_file_absent marker
done
mp record --no-such-option -- true
expect_status 2

step "options after the command belong to the command"
mp record -o out.db -- sh -c 'echo "$@"' sh -o --force
expect_status 0
expect_stdout_line "-o --force"

step "the environment the command gets"
mp record --stacks=sampled --stack-sample=4 --stack-depth=9 --dormant --no-framework-cache \
	--spool-dir="$TMP/spools" -o out.db -- sh -c 'env >"$0"' "$TMP/env"
expect_status 0
expect_stderr_contains "memprof record: --no-framework-cache: PyTorch, JAX and TensorFlow now send each tensor to CUDA; this changes the workload's own memory behaviour and speed"
expect_eq "$(grep -c 'no-framework-cache' "$ERR")" "1" "the notice is printed once"
expect_stderr_contains "memprof record: --dormant: nothing is recorded until 'memprof attach PID start'; 'memprof attach list' shows the processes"
for v in "CUDA_INJECTION64_PATH=$(realpath "$MEMPROF_INJECT")" "MEMPROF_SPOOL_DIR=$TMP/spools" \
	MEMPROF_STACKS=sampled MEMPROF_STACK_SAMPLE=4 MEMPROF_STACK_DEPTH=9 MEMPROF_DORMANT=1 \
	PYTORCH_NO_CUDA_MEMORY_CACHING=1 XLA_PYTHON_CLIENT_ALLOCATOR=platform \
	XLA_PYTHON_CLIENT_PREALLOCATE=false TF_GPU_ALLOCATOR=cuda_malloc_async; do
	if grep -qxF -e "$v" "$TMP/env"; then pass; else fail "not in the command's environment: $v"; fi
done
if grep -q '^MEMPROF_CUPTI=' "$TMP/env"; then
	expect_eq "$(sed -n 's/^NVTX_INJECTION64_PATH=//p' "$TMP/env")" \
		"$(sed -n 's/^MEMPROF_CUPTI=//p' "$TMP/env")" "NVTX goes to the same CUPTI"
fi
if grep -q '^CUDA_INJECTION64_PATH=' <(env); then
	fail "memprof's own environment holds CUDA_INJECTION64_PATH"
else
	pass
fi

step "--cupti names the CUPTI library"
: >"$TMP/libcupti-test.so"
mp record --cupti="$TMP/libcupti-test.so" -o out.db -- sh -c 'env >"$0"' "$TMP/env"
expect_status 0
expect_eq "$(sed -n 's/^MEMPROF_CUPTI=//p' "$TMP/env")" "$TMP/libcupti-test.so" "MEMPROF_CUPTI"
expect_eq "$(sed -n 's/^NVTX_INJECTION64_PATH=//p' "$TMP/env")" "$TMP/libcupti-test.so" \
	"NVTX_INJECTION64_PATH"
mp record --cupti="$TMP/nocupti.so" -o out.db -- touch marker
expect_status 1
expect_stderr_contains "no CUPTI library '$TMP/nocupti.so'"
expect_file_absent marker

step "the default spool directory is removed"
mkdir tmpdir
TMPDIR=$TMP/tmpdir run "$MEMPROF" record -o out.db -- sh -c 'test -d "$MEMPROF_SPOOL_DIR"'
expect_status 0
expect_dir_empty tmpdir

finish
