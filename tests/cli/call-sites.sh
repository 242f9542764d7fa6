#!/bin/bash
# call-sites.sh - call sites skip interpreter, runtime and dispatch frames
# (issue 22, item 10): CPython frames with line numbers, the autograd
# engine's thread start and torch dispatch never become the site; the
# user's frame does.  The list is extended by MEMPROF_SKIP_FRAMES and
# turned off by MEMPROF_SKIP_FRAMES_DEFAULT=0; 'analyze --stack-depth'
# shows more frames; check/diff print every line of a site; the HTML
# icicle starts at the user's frames.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

HEADER=ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack
PY='_start@??;Py_BytesMain@??;_PyEval_EvalFrameDefault@Python/ceval.c:4200;main@/src/app/train.py:10'
CALL='cfunction_call@Objects/methodobject.c:543;torch::autograd::THPVariable_matmul(_object*)@??;at::_ops::mm::call(at::Tensor const&)@??;c10::impl::wrap_kernel_functor_unboxed_<x>::call()@??;at::(anonymous namespace)::create_out(c10::ArrayRef<long>)@RegisterCUDA.cpp;at::detail::empty_cuda(c10::ArrayRef<long>)@??'
ENGINE='__xmknodat@??;start_thread@??;execute_native_thread_routine@thread.cc:82;torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)@??;torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)@??;at::_ops::mm::call(at::Tensor const&)@??;at::detail::empty_cuda(c10::ArrayRef<long>)@??'
{
	echo "$HEADER"
	echo "1000,alloc,1,4194304,4194304,0x10000000,0,0,1,,,,,\"$PY;forward@/src/app/model.py:41;_PyEval_EvalFrameDefault@Python/ceval.c:4200;$CALL\""
	echo "2000,alloc,2,2097152,2097152,0x10400000,0,0,1,,,,,\"$PY;forward@/src/app/model.py:88;_PyEval_EvalFrameDefault@Python/ceval.c:4200;$CALL\""
	echo "3000,alloc,3,1048576,1048576,0x10600000,0,0,1,,,,,\"$ENGINE\""
} >sites.csv
# HEAD: the allocation at model.py:41 doubled
sed 's/^1000,alloc,1,4194304,4194304,/1000,alloc,1,8388608,8388608,/' sites.csv >grown.csv
for t in sites grown; do
	mp import -q -o $t.db $t.csv
	[ "$status" -eq 0 ] || die "cannot import $t.csv: $(cat "$ERR")"
done

step "analyze: the user's frame is the site"
mp analyze sites.db
expect_status 0
expect_stdout_contains "forward (model.py:41) < main (train.py:10)"
expect_stdout_contains "forward (model.py:88) < main (train.py:10)"
expect_stdout_contains "torch::autograd::generated::MmBackward0::apply"
expect_stdout_not_contains "cfunction_call"
expect_stdout_not_contains "execute_native_thread_routine"
expect_stdout_not_contains "ceval.c"

step "analyze --stack-depth"
mp analyze --stack-depth=1 sites.db
expect_status 0
expect_stdout_contains "forward (model.py:41)"
expect_stdout_not_contains "< main (train.py:10)"
mp analyze --stack-depth=0 sites.db
expect_status 2
expect_stderr_contains "invalid --stack-depth '0'"

step "MEMPROF_SKIP_FRAMES adds patterns"
MEMPROF_SKIP_FRAMES='forward@*/model.py;nothing::*' mp analyze sites.db
expect_status 0
expect_stdout_contains "main (train.py:10)"
expect_stdout_not_contains "forward (model.py"

step "MEMPROF_SKIP_FRAMES_DEFAULT=0 turns the built-in list off"
MEMPROF_SKIP_FRAMES_DEFAULT=0 mp analyze sites.db
expect_status 0
expect_stdout_contains "cfunction_call (methodobject.c:543)"

step "check: one site per function, every line shown"
mp check --max-peak=1GiB sites.db
expect_status 0
expect_stdout_contains "forward (app/model.py:41,88)"
expect_stdout_not_contains "cfunction_call"

step "diff: the same lines"
mp diff sites.db grown.db
expect_status 0
expect_stdout_contains "forward (app/model.py:41,88)"
expect_stdout_not_contains "cfunction_call"
mp diff --format=json sites.db grown.db
expect_status 0
expect_stdout_match '"lines":[[:space:]]*\[41,[[:space:]]*88\]'


step "report: the icicle starts at the user's frames"
mp report -o sites.html sites.db
expect_status 0
sed -n '/data-chart="peak"/,/<\/svg>/p' sites.html >icicle.svg
grep -q '>main</text>' icicle.svg || fail "no 'main' cell in the icicle"
grep -q '_PyEval_EvalFrameDefault\|Py_BytesMain\|cfunction_call\|__xmknodat\|execute_native' icicle.svg &&
	fail "interpreter frames drawn in the icicle"
pass

finish
