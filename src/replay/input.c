/*
 * replay/input.c - reads a trace into the compact per-device arrays of
 * input.h, as a consumer of the reader's push pass (mp_reader_run).  Block and segment events are
 * both collected while reading; a device is replayed at the block level when it has block
 * allocations, else at the segment level.  Call sites and phases are interned once each. With a
 * rank, only that rank's processes are read (replay --mpi). Owns the input's memory; never touches
 * the pools or the backends.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/input.h"
#include "replay/input_seed.h"
#include "replay/live_ids.h"
#include "util/intmap.h"
#include "util/stack_text.h"
#include "util/strmap.h"
#include "util/array.h"

/* One level of one device while loading: its allocations and ops. */
struct level_build {
	struct mp_replay_alloc *allocs;
	size_t n_allocs, cap_allocs;
	uint32_t *ops;
	uint32_t *op_dseq;
	size_t n_ops, cap_ops;
	int64_t last_seq;           /* of the last op */
	struct mp_intmap *far_dseq; /* op -> seq step, for steps op_dseq cannot hold */
	/* (process, id) -> alloc index << 1 | 1 once a free_requested ended its live time */
	struct mp_live_ids live;
	int64_t n_unmatched;
};

struct device_build {
	int32_t ordinal;
	struct level_build block, segment;
	uint64_t reserved_bytes, peak_reserved_bytes; /* as the trace recorded them */
	uint64_t n_segments, n_live_segments, segments_at_peak;
	int has_segments;
	uint64_t n_ooms;
	struct mp_seed_build seed; /* the window's starting state (input_seed.c) */
};

/* The interned strings: owned by the input once loaded. */
struct strings {
	struct mp_strmap site_ids, phase_ids;
};

struct loader {
	struct device_build *devs;
	size_t n_devs;
	struct strings *str;
	struct mp_intmap stack_site; /* stack id -> site index, for ids past site_by_stack */
	uint32_t *site_by_stack;     /* [stack id]: site index + 1, 0: not seen (ids are dense) */
	size_t n_site_by_stack;
	/* phase text -> index, by the reader's pointer (stable while it reads) */
	struct phase_hint {
		const char *text;
		int64_t idx;
	} phase_hint[16];
	struct mp_intmap stream_ids; /* stream -> index into streams */
	uint64_t *streams;
	size_t n_streams, cap_streams;
	const char **sites, **phases;
	size_t n_sites, n_phases, cap_sites, cap_phases;
	int device_filter;
	const struct mp_intmap *processes; /* ids of the processes kept; NULL: all */
	int has_stacks;
	/* streams lately looked up, and what they gave (idx -1: none yet):
	 * events repeat a few, and a lookup hashes */
	struct stream_hint {
		uint64_t stream;
		int64_t idx;
	} stream_hint[16];
	struct mp_replay_input *in; /* being read: its event count */
	struct mp_error *err;
};

static int push_op(struct level_build *lb, uint32_t op, int64_t seq)
{
	size_t cap = lb->cap_ops;
	uint64_t step = (uint64_t)seq - (uint64_t)lb->last_seq;

	if (mp_array_reserve((void **)&lb->ops, &cap, lb->n_ops + 1, sizeof *lb->ops) < 0 ||
	    mp_array_reserve((void **)&lb->op_dseq, &lb->cap_ops, lb->n_ops + 1,
	                     sizeof *lb->op_dseq) < 0)
		return MP_ENOMEM;
	if (step >= MP_REPLAY_DSEQ_FAR) { /* 2^32 events apart, or back: kept aside */
		if (!lb->far_dseq) {
			if (!(lb->far_dseq = calloc(1, sizeof *lb->far_dseq)))
				return MP_ENOMEM;
			mp_intmap_init(lb->far_dseq);
		}
		if (mp_intmap_put(lb->far_dseq, lb->n_ops, step) < 0)
			return MP_ENOMEM;
		step = MP_REPLAY_DSEQ_FAR;
	}
	lb->ops[lb->n_ops] = op;
	lb->op_dseq[lb->n_ops++] = (uint32_t)step;
	lb->last_seq = seq;
	return 0;
}

