/*
 * capture/modules.c - the loaded modules (dl_iterate_phdr) as MP_SI_MODULE
 * items: path, load bias, PT_LOAD extent and GNU build id, so that stacks
 * can be symbolised offline.  Each module is written once; a rescan runs
 * when dlpi_adds moved, looked at no more than every 100 ms.
 */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture/inject_internal.h"

#define MAX_MODULES 4096
#define RESCAN_NS   (100 * 1000000LL)

struct seen {
	uint64_t base;
	uint64_t start;
};

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static struct seen seen[MAX_MODULES];
static size_t n_seen;
static uint32_t next_id = 1;
static _Atomic unsigned long long last_adds;
static _Atomic long long last_check_ns;

static int already_seen(uint64_t base, uint64_t start)
{
	for (size_t i = 0; i < n_seen; i++)
		if (seen[i].base == base && seen[i].start == start)
			return 1;
	return 0;
}

/* The GNU build id of a PT_NOTE segment in hex into hex; 0 when none. */
static int build_id_of(const struct dl_phdr_info *info, const ElfW(Phdr) * ph, char *hex, size_t n)
{
	const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
	size_t left = ph->p_memsz;
	while (left >= sizeof(ElfW(Nhdr))) {
		const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
		size_t name_sz = (nh->n_namesz + 3) & ~(size_t)3;
		size_t desc_sz = (nh->n_descsz + 3) & ~(size_t)3;
		size_t total = sizeof *nh + name_sz + desc_sz;
		if (total > left)
			return 0;
		const char *name = (const char *)(nh + 1);
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
			const unsigned char *d = (const unsigned char *)name + name_sz;
			size_t k = 0;
			for (uint32_t i = 0; i < nh->n_descsz && k + 3 <= n; i++, k += 2)
				snprintf(hex + k, 3, "%02x", d[i]);
			return k > 0;
		}
		p += total;
		left -= total;
	}
	return 0;
}

struct scan_ctx {
	struct mp_spool_writer *w;
	int n_new;
};

static void write_module(struct scan_ctx *c, const struct dl_phdr_info *info, uint64_t lo,
                         uint64_t hi, const char *build_id)
{
	char exe[4096];
	const char *path = info->dlpi_name;
	if (!path || !*path) {
		ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[k > 0 ? k : 0] = 0;
		path = exe;
	}
	struct mp_spool_module m;
	memset(&m, 0, sizeof m);
	m.head.type = MP_SI_MODULE;
	m.head.bytes = sizeof m;
	m.id = next_id++;
	m.path = mp_spool_cstring(c->w, path);
	m.base = info->dlpi_addr;
	m.start = lo;
	m.end = hi;
	m.build_id = build_id[0] ? mp_spool_cstring(c->w, build_id) : 0;
	if (mp_spool_append(c->w, &m, sizeof m) == 0)
		c->n_new++;
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct scan_ctx *c = data;
	uint64_t lo = UINT64_MAX, hi = 0;
	char build_id[256] = "";
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uint64_t s = info->dlpi_addr + ph->p_vaddr;
		lo = s < lo ? s : lo;
		hi = s + ph->p_memsz > hi ? s + ph->p_memsz : hi;
	}
	if (hi == 0 || already_seen(info->dlpi_addr, lo) || n_seen >= MAX_MODULES)
		return 0;
	/* Notes are read in place: only those inside the mapped segments. */
	for (int i = 0; i < info->dlpi_phnum && !build_id[0]; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t s = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_NOTE && s >= lo && s + ph->p_memsz <= hi &&
		    !build_id_of(info, ph, build_id, sizeof build_id))
			build_id[0] = 0;
	}
	seen[n_seen].base = info->dlpi_addr;
	seen[n_seen++].start = lo;
	write_module(c, info, lo, hi, build_id);
	return 0;
}

static int read_adds(struct dl_phdr_info *info, size_t size, void *data)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
		*(unsigned long long *)data = info->dlpi_adds;
	return 1; /* the first module is enough */
}

int mp_modules_scan(struct mp_spool_writer *w)
{
	if (!w)
		return 0;
	unsigned long long adds = 0;
	dl_iterate_phdr(read_adds, &adds);
	struct scan_ctx c = {w, 0};
	pthread_mutex_lock(&modules_lock);
	dl_iterate_phdr(scan_one, &c);
	last_adds = adds;
	pthread_mutex_unlock(&modules_lock);
	return c.n_new;
}

void mp_modules_maybe_rescan(struct mp_spool_writer *w)
{
	long long now = mp_capture_now();
	long long last = last_check_ns;
	if (now - last < RESCAN_NS)
		return;
	last_check_ns = now;
	unsigned long long adds = 0;
	dl_iterate_phdr(read_adds, &adds);
	if (adds != last_adds)
		mp_modules_scan(w);
}
