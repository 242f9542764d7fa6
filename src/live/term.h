/*
 * live/term.h - the terminal under 'memprof record --live''s view: the
 * alternate screen (entered and left on the caller's descriptor), keys one
 * by one from /dev/tty, a frame of the view's lines in plain ANSI
 * sequences, and the tail of the command's log shown below the figures.
 * The caller owns the descriptors and when to draw.  Not thread-safe.
 */
#ifndef MP_LIVE_TERM_H
#define MP_LIVE_TERM_H

#include <stddef.h>
#include <termios.h>

#include "live/text.h"

#define MP_LIVE_LOG_TAIL 8192 /* bytes of the log read for its last lines */

struct mp_live_term {
	int out_fd;    /* where the screen is drawn */
	int tty_fd;    /* keys: /dev/tty, -1 none */
	int tty_saved; /* its settings saved (and changed) */
	struct termios saved;
	int open; /* the alternate screen is on */
};

/* Enter the alternate screen on out_fd, the cursor hidden; keys one by one. */
void mp_live_term_open(struct mp_live_term *t, int out_fd);
/* Leave it, the terminal as it was (nothing when not open). */
void mp_live_term_close(struct mp_live_term *t);
/* Read the keys waiting on the terminal: 1 when one asks to close the view ('q'). */
int mp_live_term_quit_key(struct mp_live_term *t);

/* text (lines, each ending with '\n') as one frame into frame: home, each line
 * then clear-to-end-of-line (no newline after the last: it would scroll), clear below. */
void mp_live_term_frame(const struct mp_live_text *text, struct mp_live_text *frame);

/* Write all of p to fd, ignoring errors (a terminal that went away). */
void mp_live_write_all(int fd, const char *p, size_t n);

/* The last lines (at most n) of the file open at fd, into buf (MP_LIVE_LOG_TAIL + 1
 * bytes; lines point into it, mp_live_log_lines); how many. */
size_t mp_live_log_tail(int fd, char *buf, const char **lines, size_t n);

#endif
