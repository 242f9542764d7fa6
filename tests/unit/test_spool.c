/*
 * tests/unit/test_spool.c - the spool writer and reader (src/capture/
 * spool_writer.c, spool_reader.c) and util/crc32: round trips, threads,
 * interning, drops, write errors, fork, and a reader that keeps exactly the
 * sound blocks of a spool cut or damaged at every byte.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spool/reader.h"
#include "spool/writer.h"
#include "helpers.h"
#include "util/crc32.h"

/* Test hook of spool_writer.c. */
void mp_spool_writer_test_hold(struct mp_spool_writer *w, int hold);

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmdir(dir);
}

TestSuite(spool, .init = setup, .fini = teardown);

static struct mp_spool_header test_header(void)
{
	struct mp_spool_header h;

	memset(&h, 0, sizeof(h));
	h.pid = 100;
	h.ppid = 1;
	h.start_mono_ns = 5000;
	h.start_unix_ns = 7000;
	h.flags = MP_SPOOL_F_DORMANT;
	h.stacks_mode = MP_STACKS_SAMPLED;
	h.stack_sample = 16;
	h.stack_depth = 32;
	h.cupti_version = 130000;
	return h;
}

static struct mp_spool_writer *open_writer(const char *path, size_t buffer_bytes, int flush_ms)
{
	struct mp_spool_writer_opts o = {buffer_bytes, flush_ms};
	struct mp_spool_header h = test_header();
	struct mp_spool_writer *w;

	cr_assert_eq(mp_spool_writer_open(&w, path, &h, &o), 0);
	return w;
}

static struct mp_spool_event make_event(uint8_t kind, uint32_t thread, uint64_t seq)
{
	struct mp_spool_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.device = (int32_t)(seq % 3) - 1;
	ev.thread = thread;
	ev.correlation = (uint32_t)seq + 1;
	ev.ts_ns = (int64_t)seq * 10;
	ev.address = 0x7000000000ULL + seq * 4096;
	ev.bytes = seq * 3 + 1;
	ev.extra = seq;
	ev.extra2 = ~seq;
	return ev;
}

/* Open path for reading; the reader must accept its header. */
static struct mp_spool_reader *open_reader(const char *path, FILE **f)
{
	struct mp_spool_reader *r;
	struct mp_error err;

	*f = fopen(path, "rb");
	cr_assert_not_null(*f);
	cr_assert_eq(mp_spool_reader_open(&r, *f, path, &err), 0, "%s", err.msg);
	return r;
}

static void close_reader(struct mp_spool_reader *r, FILE *f)
{
	mp_spool_reader_close(r);
	fclose(f);
}

/* Items handed out until the end; fails the test on an error. */
static size_t drain(struct mp_spool_reader *r)
{
	const struct mp_spool_item_head *ih;
	struct mp_error err;
	size_t n = 0;
	int rc;

	while ((rc = mp_spool_reader_next(r, &ih, &err)) == 1)
		n++;
	cr_assert_eq(rc, 0, "%s", err.msg);
	return n;
}

Test(spool, crc32_known_values)
{
	static const char a[] = "123456789";
	unsigned char zeros[32] = {0};

	cr_assert_eq(mp_crc32(0, a, 9), 0xcbf43926u);
	cr_assert_eq(mp_crc32(0, "", 0), 0);
	cr_assert_eq(mp_crc32(0, "a", 1), 0xe8b7be43u);
	cr_assert_eq(mp_crc32(0, zeros, 32), 0x190a55adu);
	/* continuing from a partial crc gives the crc of the whole */
	cr_assert_eq(mp_crc32(mp_crc32(0, a, 4), a + 4, 5), 0xcbf43926u);
}

/* CRC-32 one bit at a time, straight from the polynomial: the reference. */
static uint32_t crc32_bitwise(const unsigned char *p, size_t n)
{
	uint32_t crc = 0xffffffffu;
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
	}
	return ~crc;
}

Test(spool, crc32_equals_the_bitwise_reference)
{
	unsigned char buf[1100];
	size_t i, start, len;
	uint32_t x = 12345;

	for (i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (unsigned char)(x >> 16);
	}
	/* every alignment and the lengths around the 8-byte steps */
	for (start = 0; start < 9; start++)
		for (len = 0; len + start <= sizeof(buf); len += len < 40 ? 1 : 97)
			cr_assert_eq(mp_crc32(0, buf + start, len), crc32_bitwise(buf + start, len),
			             "start %zu, %zu bytes", start, len);
}

