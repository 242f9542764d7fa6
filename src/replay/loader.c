/*
 * replay/loader.c - finds pool plugins on the search path, dlopens them
 * (RTLD_NOW | RTLD_LOCAL) and checks the ops they return against the host's
 * pool ABI before anything calls them, keeping the host's own copy of the
 * ops.  Never prints: every refusal is an mp_error naming the file, the
 * versions involved and the cause.  Not thread-safe (dlerror).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay/loader.h"
#include "util/suggest.h"

/* Set on libmemprof-core's command line to $(pkglibdir); empty: not searched. */
#ifndef MEMPROF_PLUGIN_DIR
#define MEMPROF_PLUGIN_DIR ""
#endif

#define POOL_NAME_MAX 32

/* The ops struct of pool ABI 1.0 ends with plan: every 1.x plugin has at least this. */
#define OPS_SIZE_1_0                                                                               \
	(offsetof(struct memprof_pool_ops, plan) + sizeof(((struct memprof_pool_ops *)0)->plan))

#define NAME_RULE                                                                                  \
	"a pool name is 1 to 32 lowercase letters, digits, '-' or '_', starting with a letter, "   \
	"and not 'all'"

struct search_path {
	char **dirs;
	size_t n, cap;
};

/* --- the search path ---------------------------------------------------------- */

static int path_add(struct search_path *sp, const char *dir, size_t len)
{
	char **grown;

	if (len == 0)
		return 0;
	for (size_t i = 0; i < sp->n; i++)
		if (strlen(sp->dirs[i]) == len && memcmp(sp->dirs[i], dir, len) == 0)
			return 0;
	if (sp->n == sp->cap) {
		grown = realloc(sp->dirs, (sp->cap * 2 + 4) * sizeof *grown);
		if (!grown)
			return MP_ENOMEM;
		sp->dirs = grown;
		sp->cap = sp->cap * 2 + 4;
	}
	if (!(sp->dirs[sp->n] = strndup(dir, len)))
		return MP_ENOMEM;
	sp->n++;
	return 0;
}

/* plugins/.libs beside the running executable, when there is one (a build tree). */
static int path_add_exe_dir(struct search_path *sp)
{
	char exe[PATH_MAX], dir[PATH_MAX + 16];
	struct stat st;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *slash;

	if (len <= 0)
		return 0;
	exe[len] = '\0';
	if (!(slash = strrchr(exe, '/')))
		return 0;
	*slash = '\0';
	snprintf(dir, sizeof dir, "%s/plugins/.libs", exe);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	return path_add(sp, dir, strlen(dir));
}

static void path_free(struct search_path *sp)
{
	for (size_t i = 0; i < sp->n; i++)
		free(sp->dirs[i]);
	free(sp->dirs);
	sp->dirs = NULL;
	sp->n = sp->cap = 0;
}

/* --plugin-dir, MEMPROF_PLUGIN_PATH (empty entries skipped), $(pkglibdir), the build tree. */
static int path_build(struct search_path *sp, const char *plugin_dir, struct mp_error *err)
{
	const char *env = getenv("MEMPROF_PLUGIN_PATH");
	int rc = 0;

	memset(sp, 0, sizeof *sp);
	if (plugin_dir)
		rc = path_add(sp, plugin_dir, strlen(plugin_dir));
	while (rc == 0 && env && *env) {
		size_t len = strcspn(env, ":");
		rc = path_add(sp, env, len);
		env += len + (env[len] == ':');
	}
	if (rc == 0)
		rc = path_add(sp, MEMPROF_PLUGIN_DIR, strlen(MEMPROF_PLUGIN_DIR));
	if (rc == 0)
		rc = path_add_exe_dir(sp);
	if (rc != 0) {
		path_free(sp);
		return mp_err(err, MP_ENOMEM, "out of memory building the plugin search path");
	}
	return 0;
}

/* --- names ----------------------------------------------------------------------- */

static int valid_pool_name(const char *s)
{
	size_t n;

	if (!s || !(*s >= 'a' && *s <= 'z'))
		return 0;
	for (n = 0; s[n]; n++) {
		char c = s[n];
		if (n == POOL_NAME_MAX ||
		    !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return 0;
	}
	return strcmp(s, "all") != 0;
}

/* The file's name without its directory and ".so": what --pool=NAME would say. */
static void stem_of(const char *path, char *out, size_t size)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	if (len > 3 && strcmp(base + len - 3, ".so") == 0)
		len -= 3;
	if (len >= size)
		len = size - 1;
	memcpy(out, base, len);
	out[len] = '\0';
}

/* --- checking what a plugin returned ------------------------------------------------ */

