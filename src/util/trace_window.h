/*
 * util/trace_window.h - whether a trace covers its program's whole life or
 * only a window of it, and why.  What is live at the end of a window (a
 * PyTorch snapshot, a recording started dormant or stopped by 'memprof
 * attach', a truncated trace) may be freed after it: it is "live at the
 * end of the window", never a leak (memprof-analyze(1), LIFETIME
 * PATTERNS).  Pure functions over the trace's meta values.
 */
#ifndef MP_UTIL_TRACE_WINDOW_H
#define MP_UTIL_TRACE_WINDOW_H

/* The meta key an importer sets, with the reason, when its trace is a window. */
#define MP_WINDOW_META "window"

/*
 * NULL when the trace covers the program's whole life (leaks may be
 * claimed), else why it is a window: window_meta (the meta value, when
 * set and not empty), else a reason from the source ("torch": traces
 * imported before the meta existed) or truncated (recording stopped
 * early).  The result is window_meta or a static string.
 */
const char *mp_trace_window(const char *source, const char *window_meta, int truncated);

/* The reason an importer of a PyTorch snapshot stores. */
extern const char mp_window_torch[];
/* The reason the spool importer stores for a recording with start/stop windows. */
extern const char mp_window_dormant[];

#endif
