/*
 * capture/live_table.c - the allocations live now in the workload (capture.h):
 * an open-addressing hash map (linear probing, backward-shift deletion) keyed
 * by address under one mutex, doubled when 70% full.  Runs on every
 * allocation call of the workload, so it only hashes, probes and copies; it
 * never does I/O except through the spool writer (which never waits).
 */
#include "capture/capture.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct live_entry {
	uint64_t address; /* 0: empty slot */
	uint64_t bytes;
	uint64_t stream;
	int32_t device;
	uint32_t api;
	uint16_t flags;
	uint8_t mem_kind;
};

#define LIVE_MIN_SLOTS 1024u

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct live_entry *slots; /* n_slots entries, a power of two */
static size_t n_slots;
static size_t n_live;
static uint64_t live_bytes;

static size_t slot_of(uint64_t address, size_t mask)
{
	/* Fibonacci hashing: allocations are aligned, so the low bits are poor. */
	return (size_t)((address * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

/* The slot holding address, or the empty slot where it would go. */
static size_t find_slot(const struct live_entry *tab, size_t n, uint64_t address)
{
	size_t mask = n - 1, i = slot_of(address, mask);

	while (tab[i].address != 0 && tab[i].address != address)
		i = (i + 1) & mask;
	return i;
}

/* Double the table (or make the first one); 0, or -1 when out of memory. */
static int grow(void)
{
	size_t n = n_slots ? n_slots * 2 : LIVE_MIN_SLOTS, i;
	struct live_entry *tab = calloc(n, sizeof(*tab));

	if (!tab)
		return -1;
	for (i = 0; i < n_slots; i++)
		if (slots[i].address != 0)
			tab[find_slot(tab, n, slots[i].address)] = slots[i];
	free(slots);
	slots = tab;
	n_slots = n;
	return 0;
}

void mp_live_add(uint64_t address, uint64_t bytes, int32_t device, uint8_t mem_kind, uint16_t flags,
                 uint64_t stream, uint32_t api)
{
	struct live_entry *e;

	if (address == 0)
		return;
	pthread_mutex_lock(&live_lock);
	if ((n_live + 1) * 10 > n_slots * 7 && grow() < 0 && n_live + 1 >= n_slots) {
		pthread_mutex_unlock(&live_lock); /* out of memory and full: not kept */
		return;
	}
	e = &slots[find_slot(slots, n_slots, address)];
	if (e->address == address) {
		live_bytes -= e->bytes; /* the same address again: its free was missed */
	} else {
		n_live++;
	}
	*e = (struct live_entry){.address = address,
	                         .bytes = bytes,
	                         .stream = stream,
	                         .device = device,
	                         .api = api,
	                         .flags = flags,
	                         .mem_kind = mem_kind};
	live_bytes += bytes;
	pthread_mutex_unlock(&live_lock);
}

/* Empty slot i and shift back the entries of its probe run that may move. */
static void delete_slot(size_t i)
{
	size_t mask = n_slots - 1, j = i, home;

	for (;;) {
		slots[i].address = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (slots[j].address == 0)
				return;
			home = slot_of(slots[j].address, mask);
			/* j may move to i when its home is not cyclically in (i, j]. */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		slots[i] = slots[j];
		i = j;
	}
}

int mp_live_remove(uint64_t address)
{
	size_t i;
	int found = 0;

	if (address == 0)
		return 0;
	pthread_mutex_lock(&live_lock);
	if (n_slots != 0) {
		i = find_slot(slots, n_slots, address);
		if (slots[i].address == address) {
			live_bytes -= slots[i].bytes;
			n_live--;
			delete_slot(i);
			found = 1;
		}
	}
	pthread_mutex_unlock(&live_lock);
	return found;
}

void mp_live_totals(uint64_t *n_allocations, uint64_t *bytes)
{
	pthread_mutex_lock(&live_lock);
	if (n_allocations)
		*n_allocations = n_live;
	if (bytes)
		*bytes = live_bytes;
	pthread_mutex_unlock(&live_lock);
}

/*
 * Holds the lock while writing, so the events are exactly the table at one
 * moment: an allocation call waits for the copy into the spool's buffer (no
 * I/O).  Returns 0, or -1 when some event was dropped (the writer counts it).
 */
int mp_live_write_preexisting(struct mp_spool_writer *w, int64_t ts)
{
	struct mp_spool_event ev;
	size_t i;
	int rc = 0;

	if (!w)
		return -1;
	pthread_mutex_lock(&live_lock);
	for (i = 0; i < n_slots; i++) {
		const struct live_entry *e = &slots[i];

		if (e->address == 0)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.kind = MP_SK_PREEXISTING;
		ev.mem_kind = e->mem_kind;
		ev.flags = e->flags;
		ev.device = e->device;
		ev.name = e->api;
		ev.ts_ns = ts;
		ev.address = e->address;
		ev.bytes = e->bytes;
		ev.stream = e->stream;
		if (mp_spool_event(w, &ev) < 0)
			rc = -1;
	}
	pthread_mutex_unlock(&live_lock);
	return rc;
}

/*
 * The lock may be held by a thread the child does not have: never take it.
 * The table is left to the parent's copy-on-write pages (not freed: a
 * parent's thread may have been half way through replacing it).
 */
void mp_live_forget_after_fork(void)
{
	static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	memcpy(&live_lock, &fresh, sizeof(live_lock));
	slots = NULL;
	n_slots = 0;
	n_live = 0;
	live_bytes = 0;
}
