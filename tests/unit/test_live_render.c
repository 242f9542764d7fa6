/*
 * tests/unit/test_live_render.c - the renderers of the live figures: the
 * terminal view and the summary line (src/live/view.c), the Prometheus
 * exposition (expo.c) and the HTTP answers (http.c), on a state with known
 * figures; and the log tail's lines.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "live/expo.h"
#include "live/http.h"
#include "live/view.h"
#include "live_helpers.h"

static char *dir;
static struct mp_live_state st;
static struct mp_live_follow *f;

/* pid 4000 rank 2: on device 0 a 4 MiB segment-free program with 3 MiB live
 * (1 MiB freed) made by two sites, durations 2 and 6 us; device 1 nothing. */
static void setup(void)
{
	char *path;
	struct lh_spool s;
	uint32_t a, b;

	dir = th_mkdtemp();
	path = th_path(dir, "h-4000-1.mpt");
	lh_open(&s, path, 4000);
	lh_meta(&s, "env:RANK", "2");
	lh_module(&s, "/srv/app/train", 0x400000, 0x500000);
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_VMM_MAP,
	                                     .device = 0,
	                                     .address = 0xa0000000,
	                                     .bytes = 4 << 20});
	a = lh_stack(&s, 0x401000, 0);
	b = lh_stack(&s, 0x402000, 0);
	lh_alloc(&s, "cudaMalloc", 0x1000, 2 << 20, 2000, a);
	lh_alloc(&s, "cudaMalloc", 0x2000, 1 << 20, 6000, b);
	lh_alloc(&s, "cudaMalloc", 0x3000, 1 << 20, 0, b);
	lh_free(&s, "cudaFree", 0x3000);

	lh_close(&s);
	free(path);
	f = lh_follow_all(dir, &st);
	mp_live_state_tick(&st, 2000000000);
	cr_assert_eq(mp_live_state_label_sites(&st, 5), 0);
}

static void teardown(void)
{
	mp_live_state_free(&st);
	mp_live_follow_free(f);
	th_rmdir(dir);
}

TestSuite(render, .init = setup, .fini = teardown);

/* Line k (from 0) of text, into buf. */
static const char *nth_line(const char *text, int k, char *buf, size_t size)
{
	const char *end;

	while (k-- > 0 && text && (text = strchr(text, '\n')))
		text++;
	cr_assert(text && *text, "no such line");
	end = strchr(text, '\n');
	snprintf(buf, size, "%.*s", (int)(end ? end - text : (long)strlen(text)), text);
	return buf;
}

static int n_lines(const char *text)
{
	int n = 0;

	for (; text && *text; text++)
		n += *text == '\n';
	return n;
}

Test(render, the_view_shows_the_known_figures)
{
	struct mp_live_text t = {0};
	const char *log[] = {"step 1", "step 2"};
	struct mp_live_view_opts o = {120, 40, "job.log", log, 2};
	char b[256];

	cr_assert_eq(mp_live_render_view(&st, &o, &t), 0);
	cr_assert_str_eq(nth_line(t.p, 0, b, sizeof(b)),
	                 "memprof record --live   2.0 s   1 process   0 events dropped   "
	                 "q: close this view");
	cr_assert_str_eq(nth_line(t.p, 1, b, sizeof(b)),
	                 "PID     RANK DEV       LIVE   RESERVED  PEAK LIVE   PEAK RES    FREE  "
	                 "ALLOCS   FREES ALLOC/S    BYTES/S     P50     P99");
	cr_assert_str_eq(nth_line(t.p, 2, b, sizeof(b)),
	                 "4000       2   0   3.00 MiB   4.00 MiB   4.00 MiB   4.00 MiB   0.250  "
	                 "     3       1     1.5 2.00 MiB/s    2 us    6 us");
	cr_assert_str_eq(nth_line(t.p, 4, b, sizeof(b)), "top call sites by live bytes:");
	cr_assert_str_eq(nth_line(t.p, 5, b, sizeof(b)),
	                 "    2.00 MiB      1 allocs  pid 4000     train+0x1000");
	cr_assert_str_eq(nth_line(t.p, 6, b, sizeof(b)),
	                 "    1.00 MiB      1 allocs  pid 4000     train+0x2000");
	cr_assert_str_eq(nth_line(t.p, 8, b, sizeof(b)), "command output (job.log):");
	cr_assert_str_eq(nth_line(t.p, 10, b, sizeof(b)), "  step 2");
	cr_assert_eq(n_lines(t.p), 11);
	mp_live_text_free(&t);
}

