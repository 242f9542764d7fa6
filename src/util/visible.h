/*
 * util/visible.h - text for a terminal, with nothing in it that a terminal
 * obeys: strings from a trace (frame, file and phase names, a recorded
 * command) may hold escape sequences that clear the screen, set the window
 * title or make links (ESC, OSC, CSI), CR, BEL and the like.  Control
 * characters other than newline and tab (C0, DEL, C1 as UTF-8), the
 * Unicode bidirectional overrides and every byte that is not UTF-8 are
 * shown as \xNN, byte by byte; the rest passes unchanged.
 */
#ifndef MP_UTIL_VISIBLE_H
#define MP_UTIL_VISIBLE_H

#include <stddef.h>
#include <stdio.h>

/*
 * A stream that writes to out (never closed here) what is written to it,
 * made visible.  fclose it when done: that writes out what is held (a
 * UTF-8 sequence cut between two writes) and fflushes out; it returns EOF
 * when any write to out failed.  NULL when out of memory.
 */
FILE *mp_visible_open(FILE *out);

/* s (n bytes, complete) made visible, to out; 0, or -1 when a write failed. */
int mp_visible_write(FILE *out, const char *s, size_t n);

#endif
