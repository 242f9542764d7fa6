/*
 * replay/backend_sim.c - the sim backend: accounting only, no memory.
 * Reservations are synthetic, 512-aligned address ranges from a bump
 * pointer that starts at 1 TiB and steps back when the newest range is
 * released; nothing is ever dereferenced, so it is as fast as a counter.
 * Virtual ranges and maps are checked for bounds and alignment only.
 */
#include <stdlib.h>

#include "replay/backend.h"

#define SIM_BASE        (1ull << 40)
#define SIM_ALIGN       512ull
#define SIM_GRANULARITY (2ull << 20)

struct mp_backend {
	uint64_t next_addr;
	struct mp_error *err;
};

static int sim_open(const struct mp_backend_options *o, struct mp_backend **out)
{
	struct mp_backend *b = calloc(1, sizeof *b);

	*out = NULL;
	if (!b)
		return mp_err(o->err, MP_ENOMEM, "out of memory");
	b->next_addr = SIM_BASE;
	b->err = o->err;
	*out = b;
	return 0;
}

static void sim_close(struct mp_backend *b)
{
	free(b);
}

static uint64_t round_up(uint64_t n, uint64_t a)
{
	return (n + a - 1) / a * a;
}

static int sim_range(struct mp_backend *b, uint64_t size, uint64_t align,
                     struct memprof_region *out)
{
	uint64_t addr = round_up(b->next_addr, align), span = round_up(size ? size : 1, SIM_ALIGN);

	if (addr < b->next_addr || span < size || addr + span < addr)
		return MEMPROF_POOL_ENOMEM; /* 2^64 of synthetic address space used up */
	out->addr = addr;
	out->size_bytes = size;
	out->token = span;
	b->next_addr = addr + span;
	return MEMPROF_POOL_OK;
}

static void sim_unrange(struct mp_backend *b, const struct memprof_region *r)
{
	if (r->addr + r->token == b->next_addr)
		b->next_addr = r->addr;
}

static int sim_reserve(struct mp_backend *b, uint64_t size, struct memprof_region *out)
{
	return sim_range(b, size, SIM_ALIGN, out);
}

static int sim_release(struct mp_backend *b, const struct memprof_region *r)
{
	sim_unrange(b, r);
	return MEMPROF_POOL_OK;
}

static int sim_touch(struct mp_backend *b, uint64_t addr, int value, uint64_t n, uint64_t stream)
{
	(void)b, (void)addr, (void)value, (void)n, (void)stream;
	return MEMPROF_POOL_OK;
}

static int sim_copy(struct mp_backend *b, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream)
{
	(void)b, (void)dst, (void)src, (void)n, (void)stream;
	return MEMPROF_POOL_OK;
}

static int sim_va_reserve(struct mp_backend *b, uint64_t size, struct memprof_region *out)
{
	return sim_range(b, size, SIM_GRANULARITY, out);
}

static int sim_map(struct mp_backend *b, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	(void)b;
	if (off % SIM_GRANULARITY || n % SIM_GRANULARITY || n > va->size_bytes ||
	    off > va->size_bytes - n)
		return MEMPROF_POOL_EINVAL;
	return MEMPROF_POOL_OK;
}

static int sim_sync(struct mp_backend *b, uint64_t stream)
{
	(void)b, (void)stream;
	return MEMPROF_POOL_OK;
}

const struct mp_backend_ops mp_backend_sim = {
        .name = "sim",
        .measures_time = 0,
        .instant = 1,
        .granularity_bytes = SIM_GRANULARITY,
        .open = sim_open,
        .close = sim_close,
        .reserve = sim_reserve,
        .release = sim_release,
        .memset = sim_touch,
        .copy = sim_copy,
        .va_reserve = sim_va_reserve,
        .va_release = sim_release,
        .map = sim_map,
        .unmap = sim_map,
        .sync = sim_sync,
};