Test(render, the_view_fits_the_terminal)
{
	struct mp_live_text t = {0};
	const char *log[] = {"a", "b", "c", "d", "e", "f"};
	struct mp_live_view_opts o = {40, 11, "job.log", log, 6};
	const char *p;
	char b[256];

	cr_assert_eq(mp_live_render_view(&st, &o, &t), 0);
	cr_assert_eq(n_lines(t.p), 11);
	for (p = t.p; *p; p = strchr(p, '\n') + 1)
		cr_assert_leq(strchr(p, '\n') - p, 40, "a line wider than the terminal");
	cr_assert_str_eq(nth_line(t.p, 9, b, sizeof(b)), "  e", "the last lines that fit");
	cr_assert_str_eq(nth_line(t.p, 10, b, sizeof(b)), "  f");
	mp_live_text_clear(&t);
	o.height = 2;
	mp_live_render_view(&st, &o, &t);
	cr_assert_eq(n_lines(t.p), 2);
	mp_live_text_free(&t);
}

Test(render, the_summary_line)
{
	struct mp_live_text t = {0};

	cr_assert_eq(mp_live_render_line(&st, &t), 0);
	cr_assert_str_eq(t.p,
	                 "memprof record: 2.0 s: live 3.00 MiB, reserved 4.00 MiB, peaks: live "
	                 "4.00 MiB, reserved 4.00 MiB, 3 allocs (1.5/s, 2.00 MiB/s), 1 "
	                 "frees, p50 2 us, p99 6 us, 1 process, 0 dropped");
	mp_live_text_free(&t);
}

Test(render, an_empty_state)
{
	struct mp_live_state empty;
	struct mp_live_text t = {0};
	struct mp_live_view_opts o = {120, 40, NULL, NULL, 0};
	char b[256];

	mp_live_state_init(&empty, 0);
	mp_live_render_view(&empty, &o, &t);
	cr_assert_str_eq(nth_line(t.p, 2, b, sizeof(b)),
	                 "(no allocation yet: the figures come from the spools once a process "
	                 "calls CUDA)");
	mp_live_text_clear(&t);
	mp_live_render_metrics(&empty, &t);
	cr_assert(strstr(t.p, "# TYPE memprof_live_bytes gauge\n# HELP memprof_reserved_bytes"));
	cr_assert(strstr(t.p, "\nmemprof_processes 0\n"));
	mp_live_text_free(&t);
	mp_live_state_free(&empty);
}