/* The index of stream s in the input's streams, or MP_ENOMEM. */
static int64_t stream_of(struct loader *L, uint64_t s)
{
	struct stream_hint *h = &L->stream_hint[(s ^ s >> 8 ^ s >> 16) & 15];
	uint64_t idx;

	if (h->idx >= 0 && h->stream == s)
		return h->idx;
	if (mp_intmap_get(&L->stream_ids, s, &idx)) {
		*h = (struct stream_hint){s, (int64_t)idx};
		return (int64_t)idx;
	}
	if (mp_array_reserve((void **)&L->streams, &L->cap_streams, L->n_streams + 1,
	                     sizeof *L->streams) < 0 ||
	    mp_intmap_put(&L->stream_ids, s, L->n_streams) < 0)
		return MP_ENOMEM;
	L->streams[L->n_streams] = s;
	*h = (struct stream_hint){s, (int64_t)L->n_streams};
	return (int64_t)L->n_streams++;
}

/* Interns s into (map, array); 0 for NULL.  Returns the index or MP_ENOMEM. */
static int64_t intern(struct mp_strmap *map, const char ***arr, size_t *n, size_t *cap,
                      const char *s)
{
	int64_t idx;
	const char *stored;

	if (!s)
		return 0;
	if (mp_strmap_get(map, s, strlen(s), &idx))
		return idx;
	if (*n == 0)
		*n = 1; /* index 0 is "none" */
	if (mp_array_reserve((void **)arr, cap, *n + 1, sizeof **arr) < 0)
		return MP_ENOMEM;
	(*arr)[0] = NULL;
	idx = (int64_t)*n;
	if (mp_strmap_put(map, s, strlen(s), idx, &stored) < 0)
		return MP_ENOMEM;
	(*arr)[(*n)++] = stored;
	return idx;
}

/* The site of stack id (known: 1 + its index; 0: not seen yet). */
static inline int64_t known_site(const struct loader *L, int64_t id)
{
	uint64_t idx;

	if (id > 0 && (uint64_t)id < L->n_site_by_stack)
		return L->site_by_stack[id];
	return mp_intmap_get(&L->stack_site, (uint64_t)id, &idx) ? (int64_t)idx + 1 : 0;
}

/*
 * Stack id gives site v from now: in the table when the id is below twice
 * the events read so far (and a little), else in the map.  0 or MP_ENOMEM.
 */
static int note_site(struct loader *L, int64_t id, int64_t v)
{
	size_t need = (size_t)id + 1, cap = L->n_site_by_stack;

	if (id <= 0 || (uint64_t)id >= 2 * (uint64_t)L->in->n_events + 4096 || id >= INT32_MAX)
		return mp_intmap_put(&L->stack_site, (uint64_t)id, (uint64_t)v) < 0 ? MP_ENOMEM : 0;
	if (need > cap) {
		if (mp_array_reserve((void **)&L->site_by_stack, &cap, need,
		                     sizeof *L->site_by_stack) < 0)
			return MP_ENOMEM;
		memset(L->site_by_stack + L->n_site_by_stack, 0,
		       (cap - L->n_site_by_stack) * sizeof *L->site_by_stack);
		L->n_site_by_stack = cap;
	}
	L->site_by_stack[id] = (uint32_t)v + 1;
	return 0;
}

static int64_t site_of(struct loader *L, const struct memprof_record *rec)
{
	char text[1024];
	const struct memprof_frame *f;
	int i;
	int64_t v;

	if (!rec->stack || rec->ev.stack_id == 0)
		return 0;
	if ((v = known_site(L, rec->ev.stack_id)) > 0)
		return v - 1;
	i = mp_stack_call_site(rec->stack);
	if (i < 0)
		return 0;
	f = &rec->stack->frames[i];
	if (f->file && f->file[0] && f->line > 0)
		snprintf(text, sizeof text, "%s (%s:%" PRId64 ")", f->name, f->file, f->line);
	else
		snprintf(text, sizeof text, "%s", f->name);
	v = intern(&L->str->site_ids, &L->sites, &L->n_sites, &L->cap_sites, text);
	if (v < 0 || note_site(L, rec->ev.stack_id, v) < 0)
		return MP_ENOMEM;
	L->has_stacks = 1;
	return v;
}

