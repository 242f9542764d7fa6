/*
 * tests/unit/fake_host.c - the fake host of fake_host.h: synthetic memory,
 * call counts and a capacity, for plugin unit tests.  Never touches memory.
 */
#include "fake_host.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define FAKE_BASE  (1ull << 40)
#define FAKE_ALIGN 512ull

static struct fake_host *fh_of(void *ctx)
{
	return ctx;
}

static void account(struct fake_host *fh, uint64_t add)
{
	fh->reserved_bytes += add;
	if (fh->reserved_bytes > fh->peak_reserved_bytes)
		fh->peak_reserved_bytes = fh->reserved_bytes;
}

static int would_exceed(struct fake_host *fh, uint64_t n)
{
	uint64_t cap = fh->host.capacity_bytes;
	if (cap && (n > cap || fh->reserved_bytes > cap - n)) {
		fh->n_refused++;
		return 1;
	}
	return 0;
}

static int new_region(struct fake_host *fh, uint64_t size, int is_va, struct memprof_region *out)
{
	struct fake_region *r;

	if (fh->n_regions == FAKE_HOST_MAX_REGIONS)
		return MEMPROF_POOL_EFAULT;
	r = &fh->regions[fh->n_regions];
	r->addr = fh->next_addr;
	r->size_bytes = size;
	r->is_va = is_va;
	r->live = 1;
	r->mapped_bytes = 0;
	fh->next_addr += (size + FAKE_ALIGN - 1) / FAKE_ALIGN * FAKE_ALIGN + FAKE_ALIGN;
	out->addr = r->addr;
	out->size_bytes = size;
	out->token = fh->n_regions++;
	return 0;
}

static struct fake_region *region_of(struct fake_host *fh, const struct memprof_region *r)
{
	if (r->token >= fh->n_regions || !fh->regions[r->token].live ||
	    fh->regions[r->token].addr != r->addr)
		return NULL;
	return &fh->regions[r->token];
}

static int fake_reserve(void *ctx, uint64_t size, struct memprof_region *out)
{
	struct fake_host *fh = fh_of(ctx);
	int rc;

	fh->n_reserve++;
	if (would_exceed(fh, size))
		return MEMPROF_POOL_ENOMEM;
	rc = new_region(fh, size, 0, out);
	if (rc == 0)
		account(fh, size);
	return rc;
}

static int fake_release(void *ctx, const struct memprof_region *r)
{
	struct fake_host *fh = fh_of(ctx);
	struct fake_region *fr = region_of(fh, r);

	fh->n_release++;
	if (!fr || fr->is_va)
		return MEMPROF_POOL_EINVAL;
	fr->live = 0;
	fh->reserved_bytes -= fr->size_bytes;
	return 0;
}

static int fake_memset(void *ctx, uint64_t addr, int value, uint64_t n, uint64_t stream)
{
	struct fake_host *fh = fh_of(ctx);
	(void)addr, (void)value, (void)stream;
	fh->n_memset++;
	fh->bytes_set += n;
	return 0;
}

static int fake_copy(void *ctx, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream)
{
	struct fake_host *fh = fh_of(ctx);
	(void)dst, (void)src, (void)stream;
	fh->n_copy++;
	fh->bytes_copied += n;
	return 0;
}

static uint64_t fake_clock(void *ctx)
{
	return ++fh_of(ctx)->clock;
}

static void fake_log(void *ctx, int level, const char *fmt, ...)
{
	struct fake_host *fh = fh_of(ctx);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fh->last_log, sizeof fh->last_log, fmt, ap);
	va_end(ap);
	if (level == MEMPROF_POOL_LOG_ERROR)
		fh->n_log_errors++;
}

static int fake_va_reserve(void *ctx, uint64_t size, struct memprof_region *out)
{
	struct fake_host *fh = fh_of(ctx);
	fh->n_va_reserve++;
	return new_region(fh, size, 1, out);
}

static int fake_va_release(void *ctx, const struct memprof_region *va)
{
	struct fake_host *fh = fh_of(ctx);
	struct fake_region *fr = region_of(fh, va);

	fh->n_va_release++;
	if (!fr || !fr->is_va || fr->mapped_bytes)
		return MEMPROF_POOL_EINVAL;
	fr->live = 0;
	return 0;
}

static int chunk_ok(struct fake_host *fh, struct fake_region *fr, uint64_t off, uint64_t n)
{
	uint64_t g = fh->host.granularity_bytes;
	return fr && fr->is_va && off % g == 0 && n % g == 0 && n <= fr->size_bytes &&
	       off <= fr->size_bytes - n;
}

static int fake_map(void *ctx, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	struct fake_host *fh = fh_of(ctx);
	struct fake_region *fr = region_of(fh, va);

	fh->n_map++;
	if (!chunk_ok(fh, fr, off, n))
		return MEMPROF_POOL_EINVAL;
	if (would_exceed(fh, n))
		return MEMPROF_POOL_ENOMEM;
	fr->mapped_bytes += n;
	account(fh, n);
	return 0;
}

static int fake_unmap(void *ctx, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	struct fake_host *fh = fh_of(ctx);
	struct fake_region *fr = region_of(fh, va);

	fh->n_unmap++;
	if (!chunk_ok(fh, fr, off, n) || n > fr->mapped_bytes)
		return MEMPROF_POOL_EINVAL;
	fr->mapped_bytes -= n;
	fh->reserved_bytes -= n;
	return 0;
}

