/*
 * tests/unit/test_loader.c - the plugin loader (replay/loader.c): loading
 * by path and by name, the search order, listing, and each refusal with its
 * exact message, against the built direct pool and the plugins under
 * tests/plugins/ that are broken on purpose.  Temporary plugin directories
 * hold copies and symlinks of those under other names.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_host.h"
#include "replay/loader.h"

#define HOST_VERSION_FMT "%d.%d"
#define HOST_VERSION     MEMPROF_POOL_ABI_MAJOR, MEMPROF_POOL_ABI_MINOR

static char tmp[64];
static char expect[2048];

/* --- fixtures ------------------------------------------------------------------ */

static const char *plugin(const char *name)
{
	static char path[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof path[k], "%s/%s.so", TEST_PLUGINS, name);
	return path[k];
}

/* A path under the temporary directory (rotating buffers, printf-style). */
static const char *at(const char *fmt, ...)
{
	static char path[8][512];
	static int k;
	char rel[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof rel, fmt, ap);
	va_end(ap);
	k = (k + 1) % 8;
	snprintf(path[k], sizeof path[k], "%s/%s", tmp, rel);
	return path[k];
}

static void set_plugin_path(const char *fmt, ...)
{
	char value[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof value, fmt, ap);
	va_end(ap);
	cr_assert_eq(setenv("MEMPROF_PLUGIN_PATH", value, 1), 0);
}

static void make_dir(const char *path)
{
	cr_assert_eq(mkdir(path, 0755), 0, "mkdir %s", path);
}

