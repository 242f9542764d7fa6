/*
 * report/tune_text.h - a tune result printed as text or JSON on a stream.
 * 0, or -1 when out of memory or the stream failed.
 */
#ifndef MP_REPORT_TUNE_TEXT_H
#define MP_REPORT_TUNE_TEXT_H

#include <stdio.h>

#include "replay/tune.h"

int mp_tune_print_text(FILE *f, const char *path, const struct mp_tune_result *r);
int mp_tune_print_json(FILE *f, const char *path, const struct mp_tune_result *r);

#endif
