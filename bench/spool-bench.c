/*
 * bench/spool-bench.c - what appending an event to a spool costs the
 * profiled workload's threads, beside a floor doing the least such an append
 * can do, in one run, alternating between them.
 *
 * For each thread count T (--threads=1,2), T threads append --events=N
 * events in all (N/T each, each event with an address of its own):
 *
 *   floor           pthread_mutex_lock, memcpy of the same 96-byte struct
 *                   mp_spool_event into a buffer of the writer's size
 *                   (starting over at its end), pthread_mutex_unlock;
 *   mp_spool_event  through the spool writer (src/spool/writer.c)
 *                   to a spool in a temporary directory, its background
 *                   thread writing full buffers to the file meanwhile;
 *   + stack lookup  mp_spool_stack of an already-interned 16-frame stack,
 *                   then mp_spool_event: what --stacks=all costs per event
 *                   beyond unwinding;
 *   warm buffers    mp_spool_event as in the second line, after each of
 *                   the writer's two buffers has been filled whole and
 *                   written (not timed): the writer as a workload sees it
 *                   once it has run a while.
 *                   Each writer run opens a fresh writer, whose buffers are
 *                   calloc'd (GCC turns its malloc + memset into calloc), so
 *                   in the other two lines the first write to each page of
 *                   them takes a page fault, as at the start of a workload.
 *
 * The four alternate (floor, writer, writer + stack, warm writer, floor,
 * ...) --reps times.  Timed: from the moment the threads leave a barrier to
 * the moment the last one has appended its events; not timed: opening the
 * writer, interning the stack and a name, the warm-up, the close (footer,
 * flush, fsync).  Each writer run must keep every event (n_events = N,
 * n_dropped = 0); the buffers are 64 MiB, the largest a block may be.  The
 * page faults of the process during the timed part are counted too.
 *
 * The default N, 600,000 events (55 MiB), fits in one of the writer's
 * buffers (699,050 events), so none can be dropped whatever the writer's
 * 200 ms flush timer does: if it seals the buffer part-filled, the rest fit
 * in the other.  Beyond that the writer's thread may have to empty a buffer
 * while the threads fill the other, and it checksums (a byte at a time) and
 * writes a 64 MiB block several times more slowly than a tight loop fills
 * one: such runs drop events (both buffers full), and the bench says so.
 * Two buffers hold 1,398,100 events only when the timer seals neither early.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool/format.h"
#include "spool/writer.h"
#include "util/parse.h"

#define MAX_REPS    31
#define MAX_THREADS 64
#define MAX_TCOUNTS 8
#define BUF_BYTES   ((size_t)MP_SPOOL_MAX_BLOCK) /* 64 MiB, each writer buffer and the floor's */
#define STACK_DEPTH 16

enum mode { M_FLOOR, M_WRITER, M_STACKS, M_WARM, N_MODES };

static const char *const mode_label[N_MODES] = {
        "floor: lock + memcpy + unlock",
        "mp_spool_event",
        "mp_spool_event + stack lookup",
        "mp_spool_event, warm buffers",
};

/*
 * memset through a pointer the compiler cannot see through: GCC turns
 * malloc followed by memset(0) into calloc, which leaves fresh pages
 * untouched (and the first write to each then takes a page fault).
 */
static void *(*volatile touch_memset)(void *, int, size_t) = memset;

struct opts {
	uint64_t n_events;
	int reps;
	int tcounts[MAX_TCOUNTS];
	int n_tcounts;
};

/* The floor: one buffer under one mutex, written from the start again when full. */
struct floor_buf {
	pthread_mutex_t mu;
	unsigned char *data;
	size_t cap, used;
	uint64_t n;
};

/* One timed run, shared by its threads. */
struct run {
	enum mode mode;
	struct floor_buf *fl;
	struct mp_spool_writer *w;
	uint32_t name_id;
	const uint64_t *pcs;
	pthread_barrier_t start;
};