static const char *dlopen_hint(const char *why)
{
	if (strstr(why, "invalid ELF header") || strstr(why, "file too short") ||
	    strstr(why, "not an ELF"))
		return "\nhint: this is not a shared object; "
		       "build a plugin with 'cc -shared -fPIC' (memprof-plugin(7))";
	if (strstr(why, "wrong ELF class") || strstr(why, "ELF machine"))
		return "\nhint: the plugin was built for another architecture";
	if (strstr(why, "undefined symbol"))
		return "\nhint: a plugin may use only libc and what it links itself, "
		       "never memprof's own symbols (memprof-plugin(7))";
	return "";
}

/* The header: the major, then the struct size the plugin's minor allows. */
static int check_header(const struct memprof_pool_ops *ops, const char *stem, const char *path,
                        struct mp_error *err)
{
	if (ops->abi_major != MEMPROF_POOL_ABI_MAJOR)
		return mp_err(err, MP_EFORMAT,
		              "plugin '%s' (%s) was built for pool ABI %u.%u; this memprof speaks "
		              "%u.%u\nhint: rebuild it against this memprof's <memprof/pool.h>",
		              stem, path, ops->abi_major, ops->abi_minor, MEMPROF_POOL_ABI_MAJOR,
		              MEMPROF_POOL_ABI_MINOR);
	if (ops->struct_size < OPS_SIZE_1_0)
		return mp_err(
		        err, MP_EFORMAT,
		        "plugin '%s' (%s) has a corrupt header: pool ABI %u.%u with a %u-byte "
		        "ops struct, smaller than the %zu bytes of pool ABI %u.0; this memprof "
		        "speaks %u.%u",
		        stem, path, ops->abi_major, ops->abi_minor, ops->struct_size, OPS_SIZE_1_0,
		        MEMPROF_POOL_ABI_MAJOR, MEMPROF_POOL_ABI_MAJOR, MEMPROF_POOL_ABI_MINOR);
	if (ops->struct_size > sizeof(struct memprof_pool_ops) &&
	    ops->abi_minor <= MEMPROF_POOL_ABI_MINOR)
		return mp_err(
		        err, MP_EFORMAT,
		        "plugin '%s' (%s) has a corrupt header: pool ABI %u.%u with a %u-byte "
		        "ops struct, larger than the %zu bytes of pool ABI %u.%u this memprof "
		        "speaks",
		        stem, path, ops->abi_major, ops->abi_minor, ops->struct_size,
		        sizeof(struct memprof_pool_ops), MEMPROF_POOL_ABI_MAJOR,
		        MEMPROF_POOL_ABI_MINOR);
	return 0;
}

/* The copy: a name, the required callbacks, and the name the file was found by. */
static int check_ops(const struct memprof_pool_ops *ops, const char *stem, const char *path,
                     const char *want_name, struct mp_error *err)
{
	char missing[64] = "";

	if (!ops->name)
		return mp_err(err, MP_EFORMAT, "plugin '%s' (%s) has no pool name", stem, path);
	if (!valid_pool_name(ops->name))
		return mp_err(err, MP_EFORMAT,
		              "plugin '%s' (%s) has an invalid pool name '%.64s': %s", stem, path,
		              ops->name, NAME_RULE);
	if (!ops->create)
		strcat(missing, ", create");
	if (!ops->alloc)
		strcat(missing, ", alloc");
	if (!ops->free)
		strcat(missing, ", free");
	if (!ops->destroy)
		strcat(missing, ", destroy");
	if (missing[0])
		return mp_err(err, MP_EFORMAT, "plugin '%s' (%s) lacks required callbacks: %s",
		              stem, path, missing + 2);
	if (want_name && strcmp(ops->name, want_name) != 0)
		return mp_err(
		        err, MP_EFORMAT,
		        "plugin '%s' (%s) declares the pool '%s': a plugin found by name must "
		        "declare that name\nhint: rename the file %s.so, or load it by its path",
		        stem, path, ops->name, ops->name);
	return 0;
}

