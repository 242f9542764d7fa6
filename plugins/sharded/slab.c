/*
 * plugins/sharded/slab.c - the slab, reserved once at the first recurring
 * request, which gives the shard table its addresses; then one all-gather
 * and one reduce-scatter over each recurring key's first slot, where the
 * host and backend offer collectives, to prove the shard views are valid
 * collective buffers and time them.  An unsupported collective never fails
 * the replay; a failed one (EFAULT) does.
 */
#include "sharded.h"

static const char *kind_name(int kind)
{
	return kind == MEMPROF_POOL_ALL_GATHER ? "all-gather" : "reduce-scatter";
}

/* One collective over slot s; 1 when it ran, 0 when collectives stop, or EFAULT. */
static int run_one(struct memprof_pool *p, int kind, const struct sh_slot *s, uint64_t n_bytes,
                   uint64_t stream)
{
	const struct memprof_pool_host *h = p->host;
	uint64_t ns = 0;
	int rc = h->collective(h->ctx, kind, s->addr, n_bytes, p->tab.world_size, stream, &ns);

	if (rc == MEMPROF_POOL_OK) {
		p->n_collectives++;
		*(kind == MEMPROF_POOL_ALL_GATHER ? &p->all_gather_ns : &p->reduce_scatter_ns) +=
		        ns;
		return 1;
	}
	if (rc == MEMPROF_POOL_ENOTSUP) {
		h->log(h->ctx, MEMPROF_POOL_LOG_INFO,
		       "collectives not run: the backend cannot run them here (%s: no NCCL, or one "
		       "GPU, where a collective would have one rank)",
		       h->backend ? h->backend : "?");
		return 0;
	}
	if (rc == MEMPROF_POOL_EFAULT) {
		h->log(h->ctx, MEMPROF_POOL_LOG_ERROR,
		       "%s over the %llu-byte slot at 0x%llx (world size %u) failed",
		       kind_name(kind), (unsigned long long)n_bytes, (unsigned long long)s->addr,
		       p->tab.world_size);
		return MEMPROF_POOL_EFAULT;
	}
	h->log(h->ctx, MEMPROF_POOL_LOG_WARN,
	       "%s over the %llu-byte slot at 0x%llx refused (error %d): no further collectives",
	       kind_name(kind), (unsigned long long)n_bytes, (unsigned long long)s->addr, rc);
	return 0;
}

static int run_collectives(struct memprof_pool *p, uint64_t stream)
{
	const struct memprof_pool_host *h = p->host;
	static const int kinds[] = {MEMPROF_POOL_ALL_GATHER, MEMPROF_POOL_REDUCE_SCATTER};

	if (!MEMPROF_POOL_HOST_HAS(h, collective)) {
		h->log(h->ctx, MEMPROF_POOL_LOG_INFO,
		       "collectives not run: the host offers no collective service (ABI %u.%u)",
		       h->abi_major, h->abi_minor);
		return MEMPROF_POOL_OK;
	}
	for (size_t k = 0; k < p->tab.n_keys; k++) {
		const struct sh_key *key = &p->tab.keys[k];

		for (int i = 0; i < 2; i++) {
			int rc = run_one(p, kinds[i], &p->tab.slots[key->first_slot],
			                 key->slot_bytes, stream);
			if (rc <= 0)
				return rc;
		}
	}
	h->log(h->ctx, MEMPROF_POOL_LOG_INFO,
	       "ran %llu collectives over the first slot of %zu keys: all-gather %llu ns, "
	       "reduce-scatter %llu ns",
	       (unsigned long long)p->n_collectives, p->tab.n_keys,
	       (unsigned long long)p->all_gather_ns, (unsigned long long)p->reduce_scatter_ns);
	return MEMPROF_POOL_OK;
}

int sh_slab_create(struct memprof_pool *p, uint64_t stream)
{
	const struct memprof_pool_host *h = p->host;
	int rc = h->reserve(h->ctx, p->tab.slab_bytes, &p->slab);

	if (rc == MEMPROF_POOL_ENOMEM) {
		p->slab_state = -1;
		h->log(h->ctx, MEMPROF_POOL_LOG_WARN,
		       "cannot reserve the slab of %llu bytes: the caching fallback serves "
		       "everything",
		       (unsigned long long)p->tab.slab_bytes);
		return MEMPROF_POOL_OK;
	}
	if (rc != MEMPROF_POOL_OK) {
		h->log(h->ctx, MEMPROF_POOL_LOG_ERROR,
		       "reserving the slab of %llu bytes failed (%d)",
		       (unsigned long long)p->tab.slab_bytes, rc);
		return rc;
	}
	p->slab_state = 1;
	sh_table_address(&p->tab, p->slab.addr);
	return run_collectives(p, stream);
}
