/*
 * analysis/call_site.h - the call site of a call stack as the gate and the
 * cross-rank analysis key it: "NAME@DIR/FILE" (the call-site frame's
 * function and the last two components of its file path, the line left
 * out), "NAME" when the frame has no file, MP_CALL_SITE_NONE without a
 * stack.  One definition so every command folds stacks into the same sites.
 */
#ifndef MP_ANALYSIS_CALL_SITE_H
#define MP_ANALYSIS_CALL_SITE_H

#include "memprof/trace.h"

#define MP_CALL_SITE_NONE "(no call stack)"

/* The frame has a source file ("" and "??" are none). */
int mp_call_site_has_file(const struct memprof_frame *f);
/*
 * The site key of s (NULL or empty: MP_CALL_SITE_NONE), malloc'd, NULL when
 * out of memory; *frame is set to the call-site frame (util/stack_text.h,
 * mp_stack_call_site), NULL without one.
 */
char *mp_call_site_key(const struct memprof_stack *s, const struct memprof_frame **frame);

#endif
