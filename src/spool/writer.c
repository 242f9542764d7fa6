/*
 * spool/writer.c - the spool writer: two buffers filled under a
 * mutex by any thread, written as checksummed blocks by one background
 * thread, and the string and stack intern tables.  Runs inside the user's
 * workload: no stdio, no exit or abort, never waits on I/O when appending.
 */
#include "spool/writer.h"
#include "util/crc32.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_BUFFER_BYTES (4u << 20)
#define MIN_BUFFER_BYTES     4096u
#define DEFAULT_FLUSH_MS     200
#define BLOCK_HEAD_BYTES     sizeof(struct mp_spool_block)

struct spool_buf {
	unsigned char *data; /* BLOCK_HEAD_BYTES for the block header, then items */
	size_t used_bytes;   /* item bytes after the block header */
	uint32_t n_items;
};

/* An interned string or stack: key bytes (owned), their hash and id. */
struct intern_ent {
	void *key;
	size_t key_bytes;
	uint64_t hash;
	uint32_t id;
};

struct intern_table {
	struct intern_ent *slots; /* open addressing, linear probing; id 0: empty */
	size_t cap, n;
	uint32_t next_id;
};

struct mp_spool_writer {
	int fd;
	int error;     /* -errno of the first write error, 0 none */
	int off;       /* 1: a write error or close: appends are dropped */
	int stop;      /* the thread is to end */
	int flush_req; /* someone asked for the active buffer to be written */
	int pending;   /* index of the buffer the thread is to write, -1 none */
	int active;    /* index of the buffer appends go to */
	int flush_ms;
	int test_hold;    /* tests: the thread leaves the pending buffer alone */
	size_t cap_bytes; /* item bytes each buffer holds */
	struct spool_buf bufs[2];
	uint64_t n_appended; /* items accepted into a buffer */
	uint64_t n_settled;  /* of those, items written or lost to a write error */
	uint64_t block_seq;
	uint64_t n_dropped; /* atomic */
	uint64_t n_events;  /* stored under mu, loaded atomically */
	pthread_mutex_t mu;
	pthread_cond_t wake; /* to the thread: work or stop */
	pthread_cond_t done; /* to flushers: n_settled moved */
	pthread_t thread;
	struct intern_table strings, stacks;
};

/*
 * Test hook, declared here and in tests/unit/test_spool.c only: hold=1 keeps
 * the thread from writing (so both buffers fill), hold=0 lets it go on.
 */
void mp_spool_writer_test_hold(struct mp_spool_writer *w, int hold);

void mp_spool_writer_test_hold(struct mp_spool_writer *w, int hold)
{
	pthread_mutex_lock(&w->mu);
	w->test_hold = hold;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->mu);
}

static void count_dropped(struct mp_spool_writer *w, uint64_t n)
{
	__atomic_fetch_add(&w->n_dropped, n, __ATOMIC_RELAXED);
}