Test(spool, round_trip_every_item_type)
{
	char *path = th_path(dir, "a.mpt");
	struct mp_spool_writer *w = open_writer(path, 0, 0);
	const uint64_t pcs[3] = {0x401000, 0x401100, 0x7f0000001234};
	struct mp_spool_module m;
	struct mp_spool_device d;
	struct mp_spool_event ev = make_event(MP_SK_API, 11, 7);
	const struct mp_spool_item_head *ih;
	const struct mp_spool_event *rev;
	const struct mp_spool_meta *rm;
	const struct mp_spool_device *rd;
	const struct mp_spool_footer *ft;
	const uint64_t *rpcs;
	struct mp_error err;
	uint32_t depth;
	size_t len;
	FILE *f;
	struct mp_spool_reader *r;

	cr_assert_eq(mp_spool_meta(w, "argv", "python train.py"), 0);
	memset(&m, 0, sizeof(m));
	m.head.type = MP_SI_MODULE;
	m.head.bytes = sizeof(m);
	m.id = 1;
	m.path = mp_spool_cstring(w, "/usr/lib/x.so");
	m.base = 0x7f0000000000;
	m.start = 0x7f0000001000;
	m.end = 0x7f0000100000;
	m.build_id = mp_spool_cstring(w, "abcd");
	cr_assert_eq(mp_spool_append(w, &m, sizeof(m)), 0);
	memset(&d, 0, sizeof(d));
	d.head.type = MP_SI_DEVICE;
	d.head.bytes = sizeof(d);
	d.ordinal = 0;
	d.name = mp_spool_cstring(w, "NVIDIA H100");
	d.total_bytes = 85899345920ULL;
	cr_assert_eq(mp_spool_append(w, &d, sizeof(d)), 0);
	ev.name = mp_spool_cstring(w, "cudaMalloc");
	ev.stack = mp_spool_stack(w, pcs, 3);
	ev.phase = mp_spool_cstring(w, "forward");
	ev.flags = MP_SE_ASYNC;
	ev.duration_ns = 5000;
	cr_assert_eq(mp_spool_event(w, &ev), 0);
	mp_spool_count_dropped(w, 5);
	cr_assert_eq(mp_spool_n_events(w), 1);
	cr_assert_eq(mp_spool_writer_close(w, 99999, 1), 0);

	r = open_reader(path, &f);
	cr_assert_eq(mp_spool_reader_header(r)->pid, 100);
	cr_assert_eq(mp_spool_reader_header(r)->ppid, 1);
	cr_assert_eq(mp_spool_reader_header(r)->start_mono_ns, 5000);
	cr_assert_eq(mp_spool_reader_header(r)->start_unix_ns, 7000);
	cr_assert_eq(mp_spool_reader_header(r)->stacks_mode, MP_STACKS_SAMPLED);
	cr_assert_eq(mp_spool_reader_header(r)->cupti_version, 130000);
	cr_assert_eq(mp_spool_reader_header(r)->version, MP_SPOOL_VERSION);

	cr_assert_eq(mp_spool_reader_next(r, &ih, &err), 1);
	cr_assert_eq(ih->type, MP_SI_META);
	rm = (const void *)ih;
	cr_assert_str_eq(mp_spool_reader_string(r, rm->key, &len), "argv");
	cr_assert_eq(len, 4);
	cr_assert_str_eq(mp_spool_reader_string(r, rm->value, NULL), "python train.py");

	cr_assert_eq(mp_spool_reader_next(r, &ih, &err), 1);
	cr_assert_eq(ih->type, MP_SI_DEVICE);
	rd = (const void *)ih;
	cr_assert_eq(rd->total_bytes, 85899345920ULL);
	cr_assert_str_eq(mp_spool_reader_string(r, rd->name, NULL), "NVIDIA H100");
	cr_assert_eq(mp_spool_reader_n_modules(r), 1);
	cr_assert_eq(memcmp(mp_spool_reader_module(r, 0), &m, sizeof(m)), 0);
	cr_assert_null(mp_spool_reader_module(r, 1));
	cr_assert_str_eq(mp_spool_reader_string(r, m.path, NULL), "/usr/lib/x.so");
	cr_assert_str_eq(mp_spool_reader_string(r, m.build_id, NULL), "abcd");

	cr_assert_eq(mp_spool_reader_next(r, &ih, &err), 1);
	cr_assert_eq(ih->type, MP_SI_EVENT);
	rev = (const void *)ih;
	cr_assert_eq(rev->head.bytes, sizeof(*rev));
	cr_assert_eq(memcmp(rev, &ev, sizeof(ev)), 0);
	cr_assert_str_eq(mp_spool_reader_string(r, rev->name, NULL), "cudaMalloc");
	cr_assert_str_eq(mp_spool_reader_string(r, rev->phase, NULL), "forward");
	rpcs = mp_spool_reader_stack(r, rev->stack, &depth);
	cr_assert_eq(depth, 3);
	cr_assert_eq(memcmp(rpcs, pcs, sizeof(pcs)), 0);

	cr_assert_eq(mp_spool_reader_next(r, &ih, &err), 1);
	cr_assert_eq(ih->type, MP_SI_FOOTER);
	cr_assert_eq(mp_spool_reader_next(r, &ih, &err), 0);
	cr_assert(mp_spool_reader_complete(r));
	cr_assert_null(mp_spool_reader_damage(r, NULL));
	ft = mp_spool_reader_footer(r);
	cr_assert_not_null(ft);
	cr_assert_eq(ft->n_events, 1);
	cr_assert_eq(ft->n_dropped, 5);
	cr_assert_eq(ft->end_mono_ns, 99999);
	cr_assert_eq(ft->disabled, 1);
	/* unknown ids */
	cr_assert_null(mp_spool_reader_string(r, 0, &len));
	cr_assert_eq(len, 0);
	cr_assert_null(mp_spool_reader_string(r, 999, NULL));
	cr_assert_null(mp_spool_reader_stack(r, 2, &depth));
	cr_assert_eq(depth, 0);
	cr_assert_null(mp_spool_reader_stack(r, 0xffffffffu, NULL));
	close_reader(r, f);
	free(path);
}

