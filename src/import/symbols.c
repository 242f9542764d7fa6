/*
 * import/symbols.c - offline symbolisation of recorded return addresses
 * with libdwfl: each module reported to one Dwfl at its recorded bias when
 * a pc first falls in it, names from the symbol table, file:line from DWARF
 * when the file has it.  Never prints; a module it cannot use is remembered
 * and its frames are left as addresses.
 */
#include "import/symbols.h"

#include <ctype.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/array.h"
#include "util/intmap.h"

enum { MOD_UNOPENED = 0, MOD_OK = 1, MOD_UNUSABLE = -1 };

struct sym_module {
	char *path;
	char *build_id; /* hex, NULL when not recorded */
	uint64_t base, start, end;
	int state;
	int is_tool;
	Dwfl_Module *mod;
};

struct sym_frame {
	char *name, *file;
	int64_t line;
	int is_tool;
};

struct mp_symbols {
	Dwfl *dwfl; /* made on first use */
	struct sym_module *modules;
	size_t n_modules, cap_modules;
	struct sym_frame *frames; /* cache: frame_of maps pc -> index + 1 */
	size_t n_frames, cap_frames;
	struct mp_intmap frame_of;
	int n_unusable;
	const char *unusable_path; /* the first module that could not be used */
	char unusable_why[256];
};

static char *debuginfo_path; /* NULL: libdw's default (.debug, /usr/lib/debug) */

static const Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = dwfl_offline_section_address,
        .debuginfo_path = &debuginfo_path,
};

struct mp_symbols *mp_symbols_new(void)
{
	struct mp_symbols *s = calloc(1, sizeof(*s));

	if (s)
		mp_intmap_init(&s->frame_of);
	return s;
}

void mp_symbols_free(struct mp_symbols *s)
{
	size_t i;

	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (i = 0; i < s->n_modules; i++) {
		free(s->modules[i].path);
		free(s->modules[i].build_id);
	}
	for (i = 0; i < s->n_frames; i++) {
		free(s->frames[i].name);
		free(s->frames[i].file);
	}
	free(s->modules);
	free(s->frames);
	mp_intmap_free(&s->frame_of);
	free(s);
}

/* The profiler's and the driver's own libraries (libcudart is the program's). */
static int tool_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "libmemprof-inject", 17) == 0 || strncmp(base, "libcupti", 8) == 0 ||
	       strncmp(base, "libcuda.so", 10) == 0;
}

int mp_symbols_add_module(struct mp_symbols *s, const char *path, uint64_t base, uint64_t start,
                          uint64_t end, const char *build_id)
{
	struct sym_module *m;

	if (mp_array_reserve((void **)&s->modules, &s->cap_modules, s->n_modules + 1,
	                     sizeof(*s->modules)) < 0)
		return MP_ENOMEM;
	m = &s->modules[s->n_modules];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	m->build_id = build_id && *build_id ? strdup(build_id) : NULL;
	if (!m->path || (build_id && *build_id && !m->build_id)) {
		free(m->path);
		free(m->build_id);
		return MP_ENOMEM;
	}
	m->base = base;
	m->start = start;
	m->end = end;
	m->is_tool = tool_path(path);
	s->n_modules++;
	return 0;
}

/* Does the module's file carry the recorded build id?  Its own, in hex, into have. */
static int same_build_id(Dwfl_Module *mod, const char *want, char *have, size_t have_size)
{
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	size_t i, n_bytes;
	int n;

	dwfl_module_getelf(mod, &bias); /* loads the ELF so the id can be read */
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	have[0] = '\0';
	if (n <= 0)
		return 0;
	n_bytes = (size_t)n < (have_size - 1) / 2 ? (size_t)n : (have_size - 1) / 2;
	for (i = 0; i < n_bytes; i++)
		snprintf(have + 2 * i, 3, "%02x", bits[i]);
	if (strlen(want) != 2 * (size_t)n)
		return 0;
	for (i = 0; want[i]; i++)
		if (tolower((unsigned char)want[i]) != have[i])
			return 0;
	return 1;
}