/* Resolve the init symbol and call it; the returned ops are the plugin's. */
static int call_init(void *dl, const char *stem, const char *path,
                     const struct memprof_pool_ops **ops, struct mp_error *err)
{
	memprof_pool_init_fn init;
	void *sym;

	dlerror();
	sym = dlsym(dl, MEMPROF_POOL_INIT_SYMBOL);
	if (!sym)
		return mp_err(
		        err, MP_EFORMAT,
		        "not a memprof pool plugin '%s': it has no symbol %s\nhint: define it "
		        "with MEMPROF_POOL_DEFINE (memprof-plugin(7))",
		        path, MEMPROF_POOL_INIT_SYMBOL);
	memcpy(&init, &sym, sizeof init);
	*ops = init(MEMPROF_POOL_ABI_MAJOR);
	if (!*ops)
		return mp_err(err, MP_EFORMAT,
		              "plugin '%s' (%s) refused to load: %s(%u) returned NULL (it does not "
		              "support pool ABI %u.%u)",
		              stem, path, MEMPROF_POOL_INIT_SYMBOL, MEMPROF_POOL_ABI_MAJOR,
		              MEMPROF_POOL_ABI_MAJOR, MEMPROF_POOL_ABI_MINOR);
	return 0;
}

/* Load the file at path; want_name, when not NULL, is the name it was found by. */
static int load_file(const char *path, const char *want_name, struct mp_pool_plugin **out,
                     struct mp_error *err)
{
	const struct memprof_pool_ops *ops = NULL;
	struct mp_pool_plugin *p;
	char stem[256];
	struct stat st;
	size_t n;
	void *dl;
	int rc;

	*out = NULL;
	stem_of(path, stem, sizeof stem);
	if (stat(path, &st) != 0)
		return mp_err(err, MP_EIO, "cannot load pool plugin '%s': %s", path,
		              strerror(errno));
	if (S_ISDIR(st.st_mode))
		return mp_err(err, MP_EIO, "cannot load pool plugin '%s': it is a directory", path);
	dlerror();
	if (!(dl = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		const char *why = dlerror();
		why = why ? why : "dlopen failed";
		return mp_err(err, MP_EIO, "cannot load pool plugin '%s': %s%s", path, why,
		              dlopen_hint(why));
	}
	if ((rc = call_init(dl, stem, path, &ops, err)) != 0 ||
	    (rc = check_header(ops, stem, path, err)) != 0)
		goto fail;
	rc = MP_ENOMEM;
	if (!(p = calloc(1, sizeof *p)) || !(p->path = strdup(path))) {
		free(p);
		mp_err(err, rc, "out of memory loading pool plugin '%s'", path);
		goto fail;
	}
	n = ops->struct_size < sizeof p->ops ? ops->struct_size : sizeof p->ops;
	memcpy(&p->ops, ops, n); /* calloc zeroed the fields the plugin predates */
	if (!p->ops.description)
		p->ops.description = "";
	p->dl = dl;
	if ((rc = check_ops(&p->ops, stem, path, want_name, err)) != 0) {
		mp_loader_close(p);
		return rc;
	}
	*out = p;
	return 0;
fail:
	dlclose(dl);
	return rc;
}

/* --- the interface ---------------------------------------------------------------------- */

/* The closest NAME of the NAME.so files in the search path to name (a typo), copied to buf, or
 * NULL. */
static const char *closest_pool(const char *name, const struct search_path *sp, char *buf,
                                size_t size)
{
	char *stems[256];
	size_t n = 0;
	const char *best;

	for (size_t i = 0; i < sp->n; i++) {
		DIR *d = opendir(sp->dirs[i]);
		struct dirent *de;

		while (d && (de = readdir(d)) && n < sizeof stems / sizeof stems[0]) {
			size_t len = strlen(de->d_name);

			if (len > 3 && strcmp(de->d_name + len - 3, ".so") == 0 &&
			    (stems[n] = strndup(de->d_name, len - 3)))
				n++;
		}
		if (d)
			closedir(d);
	}
	best = mp_suggest(name, (const char *const *)stems, n);
	if (best)
		snprintf(buf, size, "%s", best);
	for (size_t i = 0; i < n; i++)
		free(stems[i]);
	return best ? buf : NULL;
}

static int not_found(const char *name, const struct search_path *sp, struct mp_error *err)
{
	char dirs[700] = "", guess[256], mean[300] = "";
	size_t len = 0;

	for (size_t i = 0; i < sp->n && len < sizeof dirs; i++)
		len += (size_t)snprintf(dirs + len, sizeof dirs - len, "%s%s", i ? ", " : "",
		                        sp->dirs[i]);
	if (closest_pool(name, sp, guess, sizeof guess))
		snprintf(mean, sizeof mean, "did you mean '%s'? ", guess);
	return mp_err(err, MP_EINVAL,
	              "cannot find pool '%s': %sno file %s.so in %s\nhint: 'memprof replay "
	              "--list-pools' lists the pools found; --plugin-dir=DIR or "
	              "MEMPROF_PLUGIN_PATH adds directories, --pool=PATH loads a file",
	              name, mean, name, sp->n ? dirs : "(no plugin directories)");
}

int mp_loader_open(const char *name, const char *plugin_dir, struct mp_pool_plugin **out,
                   struct mp_error *err)
{
	struct search_path sp;
	char path[PATH_MAX];
	struct stat st;
	int rc;