static const char expected_metrics[] =
        "# HELP memprof_live_bytes Bytes of live allocations (block level) on the device.\n"
        "# TYPE memprof_live_bytes gauge\n"
        "memprof_live_bytes{device=\"0\",pid=\"4000\",rank=\"2\"} 3145728\n"
        "# HELP memprof_reserved_bytes Bytes reserved from the driver (segments and mappings); "
        "absent where not known.\n"
        "# TYPE memprof_reserved_bytes gauge\n"
        "memprof_reserved_bytes{device=\"0\",pid=\"4000\",rank=\"2\"} 4194304\n"
        "# HELP memprof_peak_live_bytes Highest live bytes on the device since recording "
        "began.\n"
        "# TYPE memprof_peak_live_bytes gauge\n"
        "memprof_peak_live_bytes{device=\"0\",pid=\"4000\",rank=\"2\"} 4194304\n"
        "# HELP memprof_peak_reserved_bytes Highest reserved bytes on the device since "
        "recording began.\n"
        "# TYPE memprof_peak_reserved_bytes gauge\n"
        "memprof_peak_reserved_bytes{device=\"0\",pid=\"4000\",rank=\"2\"} 4194304\n"
        "# HELP memprof_free_share_ratio Free bytes inside reserved memory over reserved "
        "bytes (0 to 1); absent where not known.\n"
        "# TYPE memprof_free_share_ratio gauge\n"
        "memprof_free_share_ratio{device=\"0\",pid=\"4000\",rank=\"2\"} 0.25\n"
        "# HELP memprof_allocations_total Allocation calls that made memory on the device.\n"
        "# TYPE memprof_allocations_total counter\n"
        "memprof_allocations_total{device=\"0\",pid=\"4000\",rank=\"2\"} 3\n"
        "# HELP memprof_frees_total Free calls that released a live allocation on the device.\n"
        "# TYPE memprof_frees_total counter\n"
        "memprof_frees_total{device=\"0\",pid=\"4000\",rank=\"2\"} 1\n"
        "# HELP memprof_allocated_bytes_total Bytes allocated on the device by allocation "
        "calls.\n"
        "# TYPE memprof_allocated_bytes_total counter\n"
        "memprof_allocated_bytes_total{device=\"0\",pid=\"4000\",rank=\"2\"} 4194304\n"
        "# HELP memprof_ooms_total Allocation calls that failed for lack of memory on the "
        "device.\n"
        "# TYPE memprof_ooms_total counter\n"
        "memprof_ooms_total{device=\"0\",pid=\"4000\",rank=\"2\"} 0\n"
        "# HELP memprof_alloc_latency_seconds Duration of the allocation calls that made memory "
        "on the device.\n"
        "# TYPE memprof_alloc_latency_seconds histogram\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"1e-06\"} "
        "0\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"2.5e-06\"} "
        "1\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"5e-06\"} "
        "1\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"1e-05\"} "
        "2\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"2.5e-05\"} "
        "2\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"5e-05\"} "
        "2\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"0.0001\"} "
        "2\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"0.00025\"} "
        "2\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"0.0005\"} "
        "2\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"0.001\"} "
        "2\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"0.01\"} 2\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"0.1\"} 2\n"
        "memprof_alloc_latency_seconds_bucket{device=\"0\",pid=\"4000\",rank=\"2\",le=\"+Inf\"} 2\n"
        "memprof_alloc_latency_seconds_sum{device=\"0\",pid=\"4000\",rank=\"2\"} 0.000008000\n"
        "memprof_alloc_latency_seconds_count{device=\"0\",pid=\"4000\",rank=\"2\"} 2\n"
        "# HELP memprof_dropped_events_total Events the recording lost (buffers full, write "
        "errors), per process.\n"
        "# TYPE memprof_dropped_events_total counter\n"
        "memprof_dropped_events_total{pid=\"4000\",rank=\"2\"} 0\n"
        "# HELP memprof_processes Processes of the recorded command that wrote a spool so far.\n"
        "# TYPE memprof_processes gauge\n"
        "memprof_processes 1\n";

Test(render, the_exposition)
{
	struct mp_live_text t = {0};

	cr_assert_eq(mp_live_render_metrics(&st, &t), 0);
	cr_assert_str_eq(t.p, expected_metrics);
	mp_live_text_free(&t);
}

/* --- HTTP ------------------------------------------------------------------------------- */

static int body(void *arg, struct mp_live_text *b)
{
	(void)arg;
	return mp_live_printf(b, "x 1\n");
}

static void answer(const char *req, const char *expected)
{
	struct mp_live_text t = {0};

	cr_assert_eq(mp_live_http_answer(req, strlen(req), body, NULL, &t), 1, "%s", req);
	cr_assert_str_eq(t.p, expected, "request: %s", req);
	mp_live_text_free(&t);
}

#define OK_HEAD                                                                                    \
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"            \
	"Content-Length: 4\r\nConnection: close\r\n\r\n"