static void copy_file(const char *src, const char *dst)
{
	char buf[65536];
	int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	cr_assert(in >= 0 && out >= 0, "copy %s to %s", src, dst);
	while ((n = read(in, buf, sizeof buf)) > 0)
		cr_assert_eq(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void setup(void)
{
	strcpy(tmp, "/tmp/memprof-test-loader.XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	unsetenv("MEMPROF_PLUGIN_PATH");
}

static void teardown(void)
{
	if (tmp[0])
		nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(loader, .init = setup, .fini = teardown);

/* Open name (or path) from plugin_dir; it must fail, leaving *out NULL. */
static const char *refusal(const char *name, const char *plugin_dir, int code)
{
	static struct mp_error err;
	struct mp_pool_plugin *p = (void *)1;

	mp_err_clear(&err);
	cr_assert_eq(mp_loader_open(name, plugin_dir, &p, &err), code, "loading '%s': %s",
	             name ? name : "(NULL)", err.msg);
	cr_assert_null(p);
	return err.msg;
}

static struct mp_pool_plugin *loaded(const char *name, const char *plugin_dir)
{
	struct mp_error err = {0};
	struct mp_pool_plugin *p = NULL;

	cr_assert_eq(mp_loader_open(name, plugin_dir, &p, &err), 0, "loading '%s': %s", name,
	             err.msg);
	cr_assert_not_null(p);
	return p;
}

/* create, one alloc and its free, destroy: the pool runs through the host's copy. */
static void exercise(const struct mp_pool_plugin *p)
{
	struct memprof_pool_request req = {
	        .struct_size = sizeof req, .size_bytes = 4096, .requested_bytes = 4000};
	struct memprof_pool_block b;
	struct memprof_pool *pool;
	static struct fake_host fh;

	fake_host_init(&fh, 0);
	cr_assert_eq(p->ops.create(&fh.host, NULL, 0, &pool), 0);
	cr_assert_eq(p->ops.alloc(pool, &req, &b), 0);
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(fh.reserved_bytes, 4096);
	cr_assert_eq(b.size_bytes, 4096);
	cr_assert_eq(p->ops.free(pool, &b, 0), 0);
	cr_assert_eq(fh.reserved_bytes, 0);
	p->ops.destroy(pool);
}

/* --- loading by path ----------------------------------------------------------------- */

Test(loader, direct_by_path_loads_and_runs)
{
	struct mp_pool_plugin *p = loaded(DIRECT_PLUGIN, NULL);

	cr_assert_str_eq(p->path, DIRECT_PLUGIN);
	cr_assert_not_null(p->dl);
	cr_assert_str_eq(p->ops.name, "direct");
	cr_assert_eq(p->ops.abi_major, MEMPROF_POOL_ABI_MAJOR);
	cr_assert_eq(p->ops.struct_size, sizeof(struct memprof_pool_ops));
	cr_assert_null(p->ops.stats);
	cr_assert_null(p->ops.plan);
	exercise(p);
	mp_loader_close(p);
}

Test(loader, future_minor_loads_with_its_tail_ignored)
{
	struct mp_pool_plugin *p = loaded(plugin("future_minor"), NULL);

	cr_assert_str_eq(p->ops.name, "future");
	cr_assert_eq(p->ops.abi_minor, MEMPROF_POOL_ABI_MINOR + 1);
	/* The plugin's own size is kept; the copy is the host's size. */
	cr_assert_eq(p->ops.struct_size, sizeof(struct memprof_pool_ops) + 16);
	cr_assert_not_null(p->ops.stats);
	cr_assert_null(p->ops.plan);
	exercise(p);
	mp_loader_close(p);
}

/* --- refusals, each with its exact message -------------------------------------------- */

Test(loader, refuses_a_newer_major)
{
	const char *path = plugin("broken_major");

	snprintf(expect, sizeof expect,
	         "plugin 'broken_major' (%s) was built for pool ABI %d.0; this memprof speaks "
	         "%d.%d\nhint: rebuild it against this memprof's <memprof/pool.h>",
	         path, MEMPROF_POOL_ABI_MAJOR + 1, HOST_VERSION);
	cr_assert_str_eq(refusal(path, NULL, MP_EFORMAT), expect);
}

Test(loader, refuses_an_oversized_struct_with_the_same_minor)
{
	const char *path = plugin("broken_oversize");

	snprintf(expect, sizeof expect,
	         "plugin 'broken_oversize' (%s) has a corrupt header: pool ABI " HOST_VERSION_FMT
	         " with a %zu-byte ops struct, larger than the %zu bytes of pool "
	         "ABI " HOST_VERSION_FMT " this memprof speaks",
	         path, HOST_VERSION, sizeof(struct memprof_pool_ops) + 16,
	         sizeof(struct memprof_pool_ops), HOST_VERSION);
	cr_assert_str_eq(refusal(path, NULL, MP_EFORMAT), expect);
}

Test(loader, refuses_a_struct_smaller_than_abi_1_0)
{
	const char *path = plugin("broken_small");

	/* Pool ABI 1.0's ops: a 4+2+2 byte header, then 3 pointers and 6 callbacks. */
	snprintf(expect, sizeof expect,
	         "plugin 'broken_small' (%s) has a corrupt header: pool ABI " HOST_VERSION_FMT
	         " with a 16-byte ops struct, smaller than the %zu bytes of pool ABI 1.0; this "
	         "memprof speaks " HOST_VERSION_FMT,
	         path, HOST_VERSION, 8 + 9 * sizeof(void *), HOST_VERSION);
	cr_assert_str_eq(refusal(path, NULL, MP_EFORMAT), expect);
}

Test(loader, refuses_an_init_returning_null)
{
	const char *path = plugin("broken_null");

	snprintf(expect, sizeof expect,
	         "plugin 'broken_null' (%s) refused to load: memprof_pool_init(%d) returned NULL "
	         "(it does not support pool ABI " HOST_VERSION_FMT ")",
	         path, MEMPROF_POOL_ABI_MAJOR, HOST_VERSION);
	cr_assert_str_eq(refusal(path, NULL, MP_EFORMAT), expect);
}

Test(loader, refuses_missing_callbacks)
{
	const char *path = plugin("broken_nocb");

	snprintf(expect, sizeof expect,
	         "plugin 'broken_nocb' (%s) lacks required callbacks: free, destroy", path);
	cr_assert_str_eq(refusal(path, NULL, MP_EFORMAT), expect);
}

Test(loader, refuses_a_file_without_the_init_symbol)
{
	const char *path = plugin("broken_nosym");

	snprintf(expect, sizeof expect,
	         "not a memprof pool plugin '%s': it has no symbol memprof_pool_init\nhint: define "
	         "it with MEMPROF_POOL_DEFINE (memprof-plugin(7))",
	         path);
	cr_assert_str_eq(refusal(path, NULL, MP_EFORMAT), expect);
}

Test(loader, refuses_an_invalid_pool_name)
{
	const char *path = plugin("broken_name");

	snprintf(expect, sizeof expect,
	         "plugin 'broken_name' (%s) has an invalid pool name 'Bad Name': a pool name is 1 "
	         "to 32 lowercase letters, digits, '-' or '_', starting with a letter, and not "
	         "'all'",
	         path);
	cr_assert_str_eq(refusal(path, NULL, MP_EFORMAT), expect);
}

Test(loader, refuses_a_file_that_is_not_elf)
{
	const char *path = at("junk.so");
	const char *msg;

	write_text(path, "this is a text file named like a plugin, and long enough for a header\n");
	msg = refusal(path, NULL, MP_EIO);
	snprintf(expect, sizeof expect, "cannot load pool plugin '%s': ", path);
	cr_assert(strncmp(msg, expect, strlen(expect)) == 0, "%s", msg);
#ifdef __GLIBC__
	snprintf(expect, sizeof expect,
	         "cannot load pool plugin '%s': %s: invalid ELF header\nhint: this is not a shared "
	         "object; build a plugin with 'cc -shared -fPIC' (memprof-plugin(7))",
	         path, path);
	cr_assert_str_eq(msg, expect);
#endif
}

Test(loader, refuses_a_plugin_using_a_symbol_nothing_provides)
{
	const char *path = plugin("broken_undef");
	const char *msg = refusal(path, NULL, MP_EIO);

	snprintf(expect, sizeof expect, "cannot load pool plugin '%s': ", path);
	cr_assert(strncmp(msg, expect, strlen(expect)) == 0, "%s", msg);
	cr_assert(strstr(msg, "memprof_no_such_service"), "%s", msg);
	cr_assert(strstr(msg, "\nhint: a plugin may use only libc and what it links itself, never "
	                      "memprof's own symbols (memprof-plugin(7))"),
	          "%s", msg);
#ifdef __GLIBC__
	snprintf(expect, sizeof expect,
	         "cannot load pool plugin '%s': %s: undefined symbol: "
	         "memprof_no_such_service\nhint: "
	         "a plugin may use only libc and what it links itself, never memprof's own symbols "
	         "(memprof-plugin(7))",
	         path, path);
	cr_assert_str_eq(msg, expect);
#endif
}

Test(loader, refuses_a_missing_path_and_a_directory)
{
	snprintf(expect, sizeof expect, "cannot load pool plugin '%s': No such file or directory",
	         at("nope/x.so"));
	cr_assert_str_eq(refusal(at("nope/x.so"), NULL, MP_EIO), expect);
	make_dir(at("d.so"));
	snprintf(expect, sizeof expect, "cannot load pool plugin '%s': it is a directory",
	         at("d.so"));
	cr_assert_str_eq(refusal(at("d.so"), NULL, MP_EIO), expect);
}

Test(loader, refuses_names_that_cannot_be_pool_names)
{
	static const char *bad[] = {"",
	                            "Direct",
	                            "direct.so",
	                            "all",
	                            "9lives",
	                            "a b",
	                            "abcdefghijklmnopqrstuvwxyz0123456"};

	cr_assert_str_eq(
	        refusal("direct.so", NULL, MP_EINVAL),
	        "invalid pool name 'direct.so': a pool name is 1 to 32 lowercase letters, "
	        "digits, '-' or '_', starting with a letter, and not 'all'\nhint: to load a "
	        "file give its path, as in --pool=./direct.so");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		refusal(bad[i], tmp, MP_EINVAL);
	refusal(NULL, tmp, MP_EINVAL);
	/* 32 characters is still a name (and is then looked for). */
	refusal("abcdefghijklmnopqrstuvwxyz012345", tmp, MP_EINVAL);
	cr_assert(strstr(refusal("abcdefghijklmnopqrstuvwxyz012345", tmp, MP_EINVAL),
	                 "cannot find pool"));
}

/* --- the search order -------------------------------------------------------------------- */

Test(loader, not_found_names_every_directory_in_order)
{
	make_dir(at("a"));
	set_plugin_path("%s::%s", at("b"), at("c"));
	snprintf(expect, sizeof expect,
	         "cannot find pool 'mypool': no file mypool.so in %s, %s, %s%s%s\nhint: 'memprof "
	         "replay --list-pools' lists the pools found; --plugin-dir=DIR or "
	         "MEMPROF_PLUGIN_PATH adds directories, --pool=PATH loads a file",
	         at("a"), at("b"), at("c"), MEMPROF_PLUGIN_DIR[0] ? ", " : "", MEMPROF_PLUGIN_DIR);
	cr_assert_str_eq(refusal("mypool", at("a"), MP_EINVAL), expect);
}

/* A typo of a pool in the search path gets "did you mean"; a name like none gets no guess. */
Test(loader, a_typo_is_answered_with_the_closest_pool)
{
	const char *msg;

	make_dir(at("dir"));
	copy_file(DIRECT_PLUGIN, at("dir/direct.so"));
	copy_file(DIRECT_PLUGIN, at("dir/caching.so"));
	set_plugin_path("%s", at("dir"));
	msg = refusal("cachng", NULL, MP_EINVAL);
	cr_assert(
	        strstr(msg,
	               "cannot find pool 'cachng': did you mean 'caching'? no file cachng.so in "),
	        "%s", msg);
	msg = refusal("direc", NULL, MP_EINVAL);
	cr_assert(strstr(msg, "did you mean 'direct'?"), "%s", msg);
	msg = refusal("zzzzzz", NULL, MP_EINVAL);
	cr_assert_null(strstr(msg, "did you mean"), "%s", msg);
}

Test(loader, plugin_dir_beats_env_beats_the_rest)
{
	struct mp_pool_plugin *p;

	make_dir(at("dir"));
	make_dir(at("env1"));
	make_dir(at("env2"));
	copy_file(DIRECT_PLUGIN, at("dir/direct.so"));
	copy_file(DIRECT_PLUGIN, at("env2/direct.so"));
	cr_assert_eq(symlink(DIRECT_PLUGIN, at("env1/direct.so")), 0);

	/* Each directory of MEMPROF_PLUGIN_PATH in turn, empty entries skipped. */
	set_plugin_path(":%s:%s", at("env2"), at("env1"));
	p = loaded("direct", NULL);
	cr_assert_str_eq(p->path, at("env2/direct.so"));
	mp_loader_close(p);
	set_plugin_path("%s:%s:%s", at("env1"), at("env2"), at("env1"));
	p = loaded("direct", NULL);
	cr_assert_str_eq(p->path, at("env1/direct.so"));
	exercise(p);
	mp_loader_close(p);

	/* --plugin-dir comes first. */
	p = loaded("direct", at("dir"));
	cr_assert_str_eq(p->path, at("dir/direct.so"));
	exercise(p);
	mp_loader_close(p);

	/* A name with a '/' is a path, whatever the directories hold. */
	p = loaded(at("env2/direct.so"), at("dir"));
	cr_assert_str_eq(p->path, at("env2/direct.so"));
	mp_loader_close(p);
}

Test(loader, the_first_file_found_wins_even_when_broken)
{
	make_dir(at("dir"));
	make_dir(at("env"));
	copy_file(plugin("broken_major"), at("dir/direct.so"));
	copy_file(DIRECT_PLUGIN, at("env/direct.so"));
	setenv("MEMPROF_PLUGIN_PATH", at("env"), 1);
	snprintf(expect, sizeof expect,
	         "plugin 'direct' (%s) was built for pool ABI %d.0; this memprof speaks "
	         "%d.%d\nhint: "
	         "rebuild it against this memprof's <memprof/pool.h>",
	         at("dir/direct.so"), MEMPROF_POOL_ABI_MAJOR + 1, HOST_VERSION);
	cr_assert_str_eq(refusal("direct", at("dir"), MP_EFORMAT), expect);
}

Test(loader, a_file_found_by_name_must_declare_that_name)
{
	struct mp_pool_plugin *p;

	make_dir(at("dir"));
	copy_file(DIRECT_PLUGIN, at("dir/other.so"));
	snprintf(expect, sizeof expect,
	         "plugin 'other' (%s) declares the pool 'direct': a plugin found by name must "
	         "declare that name\nhint: rename the file direct.so, or load it by its path",
	         at("dir/other.so"));
	cr_assert_str_eq(refusal("other", at("dir"), MP_EFORMAT), expect);
	/* By its path it loads, under the name it declares. */
	p = loaded(at("dir/other.so"), NULL);
	cr_assert_str_eq(p->ops.name, "direct");
	mp_loader_close(p);
}

/* Run a copy of loader_probe from bin/ under the temporary directory. */
static void probe(const char *args, char *out, size_t size)
{
	char cmd[1024];
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", at("bin/loader_probe"), args);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	n = fread(out, 1, size - 1, f);
	out[n] = '\0';
	pclose(f);
}

Test(loader, plugins_libs_beside_the_executable_comes_last)
{
	char out[4096];

	make_dir(at("bin"));
	make_dir(at("bin/plugins"));
	make_dir(at("bin/plugins/.libs"));
	make_dir(at("env"));
	copy_file(LOADER_PROBE, at("bin/loader_probe"));
	copy_file(DIRECT_PLUGIN, at("bin/plugins/.libs/direct.so"));
	copy_file(plugin("future_minor"), at("bin/plugins/.libs/future.so"));
	copy_file(DIRECT_PLUGIN, at("env/direct.so"));

	/* Found beside the executable (resolved through /proc/self/exe)... */
	probe("open future", out, sizeof out);
	snprintf(expect, sizeof expect, "future %s\n", at("bin/plugins/.libs/future.so"));
	cr_assert_str_eq(out, expect);
	/* ...but after MEMPROF_PLUGIN_PATH, */
	setenv("MEMPROF_PLUGIN_PATH", at("env"), 1);
	probe("open direct", out, sizeof out);
	snprintf(expect, sizeof expect, "direct %s\n", at("env/direct.so"));
	cr_assert_str_eq(out, expect);
	/* and it is listed among the directories searched. */
	probe("open nosuch", out, sizeof out);
	snprintf(expect, sizeof expect, "no file nosuch.so in %s, %s%s%s\n", at("env"),
	         MEMPROF_PLUGIN_DIR, MEMPROF_PLUGIN_DIR[0] ? ", " : "", at("bin/plugins/.libs"));
	cr_assert(strstr(out, expect), "%s", out);
}

/* --- listing ---------------------------------------------------------------------------- */

/* The entries of a listing under the temporary directory, as "name path;" text. */
static void listing(const char *plugin_dir, char *out, size_t size)
{
	struct mp_pool_plugin **list;
	struct mp_error err = {0};
	size_t n, len = 0;

	cr_assert_eq(mp_loader_list(plugin_dir, &list, &n, &err), 0, "%s", err.msg);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			cr_assert(strcmp(list[i - 1]->ops.name, list[i]->ops.name) < 0,
			          "not sorted or not unique: '%s' then '%s'", list[i - 1]->ops.name,
			          list[i]->ops.name);
		if (strncmp(list[i]->path, tmp, strlen(tmp)) == 0)
			len += (size_t)snprintf(out + len, size - len, "%s %s;", list[i]->ops.name,
			                        list[i]->path + strlen(tmp) + 1);
	}
	mp_loader_free_list(list, n);
}

Test(loader, list_takes_the_first_of_each_name_sorted_skipping_broken_files)
{
	char out[4096];

	make_dir(at("a"));
	make_dir(at("b"));
	make_dir(at("c"));
	/* a: the search starts here. */
	copy_file(plugin("future_minor"), at("a/future.so"));
	copy_file(plugin("broken_major"), at("a/major.so"));
	copy_file(plugin("broken_nocb"), at("a/nocb.so"));
	copy_file(DIRECT_PLUGIN, at("a/other.so")); /* declares 'direct' */
	copy_file(DIRECT_PLUGIN, at("a/Upper.so"));
	write_text(at("a/junk.so"), "not a shared object at all, just some text in a file\n");
	write_text(at("a/README"), "not a plugin\n");
	/* b: direct for the first time; a second future, hidden by a's. */
	cr_assert_eq(symlink(DIRECT_PLUGIN, at("b/direct.so")), 0);
	copy_file(plugin("future_minor"), at("b/future.so"));
	/* c: everything hidden by a or b, the broken major too. */
	copy_file(DIRECT_PLUGIN, at("c/direct.so"));
	copy_file(DIRECT_PLUGIN, at("c/major.so"));

	set_plugin_path("%s:%s", at("b"), at("c"));
	listing(at("a"), out, sizeof out);
	cr_assert_str_eq(out, "direct b/direct.so;future a/future.so;");

	/* A broken first file of a name hides the good ones after it, as for --pool=NAME. */
	write_text(at("a/direct.so"), "broken\n");
	listing(at("a"), out, sizeof out);
	cr_assert_str_eq(out, "future a/future.so;");

	/* No directory holding anything: an empty list, not an error. */
	unsetenv("MEMPROF_PLUGIN_PATH");
	listing(at("nope"), out, sizeof out);
	cr_assert_str_eq(out, "");
}