Test(spool, file_is_private_and_never_overwritten)
{
	char *path = th_path(dir, "a.mpt");
	struct mp_spool_header h = test_header();
	struct mp_spool_writer *w = open_writer(path, 0, 0), *w2;
	struct stat st;

	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_eq(mp_spool_writer_open(&w2, path, &h, NULL), -EEXIST);
	cr_assert_null(w2);
	cr_assert_eq(mp_spool_writer_close(w, 0, 0), 0);
	free(path);
}

Test(spool, interning_gives_one_id_per_string_and_stack)
{
	char *path = th_path(dir, "a.mpt");
	struct mp_spool_writer *w = open_writer(path, 0, 0);
	uint64_t pcs[MP_SPOOL_MAX_STACK_DEPTH + 10];
	char *big = malloc(MP_SPOOL_MAX_STRING + 100);
	uint32_t a, b, s1, s2, s3, sbig, sdeep, depth, i;
	struct mp_spool_reader *r;
	const uint64_t *rp;
	const char *text;
	size_t len;
	FILE *f;

	for (i = 0; i < MP_SPOOL_MAX_STACK_DEPTH + 10; i++)
		pcs[i] = 0x1000 + i;
	memset(big, 'x', MP_SPOOL_MAX_STRING + 100);
	a = mp_spool_cstring(w, "alpha");
	b = mp_spool_cstring(w, "beta");
	cr_assert_eq(a, 1);
	cr_assert_eq(b, 2);
	cr_assert_eq(mp_spool_cstring(w, "alpha"), a);
	cr_assert_eq(mp_spool_string(w, "alphabet", 5), a);
	cr_assert_eq(mp_spool_string(w, "alphabet", 8), 3);
	cr_assert_eq(mp_spool_cstring(w, ""), 4);
	cr_assert_eq(mp_spool_cstring(w, ""), 4);
	s1 = mp_spool_stack(w, pcs, 2);
	s2 = mp_spool_stack(w, pcs, 3);
	s3 = mp_spool_stack(w, pcs + 1, 2);
	cr_assert_eq(s1, 1);
	cr_assert_eq(s2, 2);
	cr_assert_eq(s3, 3);
	cr_assert_eq(mp_spool_stack(w, pcs, 2), s1);
	cr_assert_eq(mp_spool_stack(w, pcs, 0), 0);
	sbig = mp_spool_string(w, big, MP_SPOOL_MAX_STRING + 100);
	cr_assert_eq(mp_spool_string(w, big, MP_SPOOL_MAX_STRING), sbig);
	sdeep = mp_spool_stack(w, pcs, MP_SPOOL_MAX_STACK_DEPTH + 10);
	cr_assert_eq(mp_spool_stack(w, pcs, MP_SPOOL_MAX_STACK_DEPTH), sdeep);
	/* many strings: the table grows */
	for (i = 0; i < 5000; i++) {
		char name[32];

		snprintf(name, sizeof(name), "name-%u", i);
		cr_assert_eq(mp_spool_cstring(w, name), sbig + 1 + i);
	}
	cr_assert_eq(mp_spool_cstring(w, "name-1234"), sbig + 1 + 1234);
	cr_assert_eq(mp_spool_n_dropped(w), 0);
	cr_assert_eq(mp_spool_writer_close(w, 0, 0), 0);

	r = open_reader(path, &f);
	cr_assert_eq(drain(r), 1); /* the footer */
	cr_assert_str_eq(mp_spool_reader_string(r, a, NULL), "alpha");
	cr_assert_str_eq(mp_spool_reader_string(r, 3, NULL), "alphabet");
	cr_assert_str_eq(mp_spool_reader_string(r, 4, &len), "");
	cr_assert_eq(len, 0);
	text = mp_spool_reader_string(r, sbig, &len);
	cr_assert_eq(len, MP_SPOOL_MAX_STRING);
	cr_assert_eq(memcmp(text, big, len), 0);
	rp = mp_spool_reader_stack(r, s3, &depth);
	cr_assert_eq(depth, 2);
	cr_assert_eq(rp[0], 0x1001);
	cr_assert_eq(rp[1], 0x1002);
	rp = mp_spool_reader_stack(r, sdeep, &depth);
	cr_assert_eq(depth, MP_SPOOL_MAX_STACK_DEPTH);
	cr_assert_eq(rp[MP_SPOOL_MAX_STACK_DEPTH - 1], 0x1000 + MP_SPOOL_MAX_STACK_DEPTH - 1);
	cr_assert_str_eq(mp_spool_reader_string(r, sbig + 1 + 4999, NULL), "name-4999");
	close_reader(r, f);
	free(big);
	free(path);
}

#define N_THREADS    8
#define N_PER_THREAD 20000

struct thread_arg {
	struct mp_spool_writer *w;
	uint32_t thread;
	uint32_t n_ok;
};