/* The index of phase text s (the reader's), by its pointer when seen lately. */
static int64_t phase_of(struct loader *L, const char *s)
{
	struct phase_hint *h = &L->phase_hint[((uintptr_t)s >> 4) & 15];
	int64_t idx;

	if (!s)
		return 0;
	if (h->text == s)
		return h->idx;
	idx = intern(&L->str->phase_ids, &L->phases, &L->n_phases, &L->cap_phases, s);
	if (idx >= 0)
		*h = (struct phase_hint){s, idx};
	return idx;
}

static struct device_build *device_of(struct loader *L, int32_t ordinal)
{
	size_t i, cap = L->n_devs;
	struct device_build *d;

	for (i = 0; i < L->n_devs; i++)
		if (L->devs[i].ordinal == ordinal)
			return &L->devs[i];
	if (mp_array_reserve((void **)&L->devs, &cap, L->n_devs + 1, sizeof *L->devs) < 0)
		return NULL;
	d = &L->devs[L->n_devs++];
	memset(d, 0, sizeof *d);
	d->ordinal = ordinal;
	mp_live_ids_init(&d->block.live);
	mp_live_ids_init(&d->segment.live);
	return d;
}

/* A new allocation of level lb, live from now, keyed by (process, key). */
static int begin_alloc(struct loader *L, struct level_build *lb, const struct memprof_record *rec,
                       uint64_t key)
{
	struct mp_replay_alloc *a;
	int64_t site, phase, stream;
	int reused;

	if (lb->n_allocs == MP_REPLAY_MAX_ALLOCS)
		return mp_err(L->err, MP_EINVAL,
		              "trace too long to replay: device %d has more than %zu allocations "
		              "(event %lld)",
		              (int)rec->ev.device, MP_REPLAY_MAX_ALLOCS, (long long)rec->ev.seq);
	if (mp_array_reserve((void **)&lb->allocs, &lb->cap_allocs, lb->n_allocs + 1,
	                     sizeof *lb->allocs) < 0)
		return MP_ENOMEM;
	site = site_of(L, rec);
	phase = phase_of(L, rec->phase);
	stream = stream_of(L, rec->ev.stream);
	if (site < 0 || phase < 0 || stream < 0)
		return MP_ENOMEM;
	a = &lb->allocs[lb->n_allocs];
	a->size_bytes = rec->ev.size_bytes > 0 ? (uint64_t)rec->ev.size_bytes : 0;
	a->requested_bytes =
	        rec->ev.requested_bytes > 0 ? (uint64_t)rec->ev.requested_bytes : a->size_bytes;
	if (a->requested_bytes > a->size_bytes)
		a->requested_bytes = a->size_bytes;
	a->ts_ns = rec->ev.ts_ns;
	a->free_ts_ns = INT64_MAX;
	a->stream = a->free_stream = (uint32_t)stream;
	a->site = (uint32_t)site;
	a->phase = (uint32_t)phase;
	if (mp_live_ids_add(&lb->live, rec->ev.process_id, key, (uint32_t)lb->n_allocs << 1,
	                    lb->n_allocs, &reused) < 0)
		return MP_ENOMEM;
	lb->n_unmatched += reused; /* id reused while live: the trace lost a free */
	if (push_op(lb, MP_REPLAY_OP(lb->n_allocs, MP_OP_ALLOC), rec->ev.seq) < 0)
		return MP_ENOMEM;
	lb->n_allocs++;
	return 0;
}

