/*
 * sys/record.h - what 'memprof record' prepares before it launches the
 * command and finds after it (sys/record_setup.c, sys/record_torch.c):
 * the output (a default name, not existing unless
 * forced, its directory writable), the injected library, CUPTI, the spool
 * directory, PyTorch's own history (its sitecustomize), the command's
 * environment, and the spools the run wrote.  Paths handed to the command
 * are absolute: it may change directory.  Never prints: errors go to err,
 * with a hint where the fix is known.
 */
#ifndef MP_SYS_RECORD_H
#define MP_SYS_RECORD_H

#include <stddef.h>

#include "util/error.h"

struct mp_record_opts {
	const char *output; /* -o, else the default name (output_owned) */
	int force, dormant, no_cache, keep_spool, quiet;
	const char *stacks;                     /* NULL: the library's default (all) */
	long stack_sample, stack_depth;         /* 0: the library's default */
	const char *spool_dir, *inject, *cupti; /* as given, NULL when not */
	char **cmd;                             /* the command and its arguments */
	int live;                               /* --live */
	const char *live_log, *metrics; /* --live-log, --metrics ([ADDR:]PORT), NULL when not */
	/* PyTorch's own history (record_torch.c): --history-entries (0: the default),
	 * --no-torch-history, the sitecustomize directory (malloc'd; NULL: none) */
	long history_entries;
	int no_torch_history;
	char *torch_site;
	char *output_owned, *inject_path, *cupti_path; /* resolved, malloc'd */
};

struct mp_record_spools {
	char *dir;     /* absolute */
	int created;   /* memprof made dir (removed with the spools) */
	char **before; /* .mpt names already in dir before the run (not ours) */
	size_t n_before;
	char **paths; /* this run's spools, sorted */
	size_t n;
};

/* "N" in [1, max] into *out; returns 0 or -1. */
int mp_record_number(const char *s, long max, long *out);

/*
 * Everything checked before the command runs: the output (default name,
 * not existing unless --force, its directory writable), the injected
 * library, CUPTI, the spool directory (made).  Returns 0, or MP_E* with
 * err set and *hint the fix when one is known (else NULL).
 */
int mp_record_prepare(struct mp_record_opts *o, struct mp_record_spools *sp, const char **hint,
                      struct mp_error *err);

/* The directory of the running memprof binary into dir; 0, or -1. */
int mp_record_exe_dir(char *dir, size_t size);

/* The variables to add to the command's environment ("NAME=VALUE", NULL-terminated). */
char **mp_record_env(const struct mp_record_opts *o, const char *spool_dir);

/* The run's spools (sp->paths).  Returns 0, or -1 with errno. */
int mp_record_list_spools(struct mp_record_spools *sp);
/* Delete the run's spools (when spools is set) and the directory if memprof made it. */
void mp_record_remove_spools(struct mp_record_spools *sp, int spools);

/* --- record_torch.c: PyTorch's own allocator history (sitecustomize) ----------- */

/* Find the sitecustomize directory (o->torch_site) unless the history is off.
 * Returns 0, or 1 when none was found: the warning to give goes to why (size n). */
int mp_record_torch_prepare(struct mp_record_opts *o, char *why, size_t n);
/* Add the history's variables to env (which has room) from *n on; 0, or -1 out of memory. */
int mp_record_torch_env(const struct mp_record_opts *o, char **env, int *n);
/* Delete the snapshots (torch-PID.pickle) the run left in dir. */
void mp_record_torch_remove(const char *dir);

void mp_record_free(struct mp_record_opts *o, struct mp_record_spools *sp, char **env);

#endif
