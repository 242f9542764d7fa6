/*
 * import/symbols.h - turning the raw return addresses of a recorded call
 * stack into function names and file:line, offline, with elfutils' libdw.
 *
 * One mp_symbols per recorded process: its modules (path, load bias, range,
 * GNU build id) as the spool lists them.  A module is opened only when a pc
 * first falls in it; a module whose file is gone, unreadable, or whose build
 * id differs from the recorded one is never used, its frames stay addresses.
 * Results are cached per pc.  Not thread-safe.
 */
#ifndef MP_IMPORT_SYMBOLS_H
#define MP_IMPORT_SYMBOLS_H

#include <stdint.h>

#include "memprof/trace.h"

struct mp_symbols;

/* Returns NULL when out of memory. */
struct mp_symbols *mp_symbols_new(void);
void mp_symbols_free(struct mp_symbols *s);

/*
 * Add a module loaded at bias base over [start, end).  build_id is its GNU
 * build id in hex (NULL or "" when not recorded: not checked).  The strings
 * are copied.  Returns 0 or MP_ENOMEM.
 */
int mp_symbols_add_module(struct mp_symbols *s, const char *path, uint64_t base, uint64_t start,
                          uint64_t end, const char *build_id);

/*
 * The frame of return address pc: the function (else "0xOFFSET", the pc's
 * offset in its module, else "0xPC"), its source file (else the module's
 * path, else "") and line (else 0).  The strings belong to s until it is
 * freed.  *is_tool is set when the pc lies in the profiler's or the
 * driver's own code (libmemprof-inject, libcupti, libcuda).  Returns 0 or
 * MP_ENOMEM.
 */
int mp_symbols_frame(struct mp_symbols *s, uint64_t pc, struct memprof_frame *f, int *is_tool);

/*
 * Modules that a frame fell in but that could not be used: how many, and
 * the first one's path and why (NULL when none).
 */
int mp_symbols_n_unusable(const struct mp_symbols *s, const char **path, const char **why);

#endif