/* The end of liveness (free_requested) or the free of the allocation keyed (process, key). */
static int end_alloc(struct loader *L, struct level_build *lb, const struct memprof_record *rec,
                     uint64_t key, int is_free)
{
	struct mp_replay_alloc *a;
	struct mp_live_ref ref;
	uint32_t v, idx;
	int64_t stream;

	if (!mp_live_ids_find(&lb->live, rec->ev.process_id, key, &ref)) {
		lb->n_unmatched++;
		return 0;
	}
	v = mp_live_ids_value(&ref);
	idx = v >> 1;
	a = &lb->allocs[idx];
	if (!is_free) {
		mp_live_ids_set(&ref, v | 1);
		return push_op(lb, MP_REPLAY_OP(idx, MP_OP_LIVE_END), rec->ev.seq);
	}
	mp_live_ids_remove(&ref); /* before stream_of: it touches no live map */
	if ((stream = stream_of(L, rec->ev.stream)) < 0)
		return MP_ENOMEM;
	a->free_ts_ns = rec->ev.ts_ns;
	a->free_stream = (uint32_t)stream;
	return push_op(lb, MP_REPLAY_OP(idx, (v & 1) ? MP_OP_FREE_ENDED : MP_OP_FREE), rec->ev.seq);
}

static int on_record(void *ctx, const struct memprof_record *rec)
{
	struct loader *L = ctx;
	const struct memprof_event *ev = &rec->ev;
	struct device_build *d;

	uint64_t kept;

	L->in->n_events++;
	if (L->device_filter >= 0 && ev->device != L->device_filter)
		return 0;
	if (L->processes && !mp_intmap_get(L->processes, (uint64_t)ev->process_id, &kept))
		return 0;
	if (ev->op == MEMPROF_OP_PHASE_BEGIN || ev->op == MEMPROF_OP_PHASE_END)
		return 0;
	if (!(d = device_of(L, ev->device)))
		return MP_ENOMEM;
	if (mp_seed_note(&d->seed, ev, (int64_t)d->block.n_allocs, d->block.n_ops) < 0)
		return MP_ENOMEM;
	switch (ev->op) {
	case MEMPROF_OP_OOM:
		d->n_ooms++;
		return 0;
	case MEMPROF_OP_ALLOC:
	case MEMPROF_OP_PREEXISTING:
		return begin_alloc(L, &d->block, rec, (uint64_t)ev->alloc_id);
	case MEMPROF_OP_FREE_REQUESTED:
		return end_alloc(L, &d->block, rec, (uint64_t)ev->alloc_id, 0);
	case MEMPROF_OP_FREE:
		return end_alloc(L, &d->block, rec, (uint64_t)ev->alloc_id, 1);
	case MEMPROF_OP_RESERVE:
	case MEMPROF_OP_MAP:
		d->has_segments = 1;
		d->n_segments++;
		d->n_live_segments++;
		d->reserved_bytes += ev->size_bytes > 0 ? (uint64_t)ev->size_bytes : 0;
		if (d->reserved_bytes > d->peak_reserved_bytes) {
			d->peak_reserved_bytes = d->reserved_bytes;
			d->segments_at_peak = d->n_live_segments;
		}
		/* maps are matched to unmaps by address, reservations by id */
		return begin_alloc(L, &d->segment, rec,
		                   ev->op == MEMPROF_OP_MAP ? ev->address : (uint64_t)ev->alloc_id);
	case MEMPROF_OP_RELEASE:
	case MEMPROF_OP_UNMAP: {
		uint64_t n = ev->size_bytes > 0 ? (uint64_t)ev->size_bytes : 0;
		d->reserved_bytes -= n < d->reserved_bytes ? n : d->reserved_bytes;
		d->n_live_segments -= d->n_live_segments > 0;
		return end_alloc(L, &d->segment, rec,
		                 ev->op == MEMPROF_OP_UNMAP ? ev->address : (uint64_t)ev->alloc_id,
		                 1);
	}
	default:
		return 0;
	}
}

static void far_free(struct mp_intmap *m)
{
	if (m)
		mp_intmap_free(m);
	free(m);
}

static void level_free(struct level_build *lb)
{
	free(lb->allocs);
	free(lb->ops);
	free(lb->op_dseq);
	far_free(lb->far_dseq);
	mp_live_ids_free(&lb->live);
}

/* Cut an array of n items of size elem to its length (the doubling's slack). */
static void *fit(void *p, size_t n, size_t elem)
{
	void *q = n ? realloc(p, n * elem) : NULL;

	return q ? q : p;
}

