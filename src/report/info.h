/*
 * report/info.h - 'memprof info' output: a trace's identity, counts, time
 * span and peak, as text for people or JSON for programs.  Receives plain
 * results, never a database handle.
 */
#ifndef MP_REPORT_INFO_H
#define MP_REPORT_INFO_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/memstate.h"
#include "memprof/trace.h"

struct mp_info {
	const char *path;
	int schema_version;  /* as the file was opened */
	int current_version; /* what this memprof writes */
	const char *source, *source_file, *tool_version, *created, *command_line; /* may be NULL */
	const char *truncated, *lossy, *dropped_records;                          /* may be NULL */
	const char *import_warnings;                                              /* may be NULL */
	const struct mp_memstate *summary;
	const struct memprof_process *processes;
	size_t n_processes;
	const struct memprof_device *devices;
	size_t n_devices;
};

#define MP_INFO_JSON_VERSION 3 /* bump when the JSON layout changes incompatibly */

void mp_info_print_text(FILE *out, const struct mp_info *info);
/* Returns 0, or -1 when out of memory. */
int mp_info_print_json(FILE *out, const struct mp_info *info);

#endif