struct worker {
	struct run *r;
	pthread_t th;
	int idx;
	uint64_t n;      /* events to append */
	uint64_t failed; /* appends that returned -1 (dropped) */
	uint64_t t0, t1;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("spool-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static char tmp_dir[4096]; /* removed at exit, with a spool left in it by die() */

static void remove_tmp_dir(void)
{
	char path[4200];

	if (!tmp_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/bench.mpt", tmp_dir);
	unlink(path);
	rmdir(tmp_dir);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct run *r = wk->r;
	struct floor_buf *fl = r->fl;
	struct mp_spool_event ev;
	uint64_t base = 0x7f0000000000ull + ((uint64_t)wk->idx << 36), failed = 0;

	memset(&ev, 0, sizeof(ev));
	ev.head.type = MP_SI_EVENT;
	ev.head.bytes = sizeof(ev);
	ev.kind = MP_SK_MEM_ALLOC;
	ev.mem_kind = MP_MK_DEVICE;
	ev.device = 0;
	ev.thread = (uint32_t)wk->idx + 1;
	ev.correlation = 1;
	ev.name = r->name_id;
	ev.bytes = 1u << 20;
	ev.stream = 7;
	pthread_barrier_wait(&r->start);
	wk->t0 = now_ns();
	switch (r->mode) {
	case M_FLOOR:
		for (uint64_t i = 0; i < wk->n; i++) {
			ev.address = base + (i << 9);
			ev.ts_ns = (int64_t)i;
			pthread_mutex_lock(&fl->mu);
			if (fl->used + sizeof(ev) > fl->cap)
				fl->used = 0;
			memcpy(fl->data + fl->used, &ev, sizeof(ev));
			fl->used += sizeof(ev);
			fl->n++;
			pthread_mutex_unlock(&fl->mu);
		}
		break;
	case M_WRITER:
	case M_WARM:
		for (uint64_t i = 0; i < wk->n; i++) {
			ev.address = base + (i << 9);
			ev.ts_ns = (int64_t)i;
			if (mp_spool_event(r->w, &ev) < 0)
				failed++;
		}
		break;
	case M_STACKS:
		for (uint64_t i = 0; i < wk->n; i++) {
			ev.address = base + (i << 9);
			ev.ts_ns = (int64_t)i;
			ev.stack = mp_spool_stack(r->w, r->pcs, STACK_DEPTH);
			if (mp_spool_event(r->w, &ev) < 0)
				failed++;
		}
		break;
	default:
		break;
	}
	wk->t1 = now_ns();
	wk->failed = failed;
	return NULL;
}

static uint64_t n_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
}

/* Start the threads, time them from the barrier to the last one's end; the span in ns. */
static uint64_t run_threads(struct run *r, int nt, uint64_t n_events, uint64_t *failed,
                            uint64_t *faults)
{
	struct worker wk[MAX_THREADS];
	uint64_t t0 = UINT64_MAX, t1 = 0, f0 = n_faults();
	int rc;

	if (pthread_barrier_init(&r->start, NULL, (unsigned)nt) != 0)
		die("pthread_barrier_init failed");
	for (int i = 0; i < nt; i++) {
		wk[i] = (struct worker){.r = r, .idx = i, .n = n_events / (uint64_t)nt};
		if ((uint64_t)i < n_events % (uint64_t)nt)
			wk[i].n++;
		rc = pthread_create(&wk[i].th, NULL, worker_main, &wk[i]);
		if (rc != 0)
			die("pthread_create: %s", strerror(rc));
	}
	*failed = 0;
	for (int i = 0; i < nt; i++) {
		pthread_join(wk[i].th, NULL);
		if (wk[i].t0 < t0)
			t0 = wk[i].t0;
		if (wk[i].t1 > t1)
			t1 = wk[i].t1;
		*failed += wk[i].failed;
	}
	pthread_barrier_destroy(&r->start);
	*faults = n_faults() - f0;
	return t1 - t0;
}

static uint64_t time_floor(struct floor_buf *fl, int nt, uint64_t n_events, uint64_t *faults)
{
	struct run r = {.mode = M_FLOOR, .fl = fl, .name_id = 1};
	uint64_t failed, ns;

	fl->used = 0;
	fl->n = 0;
	ns = run_threads(&r, nt, n_events, &failed, faults);
	if (fl->n != n_events)
		die("floor: %" PRIu64 " events copied, %" PRIu64 " expected", fl->n, n_events);
	return ns;
}

static uint64_t file_bytes(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		die("stat %s: %s", path, strerror(errno));
	return (uint64_t)st.st_size;
}

/*
 * M_WARM, not timed: fill a buffer's worth of events and have them written
 * (a round), until each of the two buffers has been filled whole in one
 * round, so that all its pages have been touched, as in a workload that has
 * run a while.  The writer's flush timer can seal a buffer part-filled in
 * the middle of a round (the rest going to the other buffer): the growth of
 * the file says how many blocks a round took; a round of one block filled
 * one buffer whole.  Each block sealed moves appends to the other buffer.
 * Returns the events appended.
 */
static uint64_t warm_up(struct mp_spool_writer *w, const char *path)
{
	const uint64_t per_round = BUF_BYTES / sizeof(struct mp_spool_event);
	const uint64_t payload = per_round * sizeof(struct mp_spool_event);
	struct mp_spool_event ev;
	uint64_t n = 0, size;
	int cur = 0, whole[2] = {0, 0};

	memset(&ev, 0, sizeof(ev));
	ev.kind = MP_SK_MARK;
	mp_spool_flush(w, 1); /* what is buffered (a string): both buffers empty now */
	size = file_bytes(path);
	for (int round = 0; round < 32 && !(whole[0] && whole[1]); round++) {
		uint64_t grew, blocks;

		for (uint64_t i = 0; i < per_round; i++, n++)
			if (mp_spool_event(w, &ev) < 0)
				die("warm-up: an event was dropped");
		mp_spool_flush(w, 1);
		grew = file_bytes(path) - size;
		size += grew;
		if (grew <= payload || (grew - payload) % sizeof(struct mp_spool_block) != 0)
			die("warm-up: the spool grew by %" PRIu64 " bytes for %" PRIu64
			    " bytes of events",
			    grew, payload);
		blocks = (grew - payload) / sizeof(struct mp_spool_block);
		if (blocks == 1)
			whole[cur] = 1;
		cur ^= (int)(blocks & 1);
	}
	return n;
}

/*
 * One writer run to a fresh spool in dir; *dropped: n_dropped at the end of
 * the timed part, *faults: page faults during it.
 */
static uint64_t time_writer(enum mode mode, const char *dir, int nt, uint64_t n_events,
                            const uint64_t *pcs, uint64_t *dropped, uint64_t *faults)
{
	struct mp_spool_writer_opts o = {.buffer_bytes = BUF_BYTES};
	struct mp_spool_header h;
	struct run r = {.mode = mode, .pcs = pcs};
	char path[4096];
	uint64_t failed, ns, n_ev, n_warm = 0;
	int rc;

	memset(&h, 0, sizeof(h));
	h.pid = getpid();
	h.ppid = getppid();
	h.start_mono_ns = (int64_t)now_ns();
	h.stacks_mode = mode == M_STACKS ? MP_STACKS_ALL : MP_STACKS_OFF;
	h.stack_depth = STACK_DEPTH;
	if (snprintf(path, sizeof(path), "%s/bench.mpt", dir) >= (int)sizeof(path))
		die("temporary directory name too long");
	rc = mp_spool_writer_open(&r.w, path, &h, &o);
	if (rc < 0)
		die("cannot open the spool %s: %s", path, strerror(-rc));
	r.name_id = mp_spool_cstring(r.w, "cudaMalloc");
	if (mode == M_STACKS && mp_spool_stack(r.w, pcs, STACK_DEPTH) == 0)
		die("could not intern the stack");
	if (mode == M_WARM)
		n_warm = warm_up(r.w, path);
	ns = run_threads(&r, nt, n_events, &failed, faults);
	n_ev = mp_spool_n_events(r.w) - n_warm;
	*dropped = mp_spool_n_dropped(r.w);
	if (n_ev + failed != n_events)
		die("%s: the writer counted %" PRIu64 " events and %" PRIu64 " failed appends, "
		    "%" PRIu64 " expected",
		    mode_label[mode], n_ev, failed, n_events);
	rc = mp_spool_writer_close(r.w, (int64_t)now_ns(), 0);
	if (rc < 0)
		die("closing the spool %s: %s", path, strerror(-rc));
	if (unlink(path) < 0)
		die("unlink %s: %s", path, strerror(errno));
	return ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median(const uint64_t *ns, int n)
{
	uint64_t v[MAX_REPS];

	memcpy(v, ns, (size_t)n * sizeof(v[0]));
	qsort(v, (size_t)n, sizeof(v[0]), cmp_u64);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

static void usage(void)
{
	fputs("usage: spool-bench [--events=N] [--reps=R] [--threads=LIST]\n"
	      "  --events=N      events appended per run, all threads together (default 600000;\n"
	      "                  more than 699050 may not fit in the writer's buffers)\n"
	      "  --reps=R        runs of each line, interleaved; medians reported (default 7)\n"
	      "  --threads=LIST  thread counts, comma-separated (default 1,2)\n"
	      "The spools go to a temporary directory in $TMPDIR (or /tmp).\n",
	      stderr);
	exit(2);
}

static uint64_t num_arg(const char *arg, const char *name, uint64_t lo, uint64_t hi)
{
	int64_t v;

	if (mp_parse_count(arg, (int64_t)lo, (int64_t)hi, &v) < 0)
		die("%s='%s': want a whole number from %" PRIu64 " to %" PRIu64, name, arg, lo, hi);
	return (uint64_t)v;
}

static void parse_threads(struct opts *o, const char *list)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(list) >= sizeof(buf))
		die("--threads: list too long");
	strcpy(buf, list);
	o->n_tcounts = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->n_tcounts == MAX_TCOUNTS)
			die("--threads: at most %d counts", MAX_TCOUNTS);
		o->tcounts[o->n_tcounts++] = (int)num_arg(tok, "--threads", 1, MAX_THREADS);
	}
	if (!o->n_tcounts)
		die("--threads: empty list");
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.n_events = 600000, .reps = 7, .tcounts = {1, 2}, .n_tcounts = 2};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strncmp(a, "--events=", 9) == 0)
			o->n_events = num_arg(a + 9, "--events", 1, 1000000000);
		else if (strncmp(a, "--reps=", 7) == 0)
			o->reps = (int)num_arg(a + 7, "--reps", 1, MAX_REPS);
		else if (strncmp(a, "--threads=", 10) == 0)
			parse_threads(o, a + 10);
		else
			usage();
	}
	for (int i = 0; i < o->n_tcounts; i++)
		if ((uint64_t)o->tcounts[i] > o->n_events)
			die("--threads=%d: more threads than --events", o->tcounts[i]);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct floor_buf fl;
	uint64_t pcs[STACK_DEPTH];
	uint64_t ns[MAX_TCOUNTS][N_MODES][MAX_REPS];
	uint64_t dropped[MAX_TCOUNTS][N_MODES], faults[MAX_TCOUNTS][N_MODES];
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	int any_dropped = 0;

	parse(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (snprintf(dir, sizeof(dir), "%s/spool-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
	    (int)sizeof(dir))
		die("$TMPDIR too long");
	if (!mkdtemp(dir))
		die("mkdtemp %s: %s", dir, strerror(errno));
	memcpy(tmp_dir, dir, sizeof(tmp_dir));
	atexit(remove_tmp_dir);
	for (int i = 0; i < STACK_DEPTH; i++) /* return addresses in a text segment, as unwound */
		pcs[i] = 0x55d2a4e01000ull + (uint64_t)i * 0x1f3 + ((uint64_t)i << 20);
	memset(&fl, 0, sizeof(fl));
	pthread_mutex_init(&fl.mu, NULL);
	fl.cap = BUF_BYTES;
	fl.data = malloc(fl.cap);
	if (!fl.data)
		die("out of memory");
	touch_memset(fl.data, 0, fl.cap); /* every page touched before the first run */
	memset(dropped, 0, sizeof(dropped));
	memset(faults, 0, sizeof(faults));

	printf("spool-bench: %" PRIu64 " events per run (all threads together, %zu bytes each), "
	       "%d runs of each line interleaved\n",
	       o.n_events, sizeof(struct mp_spool_event), o.reps);
	printf("buffers: %zu MiB (the writer's two, the floor's one); spools in %s, closed and "
	       "fsync'd after each run (not timed)\n",
	       BUF_BYTES >> 20, dir);
	printf("ns/event = the run's wall time (first thread's start to last thread's end) x "
	       "threads / events: one thread's cost per append; medians\n");
	if (o.n_events > BUF_BYTES / sizeof(struct mp_spool_event))
		printf("note: more events than one of the writer's buffers holds: its thread may "
		       "have to write a block during a run, and events may be dropped\n");
	printf("faults/kev = page faults of the process during the timed part per 1000 events; "
	       "warm buffers: each of the writer's two buffers filled whole and written before "
	       "timing\n\n");
	for (int t = 0; t < o.n_tcounts; t++) {
		int nt = o.tcounts[t];

		for (int rep = 0; rep < o.reps; rep++)
			for (int m = 0; m < N_MODES; m++) {
				uint64_t d = 0, f = 0;

				ns[t][m][rep] = m == M_FLOOR ? time_floor(&fl, nt, o.n_events, &f)
				                             : time_writer((enum mode)m, dir, nt,
				                                           o.n_events, pcs, &d, &f);
				dropped[t][m] += d;
				faults[t][m] += f;
			}
	}

	printf("%7s  %-30s %9s %16s %8s %8s %10s %8s\n", "threads", "line", "ns/event", "min..max",
	       "x floor", "Mev/s", "faults/kev", "dropped");
	for (int t = 0; t < o.n_tcounts; t++) {
		int nt = o.tcounts[t];
		double per = (double)nt / (double)o.n_events,
		       floor_med = median(ns[t][M_FLOOR], o.reps);

		for (int m = 0; m < N_MODES; m++) {
			double med = median(ns[t][m], o.reps);
			uint64_t lo = UINT64_MAX, hi = 0;
			char range[32], drop[24];

			for (int rep = 0; rep < o.reps; rep++) {
				lo = ns[t][m][rep] < lo ? ns[t][m][rep] : lo;
				hi = ns[t][m][rep] > hi ? ns[t][m][rep] : hi;
			}
			snprintf(range, sizeof(range), "%.1f..%.1f", (double)lo * per,
			         (double)hi * per);
			if (m == M_FLOOR)
				snprintf(drop, sizeof(drop), "-");
			else
				snprintf(drop, sizeof(drop), "%" PRIu64, dropped[t][m]);
			any_dropped |= m != M_FLOOR && dropped[t][m] != 0;
			printf("%7d  %-30s %9.1f %16s %7.2fx %8.1f %10.2f %8s\n", nt, mode_label[m],
			       med * per, range, med / floor_med, (double)o.n_events / med * 1e3,
			       (double)faults[t][m] * 1e3 / ((double)o.n_events * o.reps), drop);
		}
	}
	if (any_dropped) {
		printf("\nSOME EVENTS WERE DROPPED: both of the writer's buffers were full (its "
		       "thread checksums and writes a block more slowly than a tight loop fills "
		       "one); those runs timed dropping, not appending, and their ratios do not "
		       "hold: use fewer --events (at most %zu fit in one buffer)\n",
		       BUF_BYTES / sizeof(struct mp_spool_event));
		return 1;
	}
	printf("\nn_dropped = 0 in every writer run: the writer took all %" PRIu64
	       " events of each run and closed the spool without error\n",
	       o.n_events);
	free(fl.data);
	pthread_mutex_destroy(&fl.mu);
	return 0;
}