static int fake_alloc_async(void *ctx, uint64_t size, uint64_t stream, struct memprof_region *out)
{
	struct fake_host *fh = fh_of(ctx);
	int rc;

	(void)stream;
	if (!fh->async_enabled)
		return MEMPROF_POOL_ENOTSUP;
	fh->n_alloc_async++;
	if (would_exceed(fh, size))
		return MEMPROF_POOL_ENOMEM;
	rc = new_region(fh, size, 0, out);
	if (rc == 0)
		account(fh, size);
	return rc;
}

static int fake_free_async(void *ctx, const struct memprof_region *r, uint64_t stream)
{
	struct fake_host *fh = fh_of(ctx);
	(void)stream;
	if (!fh->async_enabled)
		return MEMPROF_POOL_ENOTSUP;
	fh->n_free_async++;
	return fake_release(ctx, r) == 0 ? (fh->n_release--, 0) : MEMPROF_POOL_EINVAL;
}

static int fake_sync(void *ctx, uint64_t stream)
{
	(void)stream;
	fh_of(ctx)->n_sync++;
	return 0;
}

static int fake_block_moved(void *ctx, uint64_t token, uint64_t new_addr)
{
	struct fake_host *fh = fh_of(ctx);

	if (fh->n_moved < FAKE_HOST_MAX_RECORDS)
		fh->moves[fh->n_moved] = (struct fake_block_call){token, new_addr};
	fh->n_moved++;
	return 0;
}

static int fake_block_shares(void *ctx, uint64_t token, uint64_t live_token)
{
	struct fake_host *fh = fh_of(ctx);

	if (fh->n_shares < FAKE_HOST_MAX_RECORDS)
		fh->shares[fh->n_shares] = (struct fake_block_call){token, live_token};
	fh->n_shares++;
	return 0;
}

static int fake_collective(void *ctx, int kind, uint64_t addr, uint64_t n_bytes,
                           uint32_t world_size, uint64_t stream, uint64_t *elapsed_ns)
{
	struct fake_host *fh = fh_of(ctx);

	(void)stream;
	if (elapsed_ns)
		*elapsed_ns = 0;
	if (!fh->collective_enabled)
		return MEMPROF_POOL_ENOTSUP;
	if (fh->n_collectives < FAKE_HOST_MAX_RECORDS)
		fh->collectives[fh->n_collectives] =
		        (struct fake_collective){kind, addr, n_bytes, world_size};
	fh->n_collectives++;
	if (elapsed_ns)
		*elapsed_ns = 1000;
	return 0;
}

void fake_host_init(struct fake_host *fh, uint64_t capacity_bytes)
{
	memset(fh, 0, sizeof *fh);
	fh->next_addr = FAKE_BASE;
	fh->host = (struct memprof_pool_host){
	        .struct_size = sizeof(struct memprof_pool_host),
	        .abi_major = MEMPROF_POOL_ABI_MAJOR,
	        .abi_minor = MEMPROF_POOL_ABI_MINOR,
	        .ctx = fh,
	        .backend = "sim",
	        .capacity_bytes = capacity_bytes,
	        .granularity_bytes = 2u << 20,
	        .reserve = fake_reserve,
	        .release = fake_release,
	        .memset = fake_memset,
	        .copy = fake_copy,
	        .clock_ns = fake_clock,
	        .log = fake_log,
	        .va_reserve = fake_va_reserve,
	        .va_release = fake_va_release,
	        .map = fake_map,
	        .unmap = fake_unmap,
	        .alloc_async = fake_alloc_async,
	        .free_async = fake_free_async,
	        .sync = fake_sync,
	        .block_moved = fake_block_moved,
	        .block_shares = fake_block_shares,
	        .collective = fake_collective,
	        .lifetime_size = sizeof(struct memprof_pool_lifetime),
	};
}

size_t fake_host_live_regions(const struct fake_host *fh)
{
	size_t n = 0;
	for (size_t i = 0; i < fh->n_regions; i++)
		n += fh->regions[i].live;
	return n;
}

#define MAX_STATS 256

struct stats {
	struct {
		char name[48];
		double value;
	} rows[MAX_STATS];
	size_t n;
	int bad; /* a name too long, or too many figures */
};

static void collect(void *ctx, const char *name, double value, const char *unit)
{
	struct stats *s = ctx;

	(void)unit;
	if (!name || strlen(name) >= sizeof s->rows[0].name || s->n == MAX_STATS) {
		s->bad = 1;
		return;
	}
	snprintf(s->rows[s->n].name, sizeof s->rows[0].name, "%s", name);
	s->rows[s->n++].value = value;
}

static struct stats *take_stats(const struct memprof_pool_ops *ops, struct memprof_pool *p)
{
	static struct stats s;

	memset(&s, 0, sizeof s);
	ops->stats(p, collect, &s);
	return &s;
}

int fake_host_stat(const struct memprof_pool_ops *ops, struct memprof_pool *p, const char *name,
                   double *value)
{
	struct stats *s = take_stats(ops, p);

	if (s->bad)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->rows[i].name, name)) {
			*value = s->rows[i].value;
			return 1;
		}
	return 0;
}

size_t fake_host_n_stats(const struct memprof_pool_ops *ops, struct memprof_pool *p)
{
	return take_stats(ops, p)->n;
}