static void *append_many(void *p)
{
	struct thread_arg *a = p;
	uint64_t i;

	for (i = 0; i < N_PER_THREAD; i++) {
		struct mp_spool_event ev = make_event(MP_SK_MEM_ALLOC, a->thread, i);

		if (i % 1000 == 0) {
			char name[32];

			snprintf(name, sizeof(name), "shared-%llu", (unsigned long long)(i / 1000));
			ev.name = mp_spool_cstring(a->w, name);
		}
		if (mp_spool_event(a->w, &ev) == 0)
			a->n_ok++;
	}
	return NULL;
}

/* Check one event read back against make_event; advance the thread's last seq. */
static void check_thread_event(struct mp_spool_reader *r, const struct mp_spool_event *ev,
                               int64_t *last)
{
	uint64_t seq = ev->extra;
	struct mp_spool_event want = make_event(MP_SK_MEM_ALLOC, ev->thread, seq);

	cr_assert(ev->thread >= 1 && ev->thread <= N_THREADS);
	cr_assert_gt((int64_t)seq, last[ev->thread], "thread %u: seq %llu after %lld", ev->thread,
	             (unsigned long long)seq, (long long)last[ev->thread]);
	last[ev->thread] = (int64_t)seq;
	want.head.type = MP_SI_EVENT;
	want.head.bytes = sizeof(want);
	if (seq % 1000 == 0)
		want.name = ev->name; /* 0 when the string was dropped */
	cr_assert_eq(memcmp(ev, &want, sizeof(want)), 0, "thread %u seq %llu", ev->thread,
	             (unsigned long long)seq);
	if (ev->name) {
		char name[32];

		snprintf(name, sizeof(name), "shared-%llu", (unsigned long long)(seq / 1000));
		cr_assert_str_eq(mp_spool_reader_string(r, ev->name, NULL), name);
	}
}

Test(spool, threads_append_concurrently)
{
	char *path = th_path(dir, "a.mpt");
	struct mp_spool_writer *w = open_writer(path, 64 << 10, 5);
	struct thread_arg args[N_THREADS];
	pthread_t th[N_THREADS];
	const struct mp_spool_item_head *ih;
	int64_t last[N_THREADS + 1];
	uint64_t n_ok = 0, n_read = 0, dropped;
	struct mp_spool_reader *r;
	struct mp_error err;
	FILE *f;
	int i;

	for (i = 0; i < N_THREADS; i++) {
		args[i] = (struct thread_arg){w, (uint32_t)i + 1, 0};
		cr_assert_eq(pthread_create(&th[i], NULL, append_many, &args[i]), 0);
	}
	for (i = 0; i < N_THREADS; i++) {
		pthread_join(th[i], NULL);
		n_ok += args[i].n_ok;
		last[i + 1] = -1;
	}
	dropped = mp_spool_n_dropped(w);
	cr_assert_eq(mp_spool_n_events(w), n_ok);
	cr_assert_geq(n_ok, 1);
	cr_assert_eq(mp_spool_writer_close(w, 0, 0), 0);

	r = open_reader(path, &f);
	while (mp_spool_reader_next(r, &ih, &err) == 1) {
		if (ih->type != MP_SI_EVENT)
			continue;
		check_thread_event(r, (const void *)ih, last);
		n_read++;
	}
	cr_assert(mp_spool_reader_complete(r));
	cr_assert_eq(n_read, n_ok);
	cr_assert_eq(mp_spool_reader_footer(r)->n_events, n_ok);
	cr_assert_eq(mp_spool_reader_footer(r)->n_dropped, dropped);
	/* every event either written or counted (names that were dropped count too) */
	cr_assert_geq(n_ok + dropped, (uint64_t)N_THREADS * N_PER_THREAD);
	close_reader(r, f);
	free(path);
}

Test(spool, flush_wait_puts_everything_on_disk)
{
	char *path = th_path(dir, "a.mpt");
	struct mp_spool_writer *w = open_writer(path, 0, 1000000);
	struct stat st;
	int i;

	for (i = 0; i < 10; i++) {
		struct mp_spool_event ev = make_event(MP_SK_MEM_FREE, 1, (uint64_t)i);

		cr_assert_eq(mp_spool_event(w, &ev), 0);
	}
	mp_spool_flush(w, 1);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 128 + 24 + 10 * 96);
	mp_spool_flush(w, 1); /* nothing new: no empty block */
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 128 + 24 + 10 * 96);
	cr_assert_eq(mp_spool_writer_close(w, 0, 0), 0);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 128 + 24 + 10 * 96 + 24 + 40);
	free(path);
}

