/*
 * capture/stacks.c - host call stacks at allocation calls: raw return
 * addresses from glibc backtrace(), the library's own and CUPTI's innermost
 * frames dropped, interned in the spool's stack table.  Symbolised later by
 * the CLI, never here.  Sampled mode keeps one call in N per thread.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <string.h>

#include "capture/inject_internal.h"

#define SKIP_SLACK 16 /* frames of ours and CUPTI's above the application's */

static int stacks_mode = MP_STACKS_OFF;
static uint32_t sample_every = 16;
static uint32_t max_depth = 32;

/* Address ranges whose innermost frames are dropped: this library, libcupti. */
struct range {
	uintptr_t lo, hi;
};
static struct range skip[2];

static __thread uint32_t tl_calls;

struct find_ctx {
	uintptr_t addr;
	struct range *out;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct find_ctx *c = data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (s < lo)
			lo = s;
		if (s + ph->p_memsz > hi)
			hi = s + ph->p_memsz;
	}
	if (c->addr >= lo && c->addr < hi) {
		c->out->lo = lo;
		c->out->hi = hi;
		return 1;
	}
	return 0;
}

static void range_of(const void *addr, struct range *out)
{
	struct find_ctx c = {(uintptr_t)addr, out};
	out->lo = out->hi = 0;
	if (addr)
		dl_iterate_phdr(find_module, &c);
}

void mp_stacks_init(int mode, uint32_t sample, uint32_t depth)
{
	stacks_mode = mode;
	sample_every = sample ? sample : 1;
	max_depth = depth > MP_SPOOL_MAX_STACK_DEPTH ? MP_SPOOL_MAX_STACK_DEPTH : depth;
	if (max_depth == 0)
		max_depth = 1;
	range_of((const void *)(uintptr_t)&mp_stacks_capture, &skip[0]);
	void *cupti_fn;
	memcpy(&cupti_fn, &mp_cupti.GetVersion, sizeof cupti_fn);
	range_of(cupti_fn, &skip[1]);
	if (mode != MP_STACKS_OFF) {
		/* The first backtrace() loads libgcc_s: do it now, not inside a callback. */
		void *warm[4];
		backtrace(warm, 4);
	}
}

static int skipped(uintptr_t pc)
{
	for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
		if (pc >= skip[i].lo && pc < skip[i].hi)
			return 1;
	return 0;
}

uint32_t mp_stacks_capture(struct mp_spool_writer *w)
{
	if (!w || stacks_mode == MP_STACKS_OFF)
		return 0;
	if (stacks_mode == MP_STACKS_SAMPLED && (tl_calls++ % sample_every) != 0)
		return 0;
	void *frames[MP_SPOOL_MAX_STACK_DEPTH + SKIP_SLACK];
	int n = backtrace(frames, (int)(max_depth + SKIP_SLACK));
	int first = 0;
	while (first < n && skipped((uintptr_t)frames[first]))
		first++;
	uint64_t pcs[MP_SPOOL_MAX_STACK_DEPTH];
	uint32_t depth = 0;
	for (int i = first; i < n && depth < max_depth; i++)
		pcs[depth++] = (uint64_t)(uintptr_t)frames[i];
	return depth ? mp_spool_stack(w, pcs, depth) : 0;
}
