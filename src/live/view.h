/*
 * live/view.h - the live figures as text for a person: the terminal view
 * (plain lines; the caller adds the terminal control sequences) and the
 * one-line summary for logs.  Pure functions of the state and options: the
 * same state gives the same text.
 */
#ifndef MP_LIVE_VIEW_H
#define MP_LIVE_VIEW_H

#include <stddef.h>

#include "live/state.h"
#include "live/text.h"

#define MP_LIVE_TOP_SITES 5

struct mp_live_view_opts {
	int width, height;            /* columns and lines; lines are cut to width */
	const char *log_path;         /* the command's output file, NULL: none shown */
	const char *const *log_lines; /* its last lines, oldest first */
	size_t n_log_lines;
};

/*
 * The view: at most height lines, each ended by "\n" and at most width
 * columns (bytes: the text is ASCII; the log's lines are made so).
 * Returns 0 or MP_ENOMEM.
 */
int mp_live_render_view(const struct mp_live_state *st, const struct mp_live_view_opts *o,
                        struct mp_live_text *out);

/* One line (no "\n") with the totals over all processes and devices (the
 * peaks: the sum of each device's peak, which may be reached at other times). */
int mp_live_render_line(const struct mp_live_state *st, struct mp_live_text *out);

/*
 * The last n lines of buf (len bytes, the tail of a log file; buf has room
 * for one byte more): split in place, empty lines left out, a partial first line dropped when buf
 * does not start a line (starts_line 0), bytes that are not printable ASCII replaced by '?', tabs
 * by a space.  lines[] points into buf.  Returns how many (at most n).
 */
size_t mp_live_log_lines(char *buf, size_t len, int starts_line, const char **lines, size_t n);

#endif