Test(spool, drops_are_counted_when_both_buffers_are_full)
{
	char *path = th_path(dir, "a.mpt");
	struct mp_spool_writer *w = open_writer(path, 4096, 1000000);
	const char *late = "a string written late, after both buffers filled up: 64 bytes or more";
	struct mp_spool_reader *r;
	uint32_t id;
	int i, n_ok = 0;
	FILE *f;

	mp_spool_writer_test_hold(w, 1);
	for (i = 0; i < 200; i++) {
		struct mp_spool_event ev = make_event(MP_SK_MEM_ALLOC, 1, (uint64_t)i);

		if (mp_spool_event(w, &ev) == 0) {
			cr_assert_eq(i, n_ok, "event %d accepted after a drop", i);
			n_ok++;
		}
	}
	/* 4096 bytes hold 42 events of 96 bytes; two buffers */
	cr_assert_eq(n_ok, 84);
	cr_assert_eq(mp_spool_n_dropped(w), 200 - 84);
	/* a string of 24 bytes would fit the 64 bytes left; this one does not */
	cr_assert_eq(mp_spool_cstring(w, late), 0); /* dropped, not remembered */
	cr_assert_eq(mp_spool_n_dropped(w), 200 - 84 + 1);
	mp_spool_writer_test_hold(w, 0);
	mp_spool_flush(w, 1);
	id = mp_spool_cstring(w, late);
	cr_assert_eq(id, 1);
	cr_assert_eq(mp_spool_cstring(w, late), 1);
	cr_assert_eq(mp_spool_writer_close(w, 0, 0), 0);

	r = open_reader(path, &f);
	cr_assert_eq(drain(r), 84 + 1);
	cr_assert(mp_spool_reader_complete(r));
	cr_assert_eq(mp_spool_reader_footer(r)->n_events, 84);
	cr_assert_eq(mp_spool_reader_footer(r)->n_dropped, 200 - 84 + 1);
	cr_assert_str_eq(mp_spool_reader_string(r, 1, NULL), late);
	close_reader(r, f);
	free(path);
}

/* In a child: a file-size limit makes the writer's block write fail. */
static int write_past_limit(const char *path)
{
	struct rlimit lim = {128 + 2048, 128 + 2048};
	struct mp_spool_writer *w;
	int i, rc;

	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &lim) < 0)
		return 10;
	w = open_writer(path, 4096, 1000000);
	for (i = 0; i < 40; i++) {
		struct mp_spool_event ev = make_event(MP_SK_MEM_ALLOC, 1, (uint64_t)i);

		if (mp_spool_event(w, &ev) < 0)
			return 11;
	}
	mp_spool_flush(w, 1); /* 24 + 3840 bytes: cut at the limit, then EFBIG */
	for (i = 0; i < 5; i++) {
		struct mp_spool_event ev = make_event(MP_SK_MEM_ALLOC, 1, (uint64_t)i);

		if (mp_spool_event(w, &ev) == 0)
			return 12;
	}
	if (mp_spool_cstring(w, "after") != 0)
		return 13;
	if (mp_spool_n_dropped(w) != 40 + 5 + 1)
		return 14;
	rc = mp_spool_writer_close(w, 0, 0);
	return rc == -EFBIG ? 0 : 15;
}

Test(spool, write_error_turns_the_writer_off)
{
	char *path = th_path(dir, "a.mpt");
	struct mp_spool_reader *r;
	uint64_t off = 0;
	const char *why;
	pid_t pid;
	int status;
	FILE *f;

	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(write_past_limit(path));
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	cr_assert_eq(WEXITSTATUS(status), 0, "child step %d failed", WEXITSTATUS(status));
	r = open_reader(path, &f);
	cr_assert_eq(drain(r), 0);
	cr_assert_not(mp_spool_reader_complete(r));
	why = mp_spool_reader_damage(r, &off);
	cr_assert_str_eq(why, "cut short in block 0");
	cr_assert_eq(off, 128);
	close_reader(r, f);
	free(path);
}

Test(spool, fork_child_forgets_parent_closes)
{
	char *path = th_path(dir, "a.mpt");
	char *child_path = th_path(dir, "child.mpt");
	struct mp_spool_writer *w = open_writer(path, 0, 0);
	struct mp_spool_reader *r;
	pid_t pid;
	int status, i;
	FILE *f;

	for (i = 0; i < 3; i++) {
		struct mp_spool_event ev = make_event(MP_SK_MEM_ALLOC, 1, (uint64_t)i);

		cr_assert_eq(mp_spool_event(w, &ev), 0);
	}
	/* The writer thread idle at the fork: under ASan (GCC 12's libasan) a
	 * fork while it allocates leaves the parent's allocator locked (seen
	 * hanging in 7 of 12 runs). */
	mp_spool_flush(w, 1);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct mp_spool_header h = test_header();
		struct mp_spool_event ev = make_event(MP_SK_MEM_FREE, 2, 0);
		struct mp_spool_writer *cw;

		mp_spool_writer_forget(w);
		if (mp_spool_writer_open(&cw, child_path, &h, NULL) < 0 ||
		    mp_spool_event(cw, &ev) < 0)
			_exit(1);
		_exit(mp_spool_writer_close(cw, 0, 0) == 0 ? 0 : 2);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (i = 3; i < 6; i++) {
		struct mp_spool_event ev = make_event(MP_SK_MEM_ALLOC, 1, (uint64_t)i);

		cr_assert_eq(mp_spool_event(w, &ev), 0);
	}
	cr_assert_eq(mp_spool_writer_close(w, 0, 0), 0);
	r = open_reader(path, &f);
	cr_assert_eq(drain(r), 6 + 1);
	cr_assert(mp_spool_reader_complete(r));
	cr_assert_eq(mp_spool_reader_footer(r)->n_events, 6);
	close_reader(r, f);
	r = open_reader(child_path, &f);
	cr_assert_eq(drain(r), 1 + 1);
	cr_assert(mp_spool_reader_complete(r));
	close_reader(r, f);
	free(path);
	free(child_path);
}

