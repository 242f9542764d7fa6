/*
 * cmd/record.h - the parts of 'memprof record' in cmd/ (internal to
 * cmd/record*.c): record_args.c its options and --help, record.c the
 * command (messages, exit status), record_live.c what runs beside the
 * command (--live, --metrics).  What the launch needs is prepared by
 * sys/record.h.
 */
#ifndef MP_CMD_RECORD_H
#define MP_CMD_RECORD_H

#include <stdio.h>

#include "sys/record.h"

/* Parse argv into o (zeroed by the caller); -1 to go on, else the exit status
 * (0 after --help). */
int mp_record_args_parse(int argc, char **argv, struct mp_record_opts *o);
void mp_record_args_help(FILE *out);

#endif
