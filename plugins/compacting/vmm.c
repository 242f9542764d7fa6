/*
 * plugins/compacting/vmm.c - vmm mode, the zero-copy variant (PyTorch's
 * expandable segments): one virtual range reserved at the first request,
 * best fit inside it, and a count of live blocks per physical granule: a
 * granule is mapped when its first block arrives and unmapped when its last
 * one leaves, so a hole costs no memory once its granules are free.
 */
#include <stdlib.h>

#include "compacting.h"

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* The virtual range: the va-size option, else the capacity plus 1/8, else 80 GiB. */
static uint64_t va_size(const struct memprof_pool *p, uint64_t g)
{
	uint64_t cap = p->host->capacity_bytes, size = p->cfg.va_size_bytes;

	if (!size)
		size = cap ? cap + cap / 8 : 80ull << 30;
	if (size > CP_MAX_VA_BYTES)
		size = CP_MAX_VA_BYTES;
	return round_up(size, g);
}

static int reserve_range(struct memprof_pool *p)
{
	const struct memprof_pool_host *h = p->host;
	uint64_t g = h->granularity_bytes ? h->granularity_bytes : CP_CHUNK_ROUND_BYTES;
	uint64_t size = va_size(p, g);
	struct memprof_region r;
	int rc = h->va_reserve ? h->va_reserve(h->ctx, size, &r) : MEMPROF_POOL_ENOTSUP;

	if (rc != MEMPROF_POOL_OK) {
		h->log(h->ctx, MEMPROF_POOL_LOG_ERROR,
		       "cannot reserve %llu bytes of address space for mode=vmm (%s backend)",
		       (unsigned long long)size, h->backend ? h->backend : "?");
		p->vmm.reserved = -1;
		return rc == MEMPROF_POOL_ENOMEM ? MEMPROF_POOL_EFAULT : rc;
	}
	p->vmm.granule_bytes = g;
	p->vmm.n_granules = size / g;
	p->vmm.users = calloc(p->vmm.n_granules, sizeof *p->vmm.users);
	if (!p->vmm.users || !cp_arena_add_chunk(&p->arena, &r)) {
		h->va_release(h->ctx, &r);
		h->log(h->ctx, MEMPROF_POOL_LOG_ERROR, "out of host memory");
		p->vmm.reserved = -1;
		return MEMPROF_POOL_EFAULT;
	}
	p->vmm.reserved = 1;
	return MEMPROF_POOL_OK;
}

/* Maps (or unmaps) each run of unused granules in [first, last]; stops at a failure. */
static int each_unused_run(struct memprof_pool *p, uint64_t first, uint64_t last, int map,
                           uint64_t *stop)
{
	const struct memprof_pool_host *h = p->host;
	const struct memprof_region *va = &p->arena.chunks[0]->region;
	uint64_t g = p->vmm.granule_bytes;

	for (uint64_t i = first; i <= last; i++) {
		uint64_t end = i;
		int rc;

		if (p->vmm.users[i])
			continue;
		while (end + 1 <= last && !p->vmm.users[end + 1])
			end++;
		rc = map ? h->map(h->ctx, va, i * g, (end - i + 1) * g)
		         : h->unmap(h->ctx, va, i * g, (end - i + 1) * g);
		if (rc != MEMPROF_POOL_OK) {
			*stop = i;
			return rc;
		}
		if (map)
			p->st.chunks_mapped += end - i + 1;
		else
			p->st.chunks_unmapped += end - i + 1;
		p->vmm.mapped_bytes += map ? (end - i + 1) * g : 0;
		p->vmm.mapped_bytes -= map ? 0 : (end - i + 1) * g;
		i = end;
	}
	return MEMPROF_POOL_OK;
}

static void granules(const struct memprof_pool *p, const struct cp_seg *s, uint64_t *first,
                     uint64_t *last)
{
	uint64_t off = s->addr - p->arena.chunks[0]->region.addr, g = p->vmm.granule_bytes;

	*first = off / g;
	*last = (off + s->size_bytes - 1) / g;
}

int cp_vmm_alloc(struct memprof_pool *p, uint64_t size_bytes, struct cp_seg **out)
{
	struct cp_seg *f, *s;
	uint64_t first, last, stop;
	int rc;

	if (p->vmm.reserved < 0)
		return MEMPROF_POOL_EFAULT;
	if (!p->vmm.reserved && (rc = reserve_range(p)) != MEMPROF_POOL_OK)
		return rc;
	if (!(f = cp_index_fit(&p->arena, size_bytes)))
		return MEMPROF_POOL_ENOMEM; /* the virtual range is full */
	if (!(s = cp_arena_take(&p->arena, f, size_bytes))) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "out of host memory");
		return MEMPROF_POOL_EFAULT;
	}
	granules(p, s, &first, &last);
	rc = each_unused_run(p, first, last, 1, &stop);
	if (rc != MEMPROF_POOL_OK) {
		if (stop > first)
			each_unused_run(p, first, stop - 1, 0, &stop);
		cp_arena_give(&p->arena, s);
		return rc;
	}
	for (uint64_t i = first; i <= last; i++)
		p->vmm.users[i]++;
	if (p->vmm.mapped_bytes > p->st.peak_arena_bytes)
		p->st.peak_arena_bytes = p->vmm.mapped_bytes;
	*out = s;
	return MEMPROF_POOL_OK;
}

int cp_vmm_free(struct memprof_pool *p, struct cp_seg *s)
{
	uint64_t first, last, stop;
	int rc;

	granules(p, s, &first, &last);
	for (uint64_t i = first; i <= last; i++)
		p->vmm.users[i]--;
	rc = each_unused_run(p, first, last, 0, &stop);
	cp_arena_give(&p->arena, s);
	return rc;
}

void cp_vmm_destroy(struct memprof_pool *p)
{
	const struct memprof_pool_host *h = p->host;
	uint64_t g = p->vmm.granule_bytes;

	if (p->vmm.reserved == 1) {
		const struct memprof_region *va = &p->arena.chunks[0]->region;

		for (uint64_t i = 0; i < p->vmm.n_granules; i++) {
			uint64_t end = i;

			if (!p->vmm.users[i])
				continue;
			while (end + 1 < p->vmm.n_granules && p->vmm.users[end + 1])
				end++;
			h->unmap(h->ctx, va, i * g, (end - i + 1) * g);
			i = end;
		}
		h->va_release(h->ctx, va);
	}
	free(p->vmm.users);
	cp_arena_free(&p->arena);
}
