/*
 * analysis/call_site.h - the call site of a call stack as the gate and the
 * cross-rank analysis key it: "NAME@DIR/FILE" (the call-site frame's
 * function and the last two components of its file path, the line left
 * out: the lines of the stacks folded into one site are listed together,
 * mp_call_site_add_line), "NAME" when the frame has no file,
 * MP_CALL_SITE_NONE without a stack.  One definition so every command
 * folds stacks into the same sites.
 */
#ifndef MP_ANALYSIS_CALL_SITE_H
#define MP_ANALYSIS_CALL_SITE_H

#include <stddef.h>
#include <stdint.h>

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

/* Add line (ignored when not > 0) to *lines (ascending, distinct, n of them,
 * malloc'd).  Returns 0, or MP_ENOMEM with *lines unchanged. */
int mp_call_site_add_line(int64_t **lines, size_t *n, int64_t line);
/* The lines of a site as text, "41,88"; line alone when n is 0, "" when
 * that is 0 too.  Returns buf. */
char *mp_call_site_lines_text(char *buf, size_t size, const int64_t *lines, size_t n, int64_t line);

#endif