static void unusable(struct mp_symbols *s, struct sym_module *m, const char *why)
{
	m->state = MOD_UNUSABLE;
	if (m->is_tool)
		return; /* the driver's and profiler's frames are left out anyway */
	if (s->n_unusable++ == 0) {
		s->unusable_path = m->path;
		snprintf(s->unusable_why, sizeof(s->unusable_why), "%s", why);
	}
}

/* Report m to the Dwfl, checking its file is there and is the one recorded. */
static void open_module(struct mp_symbols *s, struct sym_module *m)
{
	char have[130], why[200];
	struct stat st;

	if (access(m->path, R_OK) != 0 || stat(m->path, &st) != 0) {
		unusable(s, m, strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode)) { /* a device or a FIFO named in a spool: never open it */
		unusable(s, m, "not a regular file");
		return;
	}
	if (!s->dwfl && !(s->dwfl = dwfl_begin(&callbacks))) {
		unusable(s, m, dwfl_errmsg(-1));
		return;
	}
	dwfl_report_begin_add(s->dwfl);
	m->mod = dwfl_report_elf(s->dwfl, m->path, m->path, -1, m->base, false);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (!m->mod) {
		unusable(s, m, dwfl_errmsg(-1));
		return;
	}
	if (m->build_id && !same_build_id(m->mod, m->build_id, have, sizeof(have))) {
		snprintf(why, sizeof(why),
		         "its build id is %s, not %s as recorded (the file changed since the run)",
		         have[0] ? have : "missing", m->build_id);
		unusable(s, m, why);
		return;
	}
	m->state = MOD_OK;
}

static struct sym_module *module_of(struct mp_symbols *s, uint64_t pc)
{
	size_t i;

	for (i = 0; i < s->n_modules; i++)
		if (pc >= s->modules[i].start && pc < s->modules[i].end)
			return &s->modules[i];
	return NULL;
}

/* Resolve pc into f (strings malloc'd). */
static int resolve(struct mp_symbols *s, uint64_t pc, struct sym_frame *f)
{
	struct sym_module *m = module_of(s, pc);
	const char *name = NULL, *file = NULL;
	char addr[32];
	int line = 0;

	if (m && m->state == MOD_UNOPENED)
		open_module(s, m);
	if (m && m->state == MOD_OK) {
		/* a return address points after the call: look up the call itself */
		Dwfl_Line *l = dwfl_module_getsrc(m->mod, pc - 1);

		name = dwfl_module_addrname(m->mod, pc - 1);
		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	}
	if (!file)
		line = 0;
	snprintf(addr, sizeof(addr), "0x%" PRIx64, m ? pc - m->base : pc);
	f->name = strdup(name ? name : addr);
	f->file = strdup(file ? file : m ? m->path : "");
	f->line = line;
	f->is_tool = m && m->is_tool;
	if (!f->name || !f->file) {
		free(f->name);
		free(f->file);
		return MP_ENOMEM;
	}
	return 0;
}

int mp_symbols_frame(struct mp_symbols *s, uint64_t pc, struct memprof_frame *f, int *is_tool)
{
	struct sym_frame *c;
	uint64_t index;
	int rc;

	if (!mp_intmap_get(&s->frame_of, pc, &index)) {
		if (mp_array_reserve((void **)&s->frames, &s->cap_frames, s->n_frames + 1,
		                     sizeof(*s->frames)) < 0)
			return MP_ENOMEM;
		if ((rc = resolve(s, pc, &s->frames[s->n_frames])) < 0)
			return rc;
		index = ++s->n_frames;
		if (mp_intmap_put(&s->frame_of, pc, index) < 0)
			return MP_ENOMEM;
	}
	c = &s->frames[index - 1];
	f->name = c->name;
	f->file = c->file;
	f->line = c->line;
	*is_tool = c->is_tool;
	return 0;
}

int mp_symbols_n_unusable(const struct mp_symbols *s, const char **path, const char **why)
{
	*path = s->n_unusable ? s->unusable_path : NULL;
	*why = s->n_unusable ? s->unusable_why : NULL;
	return s->n_unusable;
}
