/*
 * util/frame_skip.h - frames that are never a call site: the interpreter,
 * the C/C++ runtime, binding layers and the framework's operator dispatch
 * (CPython, libc/libstdc++, pybind11, torch dispatch and autograd engine).
 *
 * The list is a set of shell-glob patterns (fnmatch(3)).  A pattern without
 * '@' matches the function name of a native frame (one whose file does not
 * end in ".py"); "NAME@FILE" matches the name and the file of any frame
 * (use '*' for either).  The built-in list is documented in
 * memprof(1), ENVIRONMENT; MEMPROF_SKIP_FRAMES adds patterns separated by
 * ';' and MEMPROF_SKIP_FRAMES_DEFAULT=0 turns the built-in list off.  Both
 * are read once, on first use; thread-safe after that.
 */
#ifndef MP_UTIL_FRAME_SKIP_H
#define MP_UTIL_FRAME_SKIP_H

#include "memprof/trace.h"

/* 1 when f is an interpreter, runtime or dispatch frame, else 0. */
int mp_frame_skip(const struct memprof_frame *f);

#endif