/* Moves the chosen level of b into d and frees the other. */
static int finish_device(struct device_build *b, struct mp_replay_device *d)
{
	struct level_build *use = &b->block;

	d->ordinal = b->ordinal;
	d->level = MP_LEVEL_BLOCK;
	if (b->block.n_allocs == 0 && b->segment.n_allocs > 0) {
		use = &b->segment;
		d->level = MP_LEVEL_SEGMENT;
	}
	d->allocs = fit(use->allocs, use->n_allocs, sizeof *use->allocs);
	d->n_allocs = use->n_allocs;
	d->ops = fit(use->ops, use->n_ops, sizeof *use->ops);
	d->op_dseq = fit(use->op_dseq, use->n_ops, sizeof *use->op_dseq);
	d->far_dseq = use->far_dseq;
	d->n_ops = use->n_ops;
	d->n_unmatched_frees = use->n_unmatched;
	d->trace_peak_reserved_bytes = b->peak_reserved_bytes;
	d->trace_segments = b->n_segments;
	d->trace_segments_at_peak = b->segments_at_peak;
	d->has_segments = b->has_segments;
	d->trace_ooms = b->n_ooms;
	use->allocs = NULL;
	use->ops = NULL;
	use->op_dseq = NULL;
	use->far_dseq = NULL;
	level_free(&b->block);
	level_free(&b->segment);
	if (d->level != MP_LEVEL_BLOCK)
		mp_seed_free(&b->seed);
	return d->level == MP_LEVEL_BLOCK ? mp_seed_finish(&b->seed, d) : 0;
}

static int by_ordinal(const void *a, const void *b)
{
	const struct device_build *x = a, *y = b;
	return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

static int collect(struct loader *L, struct mp_replay_input *in)
{
	size_t i;
	int rc = 0;

	if (L->n_devs)
		qsort(L->devs, L->n_devs, sizeof *L->devs, by_ordinal);
	in->devices = calloc(L->n_devs ? L->n_devs : 1, sizeof *in->devices);
	if (!in->devices)
		return MP_ENOMEM;
	for (i = 0; i < L->n_devs; i++)
		if (finish_device(&L->devs[i], &in->devices[i]) < 0)
			rc = MP_ENOMEM;
	in->n_devices = L->n_devs;
	L->n_devs = 0;
	in->sites = L->sites;
	in->n_sites = L->n_sites;
	in->phases = L->phases;
	in->n_phases = L->n_phases;
	in->streams = L->streams;
	in->n_streams = L->n_streams;
	L->streams = NULL;
	in->has_stacks = L->has_stacks;
	in->owned = L->str;
	L->sites = L->phases = NULL;
	L->str = NULL;
	return rc;
}

static void loader_free(struct loader *L)
{
	for (size_t i = 0; i < L->n_devs; i++) {
		level_free(&L->devs[i].block);
		level_free(&L->devs[i].segment);
		mp_seed_free(&L->devs[i].seed);
	}
	free(L->devs);
	mp_intmap_free(&L->stack_site);
	free(L->site_by_stack);
	mp_intmap_free(&L->stream_ids);
	free(L->streams);
	if (L->str) {
		mp_strmap_free(&L->str->site_ids);
		mp_strmap_free(&L->str->phase_ids);
		free(L->str);
	}
	free(L->sites);
	free(L->phases);
}

static int load(struct mp_reader *r, int device, const struct mp_intmap *processes,
                struct mp_replay_input **out, struct mp_error *err)
{
	struct loader L = {.device_filter = device, .processes = processes, .err = err};
	struct mp_consumer consumer = {
	        .name = "replay input", .ctx = &L, .flags = MP_READ_STACKS, .on_record = on_record};
	struct mp_replay_input *in = calloc(1, sizeof *in);
	int rc;

	*out = NULL;
	L.str = calloc(1, sizeof *L.str);
	if (!in || !L.str) {
		free(in);
		free(L.str);
		return mp_err(err, MP_ENOMEM, "out of memory reading the trace");
	}
	for (size_t k = 0; k < 16; k++)
		L.stream_hint[k].idx = -1;
	mp_strmap_init(&L.str->site_ids);
	mp_strmap_init(&L.str->phase_ids);
	mp_intmap_init(&L.stack_site);
	mp_intmap_init(&L.stream_ids);
	L.in = in;
	if ((rc = mp_reader_add(r, &consumer)) == 0)
		rc = mp_reader_run(r);
	if (rc == 0)
		rc = collect(&L, in);
	loader_free(&L);
	if (rc < 0) {
		mp_replay_input_free(in);
		if (rc == MP_ENOMEM)
			return mp_err(err, MP_ENOMEM, "out of memory reading the trace for replay");
		return rc;
	}
	*out = in;
	return 0;
}

int mp_replay_input_load(struct mp_reader *r, int device, struct mp_replay_input **out,
                         struct mp_error *err)
{
	return load(r, device, NULL, out, err);
}

static int by_rank(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* "0, 1, 3" into buf: the distinct ranks[0..n), sorted. */
static void rank_list(char *buf, size_t size, const int64_t *ranks, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len + 16 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "",
		                        (long long)ranks[i]);
	if (len + 16 >= size && size > 4)
		snprintf(buf + size - 5, 5, "...");
}

/* The distinct ranks of p sorted into ranks (room for n); their number. */
static size_t distinct_ranks(const struct memprof_process *p, size_t n, int64_t *ranks)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (p[i].rank >= 0)
			ranks[k++] = p[i].rank;
	if (k)
		qsort(ranks, k, sizeof *ranks, by_rank);
	size_t m = 0;
	for (size_t i = 0; i < k; i++)
		if (m == 0 || ranks[m - 1] != ranks[i])
			ranks[m++] = ranks[i];
	return m;
}

