/*
 * tune/tune_print.h - a tune result printed as text or JSON on a stream.
 * 0, or -1 when out of memory or the stream failed.
 */
#ifndef MP_TUNE_PRINT_H
#define MP_TUNE_PRINT_H

#include <stdio.h>

#include "tune/tune.h"

int mp_tune_print_text(FILE *f, const char *path, const struct mp_tune_result *r);
int mp_tune_print_json(FILE *f, const char *path, const struct mp_tune_result *r);

#endif