/* --- damaged spools -------------------------------------------------------- */

/* A small spool of 4 blocks and what the reader hands out of each. */
struct small_spool {
	unsigned char *bytes;
	size_t n_bytes;
	size_t block_start[8], block_end[8], n_items_before[8];
	int n_blocks;
};

static void make_small_spool(struct small_spool *s)
{
	char *path = th_path(dir, "small.mpt");
	struct mp_spool_writer *w = open_writer(path, 0, 1000000);
	const uint64_t pcs[2] = {0x10, 0x20};
	struct mp_spool_event ev;
	size_t pos, n_items = 0;
	int i;

	ev = make_event(MP_SK_API, 1, 1);
	ev.name = mp_spool_cstring(w, "cudaMalloc");
	ev.stack = mp_spool_stack(w, pcs, 2);
	cr_assert_eq(mp_spool_event(w, &ev), 0);
	cr_assert_eq(mp_spool_meta(w, "host", "node1"), 0);
	mp_spool_flush(w, 1); /* block 0: 3 strings, a stack, an event, a meta: 2 handed out */
	for (i = 0; i < 3; i++) {
		ev = make_event(MP_SK_MEM_ALLOC, 1, (uint64_t)i);
		cr_assert_eq(mp_spool_event(w, &ev), 0);
	}
	mp_spool_flush(w, 1); /* block 1: 3 events */
	ev = make_event(MP_SK_PHASE_PUSH, 1, 9);
	ev.name = mp_spool_cstring(w, "forward");
	cr_assert_eq(mp_spool_event(w, &ev), 0);
	mp_spool_flush(w, 1);                            /* block 2: a string and an event */
	cr_assert_eq(mp_spool_writer_close(w, 0, 0), 0); /* block 3: the footer */
	s->bytes = (unsigned char *)th_read(path, &s->n_bytes);
	free(path);

	/* block boundaries, worked out from the block headers */
	s->n_blocks = 0;
	for (pos = 128; pos < s->n_bytes; s->n_blocks++) {
		struct mp_spool_block bh;

		memcpy(&bh, s->bytes + pos, sizeof(bh));
		s->block_start[s->n_blocks] = pos;
		s->n_items_before[s->n_blocks] = n_items;
		pos += sizeof(bh) + bh.payload_bytes;
		s->block_end[s->n_blocks] = pos;
		n_items += (size_t[]){2, 3, 1, 1}[s->n_blocks];
	}
	cr_assert_eq(s->n_blocks, 4);
	cr_assert_eq(pos, s->n_bytes);
	cr_assert_eq(s->block_end[3] - s->block_start[3], 24 + 40);
	cr_assert_eq(s->block_end[1] - s->block_start[1], 24 + 3 * 96);
}

/* Read bytes[0..n) as a spool: items handed out, complete, damage. */
static size_t read_bytes(const unsigned char *bytes, size_t n, int *rc_open, int *complete,
                         const char **damage, uint64_t *off, char *damage_buf, size_t buf_bytes)
{
	struct mp_spool_reader *r;
	struct mp_error err;
	size_t n_items = 0;
	FILE *f = n ? fmemopen((void *)bytes, n, "rb") : fopen("/dev/null", "rb");

	cr_assert_not_null(f);
	*rc_open = mp_spool_reader_open(&r, f, "mem.mpt", &err);
	*damage = NULL;
	if (*rc_open == 0) {
		n_items = drain(r);
		*complete = mp_spool_reader_complete(r);
		*damage = mp_spool_reader_damage(r, off);
		if (*damage) {
			snprintf(damage_buf, buf_bytes, "%s", *damage);
			*damage = damage_buf;
		}
		mp_spool_reader_close(r);
	} else {
		cr_assert_eq(*rc_open, MP_EFORMAT);
		cr_assert(strstr(err.msg, "'mem.mpt'"), "%s", err.msg);
	}
	fclose(f);
	return n_items;
}

static int block_of(const struct small_spool *s, size_t pos)
{
	int b;

	for (b = 0; b < s->n_blocks; b++)
		if (pos < s->block_end[b])
			return b;
	return s->n_blocks;
}

Test(spool, cut_at_every_byte_keeps_the_complete_blocks)
{
	struct small_spool s;
	char buf[200];
	const char *damage;
	uint64_t off;
	size_t cut, n;
	int rc, complete;

	make_small_spool(&s);
	n = read_bytes(s.bytes, s.n_bytes, &rc, &complete, &damage, &off, buf, sizeof(buf));
	cr_assert_eq(n, 2 + 3 + 1 + 1);
	cr_assert(complete);
	for (cut = 0; cut < s.n_bytes; cut++) {
		int b = block_of(&s, cut);
		int at_boundary = b < s.n_blocks && cut == s.block_start[b];
		char want[64];

		complete = -1;
		n = read_bytes(s.bytes, cut, &rc, &complete, &damage, &off, buf, sizeof(buf));
		if (cut < 128) {
			cr_assert_eq(rc, MP_EFORMAT, "cut %zu", cut);
			continue;
		}
		cr_assert_eq(rc, 0, "cut %zu", cut);
		cr_assert_eq(n, s.n_items_before[b], "cut %zu: %zu items", cut, n);
		cr_assert_eq(complete, 0, "cut %zu", cut);
		snprintf(want, sizeof(want), "cut short %s block %d", at_boundary ? "before" : "in",
		         b);
		cr_assert_str_eq(damage, want, "cut %zu", cut);
		cr_assert_eq(off, s.block_start[b], "cut %zu", cut);
	}
	free(s.bytes);
}