/* Checks the trace's ranks are 0..n_ranks-1 with rank among them. */
static int check_ranks(const char *path, const int64_t *ranks, size_t n, int rank, int n_ranks,
                       size_t n_processes, struct mp_error *err)
{
	char list[256];
	int have = 0;

	if (n == 0)
		return mp_err(err, MP_EINVAL,
		              "trace '%s' has no ranks: none of its %zu processes carries one "
		              "(label per-rank traces with 'memprof import --rank=N', then merge "
		              "them)",
		              path, n_processes);
	rank_list(list, sizeof list, ranks, n);
	if (n != (size_t)n_ranks)
		return mp_err(err, MP_EINVAL,
		              "trace '%s' has %zu rank%s (%s) but %d MPI ranks replay it: run "
		              "it with mpirun -np %zu",
		              path, n, n == 1 ? "" : "s", list, n_ranks, n);
	for (size_t i = 0; i < n; i++)
		have |= ranks[i] == rank;
	if (!have)
		return mp_err(err, MP_EINVAL, "trace '%s' has no rank %d (its ranks: %s)", path,
		              rank, list);
	return 0;
}

int mp_replay_input_load_rank(struct mp_store *s, const char *path, struct mp_reader *r, int device,
                              int rank, int n_ranks, struct mp_replay_input **out,
                              struct mp_error *err)
{
	struct memprof_process *p = NULL;
	struct mp_intmap keep;
	size_t n = 0, n_unranked = 0;
	int64_t *ranks;
	int rc;

	*out = NULL;
	if (mp_store_processes(s, &p, &n) < 0)
		return mp_err(err, MP_EIO, "cannot read the processes of trace '%s': %s", path,
		              mp_store_errmsg(s));
	mp_intmap_init(&keep);
	ranks = calloc(n ? n : 1, sizeof *ranks);
	rc = ranks ? check_ranks(path, ranks, distinct_ranks(p, n, ranks), rank, n_ranks, n, err)
	           : mp_err(err, MP_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		n_unranked += p[i].rank < 0;
		if (p[i].rank == rank && mp_intmap_put(&keep, (uint64_t)p[i].id, 1) < 0)
			rc = mp_err(err, MP_ENOMEM, "out of memory");
	}
	if (rc == 0 && (rc = load(r, device, &keep, out, err)) == 0)
		(*out)->n_unranked_processes = n_unranked;
	mp_intmap_free(&keep);
	free(ranks);
	mp_store_free_processes(p, n);
	return rc;
}