/* Write all n bytes, retrying on EINTR and short writes; 0 or -errno. */
static int write_all(int fd, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n > 0) {
		ssize_t k = write(fd, s, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Write buffer b as one block (called by the thread without the lock). */
static int write_block(struct mp_spool_writer *w, struct spool_buf *b, uint64_t seq)
{
	struct mp_spool_block bh;

	memset(&bh, 0, sizeof(bh));
	bh.magic = MP_SPOOL_BLOCK_MAGIC;
	bh.payload_bytes = (uint32_t)b->used_bytes;
	bh.crc32 = mp_crc32(0, b->data + BLOCK_HEAD_BYTES, b->used_bytes);
	bh.n_items = b->n_items;
	bh.block_seq = seq;
	memcpy(b->data, &bh, sizeof(bh));
	return write_all(w->fd, b->data, BLOCK_HEAD_BYTES + b->used_bytes);
}

/* Thread, lock held: write the pending buffer, then mark it empty. */
static void write_pending(struct mp_spool_writer *w)
{
	struct spool_buf *b = &w->bufs[w->pending];
	uint64_t seq = w->block_seq;
	int rc = 0;

	if (!w->error) {
		pthread_mutex_unlock(&w->mu);
		rc = write_block(w, b, seq);
		pthread_mutex_lock(&w->mu);
	}
	if (w->error || rc < 0) {
		if (!w->error)
			w->error = rc;
		w->off = 1;
		count_dropped(w, b->n_items);
	} else {
		w->block_seq++;
	}
	w->n_settled += b->n_items;
	b->used_bytes = 0;
	b->n_items = 0;
	w->pending = -1;
	pthread_cond_broadcast(&w->done);
}

/* Lock held: hand the active buffer to the thread (the other one is empty). */
static void seal_active(struct mp_spool_writer *w)
{
	w->pending = w->active;
	w->active ^= 1;
	pthread_cond_signal(&w->wake);
}

static void deadline_after(struct timespec *t, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static void *writer_main(void *arg)
{
	struct mp_spool_writer *w = arg;
	struct timespec next;

	pthread_mutex_lock(&w->mu);
	deadline_after(&next, w->flush_ms);
	for (;;) {
		struct spool_buf *b = &w->bufs[w->active];

		if (w->pending >= 0 && !w->test_hold) {
			write_pending(w);
			continue;
		}
		if (w->pending < 0 && b->used_bytes > 0 && (w->flush_req || w->stop)) {
			w->flush_req = 0; /* the sealed buffer holds all a flusher waits for */
			seal_active(w);
			continue;
		}
		if (w->pending < 0 && b->used_bytes == 0)
			w->flush_req = 0;
		if (w->stop && w->pending < 0)
			break;
		if (pthread_cond_timedwait(&w->wake, &w->mu, &next) == ETIMEDOUT) {
			w->flush_req = 1;
			deadline_after(&next, w->flush_ms);
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/*
 * Lock held: room for an item of n bytes in the active buffer, swapping
 * buffers when the other one is free; NULL when the item must be dropped.
 */
static unsigned char *reserve_locked(struct mp_spool_writer *w, size_t n)
{
	struct spool_buf *b = &w->bufs[w->active];

	if (w->off || n > w->cap_bytes)
		return NULL;
	if (b->used_bytes + n > w->cap_bytes) {
		if (w->pending >= 0)
			return NULL;
		seal_active(w);
		b = &w->bufs[w->active];
	}
	b->n_items++;
	w->n_appended++;
	b->used_bytes += n;
	return b->data + BLOCK_HEAD_BYTES + b->used_bytes - n;
}

/* Copy an item in; events are counted under the lock (no atomic add). */
static int append_item(struct mp_spool_writer *w, const void *item, size_t bytes, int is_event)
{
	unsigned char *p;

	pthread_mutex_lock(&w->mu);
	p = reserve_locked(w, bytes);
	if (p) {
		memcpy(p, item, bytes);
		if (is_event) /* only ever written under the lock; read with atomic loads */
			__atomic_store_n(&w->n_events, w->n_events + 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&w->mu);
	if (!p) {
		count_dropped(w, 1);
		return -1;
	}
	return 0;
}

int mp_spool_append(struct mp_spool_writer *w, const void *item, size_t bytes)
{
	if (bytes < sizeof(struct mp_spool_item_head) || bytes % 8 != 0) {
		count_dropped(w, 1);
		return -1;
	}
	return append_item(w, item, bytes, 0);
}

int mp_spool_event(struct mp_spool_writer *w, struct mp_spool_event *ev)
{
	ev->head.type = MP_SI_EVENT;
	ev->head.zero = 0;
	ev->head.bytes = sizeof(*ev);
	return append_item(w, ev, sizeof(*ev), 1);
}

/* --- interning ------------------------------------------------------------ */

/* A 64-bit hash, 8 bytes a step (stacks are arrays of 8-byte addresses). */
static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, k;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&k, s, 8);
		h = (h ^ (k * 0xff51afd7ed558ccdULL)) * 0xc4ceb9fe1a85ec53ULL;
		h ^= h >> 31;
	}
	for (k = 0; n > 0; n--)
		k = (k << 8) | s[n - 1];
	h = (h ^ (k * 0xff51afd7ed558ccdULL)) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 29);
}

static void intern_free(struct intern_table *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		if (t->slots[i].id)
			free(t->slots[i].key);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* The slot holding key, or the empty slot where it goes. */
static struct intern_ent *intern_slot(struct intern_table *t, const void *key, size_t n, uint64_t h)
{
	size_t i = (size_t)h & (t->cap - 1);

	for (;; i = (i + 1) & (t->cap - 1)) {
		struct intern_ent *e = &t->slots[i];

		if (!e->id)
			return e;
		if (e->hash == h && e->key_bytes == n && memcmp(e->key, key, n) == 0)
			return e;
	}
}

/* Keep the load at most one half; 0 or -1 (no memory). */
static int intern_grow(struct intern_table *t)
{
	struct intern_table g = *t;
	size_t i;

	if (t->cap && (t->n + 1) * 2 <= t->cap)
		return 0;
	g.cap = t->cap ? t->cap * 2 : 256;
	g.slots = calloc(g.cap, sizeof(*g.slots));
	if (!g.slots)
		return -1;
	for (i = 0; i < t->cap; i++)
		if (t->slots[i].id)
			*intern_slot(&g, t->slots[i].key, t->slots[i].key_bytes, t->slots[i].hash) =
			        t->slots[i];
	free(t->slots);
	*t = g;
	return 0;
}

/*
 * Lock held: the id of key in t, or a new one after writing the table item
 * (head + id + count + key padded to 8) through reserve_locked.  0 when it
 * could not be written (nothing is remembered then).
 */
static uint32_t intern_locked(struct mp_spool_writer *w, struct intern_table *t, uint16_t type,
                              const void *key, size_t key_bytes, uint32_t count)
{
	uint64_t h = hash_bytes(key, key_bytes);
	struct mp_spool_string head; /* same layout as struct mp_spool_stack */
	struct intern_ent *e;
	size_t item_bytes = (sizeof(head) + key_bytes + 7) & ~(size_t)7;
	unsigned char *p;
	void *copy;

	if (t->cap) {
		e = intern_slot(t, key, key_bytes, h);
		if (e->id)
			return e->id;
	}
	if (intern_grow(t) < 0 || !(copy = malloc(key_bytes ? key_bytes : 1)))
		return 0;
	p = reserve_locked(w, item_bytes);
	if (!p) {
		free(copy);
		return 0;
	}
	memcpy(copy, key, key_bytes);
	memset(&head, 0, sizeof(head));
	head.head.type = type;
	head.head.bytes = (uint32_t)item_bytes;
	head.id = t->next_id ? t->next_id : 1;
	head.len = count;
	memcpy(p, &head, sizeof(head));
	memcpy(p + sizeof(head), key, key_bytes);
	memset(p + sizeof(head) + key_bytes, 0, item_bytes - sizeof(head) - key_bytes);
	e = intern_slot(t, key, key_bytes, h);
	e->key = copy;
	e->key_bytes = key_bytes;
	e->hash = h;
	e->id = head.id;
	t->n++;
	t->next_id = head.id + 1;
	return head.id;
}

uint32_t mp_spool_string(struct mp_spool_writer *w, const char *s, size_t len)
{
	uint32_t id;

	if (len > MP_SPOOL_MAX_STRING)
		len = MP_SPOOL_MAX_STRING;
	pthread_mutex_lock(&w->mu);
	id = intern_locked(w, &w->strings, MP_SI_STRING, s, len, (uint32_t)len);
	pthread_mutex_unlock(&w->mu);
	if (!id)
		count_dropped(w, 1);
	return id;
}

uint32_t mp_spool_cstring(struct mp_spool_writer *w, const char *s)
{
	return mp_spool_string(w, s, strlen(s));
}

uint32_t mp_spool_stack(struct mp_spool_writer *w, const uint64_t *pcs, uint32_t depth)
{
	uint32_t id;

	if (depth == 0)
		return 0;
	if (depth > MP_SPOOL_MAX_STACK_DEPTH)
		depth = MP_SPOOL_MAX_STACK_DEPTH;
	pthread_mutex_lock(&w->mu);
	id = intern_locked(w, &w->stacks, MP_SI_STACK, pcs, (size_t)depth * sizeof(*pcs), depth);
	pthread_mutex_unlock(&w->mu);
	if (!id)
		count_dropped(w, 1);
	return id;
}

int mp_spool_meta(struct mp_spool_writer *w, const char *key, const char *value)
{
	struct mp_spool_meta m;

	memset(&m, 0, sizeof(m));
	m.head.type = MP_SI_META;
	m.head.bytes = sizeof(m);
	m.key = mp_spool_cstring(w, key);
	m.value = mp_spool_cstring(w, value);
	if (!m.key || !m.value)
		return -1;
	return mp_spool_append(w, &m, sizeof(m));
}

/* --- counters, flush ------------------------------------------------------- */

void mp_spool_count_dropped(struct mp_spool_writer *w, uint64_t n)
{
	count_dropped(w, n);
}

uint64_t mp_spool_n_dropped(const struct mp_spool_writer *w)
{
	return __atomic_load_n(&w->n_dropped, __ATOMIC_RELAXED);
}

uint64_t mp_spool_n_events(const struct mp_spool_writer *w)
{
	return __atomic_load_n(&w->n_events, __ATOMIC_RELAXED);
}

void mp_spool_flush(struct mp_spool_writer *w, int wait)
{
	uint64_t target;

	pthread_mutex_lock(&w->mu);
	target = w->n_appended;
	w->flush_req = 1;
	pthread_cond_signal(&w->wake);
	while (wait && w->n_settled < target)
		pthread_cond_wait(&w->done, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

/* --- open, close, forget --------------------------------------------------- */

static void free_writer(struct mp_spool_writer *w)
{
	free(w->bufs[0].data);
	free(w->bufs[1].data);
	intern_free(&w->strings);
	intern_free(&w->stacks);
	free(w);
}

/*
 * Write one byte of every page through a volatile pointer: a plain memset
 * after malloc is turned into calloc by the compiler, which leaves the pages
 * unmapped (bench/spool-bench.c measured a fault every 43 appends).
 */
static void touch_pages(unsigned char *p, size_t n)
{
	volatile unsigned char *v = p;
	size_t i;

	for (i = 0; i < n; i += 4096)
		v[i] = 0;
	if (n)
		v[n - 1] = 0;
}

static struct mp_spool_writer *new_writer(const struct mp_spool_writer_opts *o)
{
	struct mp_spool_writer *w = calloc(1, sizeof(*w));
	size_t cap = o && o->buffer_bytes ? o->buffer_bytes : DEFAULT_BUFFER_BYTES;

	if (!w)
		return NULL;
	if (cap < MIN_BUFFER_BYTES)
		cap = MIN_BUFFER_BYTES;
	if (cap > MP_SPOOL_MAX_BLOCK)
		cap = MP_SPOOL_MAX_BLOCK;
	w->cap_bytes = cap & ~(size_t)7;
	w->flush_ms = o && o->flush_ms > 0 ? o->flush_ms : DEFAULT_FLUSH_MS;
	w->pending = -1;
	w->fd = -1;
	w->bufs[0].data = malloc(BLOCK_HEAD_BYTES + w->cap_bytes);
	w->bufs[1].data = malloc(BLOCK_HEAD_BYTES + w->cap_bytes);
	if (!w->bufs[0].data || !w->bufs[1].data) {
		free_writer(w);
		return NULL;
	}
	/* fault the buffers in now, not a page at a time inside the workload's calls */
	touch_pages(w->bufs[0].data, BLOCK_HEAD_BYTES + w->cap_bytes);
	touch_pages(w->bufs[1].data, BLOCK_HEAD_BYTES + w->cap_bytes);
	return w;
}

/* Start the thread with every signal blocked, so no handler runs on it. */
static int start_thread(struct mp_spool_writer *w)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	if (pthread_condattr_init(&ca) != 0)
		return -ENOMEM;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->wake, &ca);
	pthread_cond_init(&w->done, NULL);
	pthread_condattr_destroy(&ca);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->wake);
		pthread_cond_destroy(&w->done);
		return -rc;
	}
	return 0;
}

int mp_spool_writer_open(struct mp_spool_writer **out, const char *path,
                         const struct mp_spool_header *h, const struct mp_spool_writer_opts *o)
{
	struct mp_spool_writer *w = new_writer(o);
	struct mp_spool_header hd = *h;
	int rc;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	memcpy(hd.magic, MP_SPOOL_MAGIC, sizeof(hd.magic));
	hd.version = MP_SPOOL_VERSION;
	hd.header_bytes = sizeof(hd);
	hd.event_bytes = sizeof(struct mp_spool_event);
	hd.byte_order = MP_SPOOL_BYTE_ORDER;
	w->fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		rc = -errno;
		free_writer(w);
		return rc;
	}
	rc = write_all(w->fd, &hd, sizeof(hd));
	if (rc == 0)
		rc = start_thread(w);
	if (rc < 0) {
		close(w->fd);
		unlink(path);
		free_writer(w);
		return rc;
	}
	*out = w;
	return 0;
}

/* Lock held: append the footer alone in a block of its own. */
static void append_footer_locked(struct mp_spool_writer *w, int64_t end_mono_ns, int disabled)
{
	struct mp_spool_footer ft;
	unsigned char *p;

	memset(&ft, 0, sizeof(ft));
	ft.head.type = MP_SI_FOOTER;
	ft.head.bytes = sizeof(ft);
	ft.n_events = mp_spool_n_events(w);
	ft.n_dropped = mp_spool_n_dropped(w);
	ft.end_mono_ns = end_mono_ns;
	ft.disabled = disabled ? 1 : 0;
	w->off = 0;
	p = reserve_locked(w, sizeof(ft));
	w->off = 1;
	if (p)
		memcpy(p, &ft, sizeof(ft));
}

int mp_spool_writer_close(struct mp_spool_writer *w, int64_t end_mono_ns, int disabled)
{
	int rc;

	pthread_mutex_lock(&w->mu);
	if (!w->off) {
		w->off = 1; /* later appends (other threads) are dropped */
		pthread_mutex_unlock(&w->mu);
		mp_spool_flush(w, 1);
		pthread_mutex_lock(&w->mu);
		if (!w->error)
			append_footer_locked(w, end_mono_ns, disabled);
	}
	w->stop = 1;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	rc = w->error;
	if (fsync(w->fd) < 0 && rc == 0 && errno != EINVAL && errno != EROFS)
		rc = -errno;
	if (close(w->fd) < 0 && rc == 0 && errno != EINTR)
		rc = -errno;
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->wake);
	pthread_cond_destroy(&w->done);
	free_writer(w);
	return rc;
}

void mp_spool_writer_forget(struct mp_spool_writer *w)
{
	if (w)
		free_writer(w);
}