Test(spool, flipped_byte_ends_the_spool_at_its_block)
{
	struct small_spool s;
	char buf[200];
	const char *damage;
	uint64_t off;
	size_t pos, n;
	int rc, complete;

	make_small_spool(&s);
	for (pos = 128; pos < s.n_bytes; pos++) {
		int b = block_of(&s, pos);
		size_t in_block = pos - s.block_start[b];

		s.bytes[pos] ^= 0xff;
		n = read_bytes(s.bytes, s.n_bytes, &rc, &complete, &damage, &off, buf, sizeof(buf));
		s.bytes[pos] ^= 0xff;
		cr_assert_eq(rc, 0);
		cr_assert_eq(n, s.n_items_before[b], "byte %zu: %zu items", pos, n);
		cr_assert_eq(complete, 0, "byte %zu", pos);
		cr_assert_not_null(damage, "byte %zu", pos);
		cr_assert(off >= s.block_start[b] && off < s.block_end[b], "byte %zu: offset %llu",
		          pos, (unsigned long long)off);
		if (in_block < 4) {
			snprintf(buf, sizeof(buf), "bad block magic in block %d", b);
			cr_assert_str_eq(damage, buf);
		} else if (in_block >= 8 && in_block < 12) {
			snprintf(buf, sizeof(buf), "bad checksum in block %d", b);
			cr_assert_str_eq(damage, buf);
		} else if (in_block >= 16 && in_block < 24) {
			snprintf(buf, sizeof(buf), "bad block sequence number in block %d", b);
			cr_assert_str_eq(damage, buf);
		} else if (in_block >= 24) {
			snprintf(buf, sizeof(buf), "bad checksum in block %d", b);
			cr_assert_str_eq(damage, buf, "byte %zu", pos);
			cr_assert_eq(off, s.block_start[b]);
		}
	}
	free(s.bytes);
}

/* Rewrite block b's payload through fix (then its crc) and read the spool. */
static void check_bad_item(struct small_spool *s, int b, size_t item_off, uint32_t field_off,
                           uint32_t value, const char *want)
{
	unsigned char *copy = malloc(s->n_bytes);
	size_t payload = s->block_start[b] + 24, n;
	struct mp_spool_block bh;
	char buf[200], full[200];
	const char *damage;
	uint64_t off;
	int rc, complete;

	memcpy(copy, s->bytes, s->n_bytes);
	memcpy(copy + payload + item_off + field_off, &value, 4);
	memcpy(&bh, copy + s->block_start[b], sizeof(bh));
	bh.crc32 = mp_crc32(0, copy + payload, bh.payload_bytes);
	memcpy(copy + s->block_start[b], &bh, sizeof(bh));
	n = read_bytes(copy, s->n_bytes, &rc, &complete, &damage, &off, buf, sizeof(buf));
	cr_assert_eq(rc, 0);
	cr_assert_eq(n, s->n_items_before[b]);
	snprintf(full, sizeof(full), "%s in block %d", want, b);
	cr_assert_str_eq(damage, full);
	cr_assert_eq(off, payload + item_off);
	free(copy);
}

Test(spool, bad_items_with_good_checksums)
{
	struct small_spool s;

	make_small_spool(&s);
	/* block 0 starts with the string "cudaMalloc" (id 1, 32 bytes), then the stack */
	check_bad_item(&s, 0, 0, 4, 12, "bad item size");
	check_bad_item(&s, 0, 0, 4, 8, "bad item size");
	check_bad_item(&s, 0, 0, 4, 4096, "item overruns its block");
	check_bad_item(&s, 0, 0, 8, 0, "bad string id");
	check_bad_item(&s, 0, 0, 8, 1u << 24, "bad string id");
	check_bad_item(&s, 0, 0, 12, 17, "string overruns its item");
	check_bad_item(&s, 0, 32, 12, 129, "stack deeper than 128 frames");
	check_bad_item(&s, 0, 32, 12, 3, "stack overruns its item");
	check_bad_item(&s, 0, 32, 8, 0, "bad stack id");
	/* block 2 defines "forward" as string 4: make it string 1 again */
	check_bad_item(&s, 2, 0, 8, 1, "string id defined twice");
	/* block 1: the first event shrunk to 88 bytes */
	check_bad_item(&s, 1, 0, 4, 88, "bad item size");
	free(s.bytes);
}