	*out = NULL;
	if (name && strchr(name, '/'))
		return load_file(name, NULL, out, err);
	if (!valid_pool_name(name))
		return mp_err(
		        err, MP_EINVAL,
		        "invalid pool name '%s': %s\nhint: to load a file give its path, as in "
		        "--pool=./%s",
		        name ? name : "", NAME_RULE, name && *name ? name : "mypool.so");
	if ((rc = path_build(&sp, plugin_dir, err)) != 0)
		return rc;
	for (size_t i = 0; i < sp.n; i++) {
		snprintf(path, sizeof path, "%s/%s.so", sp.dirs[i], name);
		if (stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR)) {
			rc = load_file(path, name, out, err);
			path_free(&sp);
			return rc;
		}
	}
	rc = not_found(name, &sp, err);
	path_free(&sp);
	return rc;
}

void mp_loader_close(struct mp_pool_plugin *p)
{
	if (!p)
		return;
	if (p->dl)
		dlclose(p->dl);
	free(p->path);
	free(p);
}

/* --- listing ------------------------------------------------------------------------------ */

struct listing {
	struct mp_pool_plugin **found;
	size_t n_found, cap_found;
	char **seen; /* every stem met so far: the first file of a name hides later ones */
	size_t n_seen, cap_seen;
};

/* 1 when stem was met before, 0 when it is new (now recorded), MP_ENOMEM. */
static int seen_before(struct listing *l, const char *stem)
{
	for (size_t i = 0; i < l->n_seen; i++)
		if (strcmp(l->seen[i], stem) == 0)
			return 1;
	if (l->n_seen == l->cap_seen) {
		char **grown = realloc(l->seen, (l->cap_seen * 2 + 8) * sizeof *grown);
		if (!grown)
			return MP_ENOMEM;
		l->seen = grown;
		l->cap_seen = l->cap_seen * 2 + 8;
	}
	if (!(l->seen[l->n_seen] = strdup(stem)))
		return MP_ENOMEM;
	l->n_seen++;
	return 0;
}

static int keep(struct listing *l, struct mp_pool_plugin *p)
{
	if (l->n_found == l->cap_found) {
		struct mp_pool_plugin **grown =
		        realloc(l->found, (l->cap_found * 2 + 8) * sizeof *grown);
		if (!grown) {
			mp_loader_close(p);
			return MP_ENOMEM;
		}
		l->found = grown;
		l->cap_found = l->cap_found * 2 + 8;
	}
	l->found[l->n_found++] = p;
	return 0;
}

/* Every NAME.so of one directory not hidden by an earlier one; broken files are skipped. */
static int list_dir(struct listing *l, const char *dir)
{
	char stem[256], path[PATH_MAX];
	struct mp_pool_plugin *p;
	struct mp_error ignored;
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = 0, seen = 0;

	if (!d)
		return 0;
	while (rc == 0 && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len <= 3 || strcmp(de->d_name + len - 3, ".so") != 0)
			continue;
		stem_of(de->d_name, stem, sizeof stem);
		if (!valid_pool_name(stem))
			continue;
		if ((seen = seen_before(l, stem)) != 0) {
			rc = seen < 0 ? seen : 0;
			continue;
		}
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (load_file(path, stem, &p, &ignored) == 0)
			rc = keep(l, p);
	}
	closedir(d);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	const struct mp_pool_plugin *const *pa = a, *const *pb = b;
	return strcmp((*pa)->ops.name, (*pb)->ops.name);
}

int mp_loader_list(const char *plugin_dir, struct mp_pool_plugin ***out, size_t *n,
                   struct mp_error *err)
{
	struct listing l = {0};
	struct search_path sp;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = path_build(&sp, plugin_dir, err)) != 0)
		return rc;
	for (size_t i = 0; i < sp.n && rc == 0; i++)
		rc = list_dir(&l, sp.dirs[i]);
	path_free(&sp);
	for (size_t i = 0; i < l.n_seen; i++)
		free(l.seen[i]);
	free(l.seen);
	if (rc != 0) {
		mp_loader_free_list(l.found, l.n_found);
		return mp_err(err, MP_ENOMEM, "out of memory listing the pool plugins");
	}
	if (l.n_found)
		qsort(l.found, l.n_found, sizeof *l.found, by_name);
	*out = l.found;
	*n = l.n_found;
	return 0;
}

void mp_loader_free_list(struct mp_pool_plugin **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mp_loader_close(list[i]);
	free(list);
}
