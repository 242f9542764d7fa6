/*
 * replay/loader.h - finds, loads and checks pool plugins (memprof-plugin(7)).
 *
 * A plugin is NAME.so exporting MEMPROF_POOL_INIT_SYMBOL.  --pool=NAME is
 * looked up in order: the --plugin-dir given, each directory of
 * MEMPROF_PLUGIN_PATH (colon-separated), the installed plugin directory
 * (MEMPROF_PLUGIN_DIR, $(pkglibdir)), and, for a memprof run from its build
 * tree, plugins/.libs beside the executable.  A NAME containing '/' is a
 * path and is loaded as given.  The loader copies min(plugin's struct_size,
 * sizeof(struct memprof_pool_ops)) of the ops, zeroing the rest, and refuses
 * a plugin whose major differs from the host's, whose struct_size is larger
 * than the host knows while its minor is not newer (a corrupt header), or
 * that lacks a required callback, naming both versions and the path.  Not
 * thread-safe.
 */
#ifndef MP_REPLAY_LOADER_H
#define MP_REPLAY_LOADER_H

#include <stddef.h>

#include "memprof/pool.h"
#include "util/error.h"

struct mp_pool_plugin {
	char *path;                  /* the file loaded */
	void *dl;                    /* dlopen handle */
	struct memprof_pool_ops ops; /* the host's copy, missing fields zeroed */
};

/*
 * Load the pool called name (or at a path).  plugin_dir may be NULL.  On
 * failure *out is NULL and err says what was tried and why it failed, with
 * a hint (e.g. the directories searched, or the dlerror text).
 */
int mp_loader_open(const char *name, const char *plugin_dir, struct mp_pool_plugin **out,
                   struct mp_error *err);
void mp_loader_close(struct mp_pool_plugin *p);

/*
 * Every pool found in the search directories, by name, the first of each
 * name in search order, sorted by name.  Files that fail to load are
 * skipped (their errors are not fatal).  Free with mp_loader_free_list.
 */
int mp_loader_list(const char *plugin_dir, struct mp_pool_plugin ***out, size_t *n,
                   struct mp_error *err);
void mp_loader_free_list(struct mp_pool_plugin **list, size_t n);

#endif