Test(spool, duplicate_id_inside_a_block_leaves_the_tables_as_before)
{
	char *path = th_path(dir, "a.mpt");
	struct mp_spool_writer *w = open_writer(path, 0, 0);
	struct mp_spool_string st;
	struct mp_spool_reader *r;
	unsigned char item[24];
	size_t len;
	FILE *f;

	cr_assert_eq(mp_spool_cstring(w, "kept"), 1);
	mp_spool_flush(w, 1);
	/* block 1: string 2 "dup", then string 2 again */
	memset(&st, 0, sizeof(st));
	st.head.type = MP_SI_STRING;
	st.head.bytes = 24;
	st.id = 2;
	st.len = 3;
	memset(item, 0, sizeof(item));
	memcpy(item, &st, sizeof(st));
	memcpy(item + 16, "dup", 3);
	cr_assert_eq(mp_spool_append(w, item, sizeof(item)), 0);
	cr_assert_eq(mp_spool_append(w, item, sizeof(item)), 0);
	cr_assert_eq(mp_spool_writer_close(w, 0, 0), 0);
	r = open_reader(path, &f);
	cr_assert_eq(drain(r), 0);
	cr_assert_str_eq(mp_spool_reader_damage(r, NULL), "string id defined twice in block 1");
	cr_assert_str_eq(mp_spool_reader_string(r, 1, &len), "kept");
	cr_assert_null(mp_spool_reader_string(r, 2, &len));
	close_reader(r, f);
	free(path);
}

Test(spool, unknown_item_types_are_skipped)
{
	char *path = th_path(dir, "a.mpt");
	struct mp_spool_writer *w = open_writer(path, 0, 0);
	struct mp_spool_event ev = make_event(MP_SK_MARK, 3, 3);
	uint64_t unknown[4] = {0};
	struct mp_spool_item_head ih = {99, 0, 32};
	struct mp_spool_reader *r;
	FILE *f;

	memcpy(unknown, &ih, sizeof(ih));
	cr_assert_eq(mp_spool_append(w, unknown, sizeof(unknown)), 0);
	cr_assert_eq(mp_spool_event(w, &ev), 0);
	cr_assert_eq(mp_spool_append(w, unknown, 12), -1); /* not a multiple of 8 */
	cr_assert_eq(mp_spool_writer_close(w, 0, 0), 0);
	r = open_reader(path, &f);
	cr_assert_eq(drain(r), 2);
	cr_assert(mp_spool_reader_complete(r));
	cr_assert_eq(mp_spool_reader_footer(r)->n_dropped, 1);
	close_reader(r, f);
	free(path);
}

/* Write a complete spool, let edit change its header, expect err to hold want. */
static void check_bad_header(void (*edit)(struct mp_spool_header *), const char *want)
{
	char *path = th_path(dir, "h.mpt");
	struct mp_spool_writer *w = open_writer(path, 0, 0);
	struct mp_spool_reader *r = NULL;
	struct mp_spool_header h;
	struct mp_error err;
	FILE *f;

	cr_assert_eq(mp_spool_writer_close(w, 0, 0), 0);
	f = fopen(path, "r+b");
	cr_assert_eq(fread(&h, sizeof(h), 1, f), 1);
	edit(&h);
	rewind(f);
	cr_assert_eq(fwrite(&h, sizeof(h), 1, f), 1);
	rewind(f);
	cr_assert_eq(mp_spool_reader_open(&r, f, path, &err), MP_EFORMAT);
	cr_assert_null(r);
	cr_assert(strstr(err.msg, path), "%s", err.msg);
	cr_assert(strstr(err.msg, want), "'%s' lacks '%s'", err.msg, want);
	fclose(f);
	unlink(path);
	free(path);
}

static void swap_order(struct mp_spool_header *h)
{
	h->byte_order = 0x04030201u;
	h->version = 1u << 24;
}

static void newer(struct mp_spool_header *h)
{
	h->version = MP_SPOOL_VERSION + 1;
}

static void bad_magic(struct mp_spool_header *h)
{
	h->magic[7] = 2;
}

static void odd_event_size(struct mp_spool_header *h)
{
	h->event_bytes = 104;
}

Test(spool, bad_headers)
{
	char *path = th_path(dir, "text.mpt");
	struct mp_spool_reader *r;
	struct mp_error err;
	FILE *f;

	check_bad_header(swap_order, "other byte order");
	check_bad_header(newer, "version 2, newer than this memprof reads");
	check_bad_header(bad_magic, "not a spool");
	check_bad_header(odd_event_size, "events of 104");

	th_write(path, "");
	f = fopen(path, "rb");
	cr_assert_eq(mp_spool_reader_open(&r, f, path, &err), MP_EFORMAT);
	cr_assert(strstr(err.msg, "empty file"), "%s", err.msg);
	fclose(f);
	th_write(path, "time,op,addr,bytes\n0,alloc,0x10,16\n");
	f = fopen(path, "rb");
	cr_assert_eq(mp_spool_reader_open(&r, f, path, &err), MP_EFORMAT);
	cr_assert(strstr(err.msg, "not a spool"), "%s", err.msg);
	cr_assert(strstr(err.msg, path), "%s", err.msg);
	fclose(f);
	th_write(path, "MPSPOOL\x01short");
	f = fopen(path, "rb");
	cr_assert_eq(mp_spool_reader_open(&r, f, path, &err), MP_EFORMAT);
	cr_assert(strstr(err.msg, "13 bytes"), "%s", err.msg);
	fclose(f);
	free(path);
}
