/*
 * util/stack_text.h - the one-field text form of a call stack.
 *
 * Grammar (memprof-trace(5)): frames outermost first, separated by ';';
 * a frame is NAME[@FILE[:LINE]].  In NAME the characters '\', ';' and '@'
 * are escaped with a backslash; in FILE, '\', ';' and ':'.
 * Example: "main@train.py:88;forward@model.py:41;linear".
 */
#ifndef MP_UTIL_STACK_TEXT_H
#define MP_UTIL_STACK_TEXT_H

#include <stddef.h>

#include "memprof/trace.h"
#include "util/error.h"

/* Parsed frames and the storage for their strings; reuse across calls. */
struct mp_frame_list {
	struct memprof_frame *frames; /* innermost first */
	size_t n, cap;
	char *text;
	size_t text_len, text_cap;
};

void mp_frame_list_init(struct mp_frame_list *l);
void mp_frame_list_free(struct mp_frame_list *l);

/* Parse len bytes of text into l (replacing its contents).  On a syntax
 * error returns MP_EFORMAT with a message naming the byte offset. */
int mp_stack_text_parse(const char *text, size_t len, struct mp_frame_list *l,
                        struct mp_error *err);

/* Format s; returns a malloc'd NUL-terminated string (length in *len, may be
 * NULL) or NULL when out of memory.  An empty stack formats as "". */
char *mp_stack_text_format(const struct memprof_stack *s, size_t *len);

/*
 * The frame a person calls the allocation's call site: the innermost frame
 * with a source file and a line (file neither "" nor "??", line > 0), else
 * the innermost frame.  Frames of the allocator and of stack capture
 * (PyTorch's caching allocator and unwinder, cudaMalloc, cuMem*) are
 * skipped, and so are interpreter, runtime and dispatch frames
 * (util/frame_skip.h) unless the stack has nothing else.  Returns its
 * index, or -1 for an empty or NULL stack.
 */
int mp_stack_call_site(const struct memprof_stack *s);

/* 1 when f is worth showing in a stack summary: neither an allocator frame
 * nor an interpreter, runtime or dispatch frame. */
int mp_stack_frame_shown(const struct memprof_frame *f);

#endif
