/*
 * util/frame_skip.c - the list of frames that are never a call site
 * (util/frame_skip.h): the built-in patterns and the ones the environment
 * adds.  Reads the environment, prints nothing.
 */
#include "util/frame_skip.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Keep in step with memprof(1), ENVIRONMENT. */
static const char *const builtin[] = {
        /* CPython: its API, eval loop and call machinery, by name and file */
        "Py*",
        "_Py*",
        "pymain_*",
        "pyrun_*",
        "cfunction_*",
        "method_vectorcall*",
        "slot_tp_*",
        "vectorcall_*",
        "run_mod*",
        "run_eval_code_obj",
        "*@*Objects/*.c",
        "*@*Python/*.c",
        "*@*Modules/*.c",
        "*@*Include/*.h",
        /* the C and C++ runtime, thread start (libc's reserved "__" names) */
        "_start",
        "__*",
        "start_thread",
        "clone",
        "clone3",
        "execute_native_thread_routine",
        "std::*",
        "pthread_*",
        /* pybind11 and torch's Python bindings */
        "pybind11::*",
        "void pybind11::*",
        "torch::autograd::THP*",
        "THP*",
        "torch::autograd::python::*",
        "torch::*dispatch_*",
        /* torch operator dispatch, codegen wrappers, TensorIterator setup */
        "c10::impl::*",
        "c10::Dispatcher::*",
        "c10::BoxedKernel::*",
        "c10::KernelFunction::*",
        "at::_ops::*",
        "at::indexing::*",
        "torch::autograd::VariableType::*",
        "torch::ADInplaceOrView::*",
        "at::TensorIteratorBase::*",
        "at::meta::*",
        "void at::meta::*",
        "at::(anonymous namespace)::*",
        "at::functionalization::*",
        /* the autograd engine (the node it runs is kept) */
        "torch::autograd::Engine::*",
        "torch::autograd::Node::*",
        "torch::autograd::generated::details::*",
        "at::Tensor torch::autograd::generated::details::*",
        /* torch.nn's module call wrappers */
        "_call_impl@*torch/nn/modules/module.py",
        "_wrapped_call_impl@*torch/nn/modules/module.py",
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *extra_text;   /* MEMPROF_SKIP_FRAMES, split in place */
static const char **extra; /* pointers into extra_text */
static size_t n_extra;
static int use_builtin = 1;

static void read_env(void)
{
	const char *def = getenv("MEMPROF_SKIP_FRAMES_DEFAULT");
	const char *env = getenv("MEMPROF_SKIP_FRAMES");
	size_t n = 1;
	char *p, *tok;

	use_builtin = !(def && strcmp(def, "0") == 0);
	if (!env || !*env || !(extra_text = strdup(env)))
		return;
	for (p = extra_text; *p; p++)
		n += *p == ';';
	if (!(extra = malloc(n * sizeof(*extra))))
		return;
	for (tok = strtok_r(extra_text, ";", &p); tok; tok = strtok_r(NULL, ";", &p))
		extra[n_extra++] = tok;
}

static int is_python(const char *file)
{
	size_t n = strlen(file);

	return n >= 3 && strcmp(file + n - 3, ".py") == 0;
}

static int match(const char *pat, const struct memprof_frame *f)
{
	const char *at = strchr(pat, '@');
	const char *name = f->name ? f->name : "", *file = f->file ? f->file : "";
	char buf[256];
	size_t len;

	if (!at) /* a name alone: native frames, never Python source */
		return !is_python(file) && fnmatch(pat, name, 0) == 0;
	len = (size_t)(at - pat);
	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, pat, len);
	buf[len] = '\0';
	return fnmatch(buf, name, 0) == 0 && fnmatch(at + 1, file, 0) == 0;
}

int mp_frame_skip(const struct memprof_frame *f)
{
	size_t i;

	pthread_once(&once, read_env);
	for (i = 0; use_builtin && i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (match(builtin[i], f))
			return 1;
	for (i = 0; i < n_extra; i++)
		if (match(extra[i], f))
			return 1;
	return 0;
}
