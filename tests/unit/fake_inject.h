/*
 * tests/unit/fake_inject.h - a test double of src/capture/inject.c (another
 * helper's file) for the unit test of the control socket and for
 * tests/tools/control_server: the mode machine and status line of
 * capture.h, writing to a real spool when one is given.
 */
#ifndef MP_TESTS_FAKE_INJECT_H
#define MP_TESTS_FAKE_INJECT_H

#include "capture/capture.h"
#include "spool/control.h"

/* Start over in mode (MP_CAPTURE_*), writing to w (NULL: no spool) named path. */
void fake_inject_reset(int mode, struct mp_spool_writer *w, const char *path);
/* How many times each control call was made, and the last mark's label. */
int fake_inject_n_calls(const char *what);
const char *fake_inject_last_mark(void);

#endif