Test(render, http_answers)
{
	struct mp_live_text t = {0};
	char big[MP_LIVE_HTTP_MAX_REQUEST + 10];

	answer("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", OK_HEAD "x 1\n");
	answer("GET /metrics?name[]=x HTTP/1.0\n\n", OK_HEAD "x 1\n");
	answer("HEAD /metrics HTTP/1.1\r\n\r\n", OK_HEAD);
	answer("GET / HTTP/1.1\r\n\r\n",
	       "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\n"
	       "Content-Length: 14\r\nConnection: close\r\n\r\n404 Not Found\n");
	answer("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
	       "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\n"
	       "Content-Length: 23\r\nAllow: GET, HEAD\r\nConnection: close\r\n\r\n"
	       "405 Method Not Allowed\n");
	answer("GARBAGE\r\n\r\n",
	       "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
	       "Content-Length: 16\r\nConnection: close\r\n\r\n400 Bad Request\n");
	answer("GET /metrics HTTP/2.0\r\n\r\n",
	       "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
	       "Content-Length: 16\r\nConnection: close\r\n\r\n400 Bad Request\n");
	answer("get /metrics HTTP/1.1\r\n\r\n",
	       "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
	       "Content-Length: 16\r\nConnection: close\r\n\r\n400 Bad Request\n");
	cr_assert_eq(mp_live_http_answer("GET /metrics HTTP/1.1\r\nHost", 27, body, NULL, &t), 0,
	             "not complete yet");
	memset(big, 'a', sizeof(big));
	cr_assert_eq(mp_live_http_answer(big, sizeof(big), body, NULL, &t), 1);
	cr_assert(strstr(t.p, "400 Bad Request"));
	mp_live_text_free(&t);
}

Test(render, log_lines)
{
	char buf[64];
	const char *lines[3];

	strcpy(buf, "tail of a\nb\r\n\nc\td\x1b[1m\ne");
	cr_assert_eq(mp_live_log_lines(buf, strlen(buf), 0, lines, 3), 3);
	cr_assert_str_eq(lines[0], "b");
	cr_assert_str_eq(lines[1], "c d?[1m");
	cr_assert_str_eq(lines[2], "e");
	strcpy(buf, "first\nsecond\n");
	cr_assert_eq(mp_live_log_lines(buf, strlen(buf), 1, lines, 3), 2);
	cr_assert_str_eq(lines[0], "first");
}

/* OOMs appear in the view's first line and at the end of the summary line
 * once there are some (the state of setup has none: no mention there). */
Test(render, ooms_once_there_are_some)
{
	struct mp_live_state st2;
	struct mp_live_follow *f2;
	struct mp_live_text t = {0};
	struct mp_live_view_opts o = {120, 40, NULL, NULL, 0};
	struct lh_spool s;
	char *d = th_mkdtemp(), *path = th_path(d, "h-4001-1.mpt"), b[256];

	lh_open(&s, path, 4001);
	lh_alloc(&s, "cudaMalloc", 0x1000, 1 << 20, 2000, 0);
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_OOM, .device = 0, .bytes = 1 << 30});
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_OOM, .device = 1, .bytes = 1 << 30});
	lh_close(&s);
	f2 = lh_follow_all(d, &st2);
	mp_live_state_tick(&st2, 1000000000);
	cr_assert_eq(mp_live_render_view(&st2, &o, &t), 0);
	cr_assert_str_eq(nth_line(t.p, 0, b, sizeof(b)),
	                 "memprof record --live   1.0 s   1 process   0 events dropped   2 OOMs   "
	                 "q: close this view");
	mp_live_text_clear(&t);
	cr_assert_eq(mp_live_render_line(&st2, &t), 0);
	cr_assert(strstr(t.p, ", 1 process, 0 dropped, 2 OOMs") != NULL, "%s", t.p);
	mp_live_text_free(&t);
	mp_live_state_free(&st2);
	mp_live_follow_free(f2);
	free(path);
	th_rmdir(d);
}
