/*
 * tests/unit/fake_host.h - a host for unit-testing one pool plugin alone,
 * with no memprof library: reservations are synthetic address ranges from a
 * bump pointer (never reused, 512-aligned, starting at 1 TiB), counted and
 * held to a capacity; map/unmap count mapped bytes; alloc_async is
 * ENOTSUP unless enabled, as is collective (which then does nothing but
 * record the call).  Every call is recorded so tests can assert what the
 * pool asked of the backend.  Not thread-safe.
 */
#ifndef MEMPROF_TESTS_FAKE_HOST_H
#define MEMPROF_TESTS_FAKE_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"

#define FAKE_HOST_MAX_REGIONS 4096
#define FAKE_HOST_MAX_RECORDS 1024

/* A block_moved or block_shares call, in order. */
struct fake_block_call {
	uint64_t token;
	uint64_t arg; /* new_addr (moved) or live_token (shares) */
};

/* A collective call, in order. */
struct fake_collective {
	int kind;
	uint64_t addr, n_bytes;
	uint32_t world_size;
};

struct fake_region {
	uint64_t addr, size_bytes;
	int is_va; /* from va_reserve */
	int live;  /* not yet released */
	uint64_t mapped_bytes;
};

struct fake_host {
	struct memprof_pool_host host; /* pass &fh->host to create */
	uint64_t next_addr;
	uint64_t reserved_bytes; /* reserve + mapped + async */
	uint64_t peak_reserved_bytes;
	uint64_t n_reserve, n_release, n_va_reserve, n_va_release, n_map, n_unmap;
	uint64_t n_alloc_async, n_free_async, n_memset, n_copy, n_sync, n_moved;
	uint64_t bytes_copied, bytes_set;
	uint64_t n_refused; /* reserve/map refused for capacity */
	int async_enabled;
	int collective_enabled;
	struct fake_block_call moves[FAKE_HOST_MAX_RECORDS], shares[FAKE_HOST_MAX_RECORDS];
	size_t n_shares;
	struct fake_collective collectives[FAKE_HOST_MAX_RECORDS];
	size_t n_collectives;
	uint64_t clock; /* advanced by 1 per clock_ns call */
	struct fake_region regions[FAKE_HOST_MAX_REGIONS];
	size_t n_regions;
	char last_log[512];
	int n_log_errors;
};

/* A fresh host for backend "sim" with the given capacity (0: unlimited). */
void fake_host_init(struct fake_host *fh, uint64_t capacity_bytes);
/*
 * The figure name that ops->stats emits for p: 1 and *value; 0 when it
 * emits none of that name; -1 when it emits a name of 48 bytes or more (the
 * engine would cut it) or more than 256 figures.
 */
int fake_host_stat(const struct memprof_pool_ops *ops, struct memprof_pool *p, const char *name,
                   double *value);
/* How many figures ops->stats emits for p. */
size_t fake_host_n_stats(const struct memprof_pool_ops *ops, struct memprof_pool *p);

/* Live (unreleased) reservations and VA ranges. */
size_t fake_host_live_regions(const struct fake_host *fh);

#endif
