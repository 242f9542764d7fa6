/*
 * util/trace_window.c - a trace's window: whole life, or why not
 * (util/trace_window.h).
 */
#include "util/trace_window.h"

#include <string.h>

const char mp_window_torch[] =
        "a PyTorch snapshot: the allocator's history keeps only the program's last events";
const char mp_window_dormant[] =
        "recorded only between 'memprof attach PID start' and 'stop' (record --dormant, or a "
        "stop before the program ended)";

static const char truncated_reason[] = "the trace is truncated: recording stopped early";

const char *mp_trace_window(const char *source, const char *window_meta, int truncated)
{
	if (window_meta && window_meta[0])
		return window_meta;
	if (source && strcmp(source, "torch") == 0)
		return mp_window_torch;
	if (truncated)
		return truncated_reason;
	return NULL;
}