void mp_replay_input_free(struct mp_replay_input *in)
{
	struct strings *str;

	if (!in)
		return;
	for (size_t i = 0; i < in->n_devices; i++) {
		free(in->devices[i].allocs);
		free(in->devices[i].ops);
		free(in->devices[i].op_dseq);
		far_free(in->devices[i].far_dseq);
		free(in->devices[i].seed_segments);
		free(in->devices[i].seed_blocks);
	}
	free(in->devices);
	free(in->sites);
	free(in->phases);
	free(in->streams);
	if ((str = in->owned)) {
		mp_strmap_free(&str->site_ids);
		mp_strmap_free(&str->phase_ids);
		free(str);
	}
	free(in);
}

/*
 * The step of each op for plan(): a run of consecutive allocs shares one
 * step, as does a run of frees, and each change from one to the other is a
 * new step, so that an alloc's step is below a free's exactly when the alloc
 * comes first (MiniMalloc's logical time).  LIVE_END ops do not count: the
 * pool keeps a block until its free.
 */
static void op_steps(const struct mp_replay_device *d, int64_t *alloc_step, int64_t *free_step)
{
	int64_t step = 0;
	int last = -1;

	for (size_t k = 0; k < d->n_ops; k++) {
		int kind = MP_REPLAY_OP_KIND(d->ops[k]);
		size_t i = (size_t)MP_REPLAY_OP_INDEX(d->ops[k]);

		if (kind == MP_OP_LIVE_END)
			continue;
		if (kind == MP_OP_FREE_ENDED)
			kind = MP_OP_FREE;
		if (last >= 0 && kind != last)
			step++;
		last = kind;
		if (kind == MP_OP_ALLOC)
			alloc_step[i] = step;
		else
			free_step[i] = step;
	}
}

/*
 * Whether the trace's timestamps can order the lifetimes: never going back
 * in the order of the ops the pool sees, and not all equal.
 */
static int times_usable(const struct mp_replay_device *d)
{
	int64_t first = 0, last = INT64_MIN;

	for (size_t k = 0; k < d->n_ops; k++) {
		int kind = MP_REPLAY_OP_KIND(d->ops[k]);
		const struct mp_replay_alloc *a = &d->allocs[MP_REPLAY_OP_INDEX(d->ops[k])];
		int64_t t = kind == MP_OP_ALLOC ? a->ts_ns : a->free_ts_ns;

		if (kind == MP_OP_LIVE_END)
			continue;
		if (t < last)
			return 0;
		if (last == INT64_MIN)
			first = t;
		last = t;
	}
	return last > first;
}

struct memprof_pool_lifetime *mp_replay_input_lifetimes(const struct mp_replay_input *in,
                                                        const struct mp_replay_device *d)
{
	size_t n = d->n_allocs ? d->n_allocs : 1;
	struct memprof_pool_lifetime *items = malloc(n * sizeof *items); /* each item set whole */
	int64_t *steps = malloc(2 * n * sizeof *steps);
	int timed;

	if (!items || !steps) {
		free(items);
		free(steps);
		return NULL;
	}
	for (size_t i = 0; i < 2 * n; i++)
		steps[i] = INT64_MAX;
	op_steps(d, steps, steps + n);
	timed = times_usable(d);
	for (size_t i = 0; i < d->n_allocs; i++) {
		const struct mp_replay_alloc *a = &d->allocs[i];
		items[i] = (struct memprof_pool_lifetime){
		        .index = (int64_t)i,
		        .size_bytes = a->size_bytes,
		        .alloc_at = steps[i],
		        .free_at = steps[n + i],
		        .stream = in->streams[a->stream],
		        .site = in->sites ? in->sites[a->site] : NULL,
		        .phase = in->phases ? in->phases[a->phase] : NULL,
		        .alloc_ts = timed ? a->ts_ns : MEMPROF_POOL_NO_TIME,
		        .free_ts = !timed                      ? MEMPROF_POOL_NO_TIME
		                   : steps[n + i] == INT64_MAX ? INT64_MAX
		                                               : a->free_ts_ns,
		};
	}
	free(steps);
	return items;
}
