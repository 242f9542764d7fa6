/*
 * cmd/watch.c - 'memprof watch --pid PID': the GPU memory NVML counts for a
 * process started without memprof, sampled every interval until it exits,
 * --count samples were taken, or SIGINT.  A coarse curve only (no
 * allocations, addresses or stacks; the CUDA context included), and the
 * output says so.  NVML through sys/nvml, the process through sys/proc.
 */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "sys/nvml.h"
#include "sys/proc.h"
#include "util/duration.h"
#include "util/parse.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WATCH_MAX_NSPIDS 8

struct watch {
	long pid;
	int64_t interval_ms;
	int64_t count; /* 0: until the process exits */
	int csv;
	const char *out_path; /* NULL: standard output */
	FILE *out;
	unsigned pids[WATCH_MAX_NSPIDS]; /* pid, then its NSpid values */
	size_t n_pids;
	int64_t n_samples;
	int ever_listed;
	unsigned warned; /* bit per device whose query failed once */
};

static volatile sig_atomic_t stop_signal;

enum { OPT_FORMAT = 256 }; /* long only */

static const struct mp_cmd_opt options[] = {
        {'p', "pid", "PID", "the process to watch (required)"},
        {'i', "interval", "DURATION",
         "time between samples, with its unit: 10ms to 1h\n(default 500ms)"},
        {'n', "count", "N", "stop after N samples"},
        {OPT_FORMAT, "format", "text|csv", "output format (default text)"},
        {'o', "output", "FILE", "write to FILE instead of standard output"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

static void help(FILE *out)
{
	fprintf(out, "usage: memprof watch --pid PID [options]\n\n"
	             "Sample the GPU memory NVML counts for a process started without memprof:\n"
	             "a coarse curve with no allocations, addresses or call stacks, including the\n"
	             "CUDA context.  Record the job with 'memprof record' to see allocations.\n"
	             "One line per device per sample: time_s device pid_bytes device_used_bytes\n"
	             "device_total_bytes.  Stops when the process exits, after --count samples,\n"
	             "or on SIGINT.  Needs the NVIDIA driver's libnvidia-ml.so.1.\n\n"
	             "options:\n");
	mp_cmd_opts_help(out, options);
}

static void on_stop(int sig)
{
	stop_signal = sig;
}

/* 1 when the process is alive; its NSpid values go to w->pids (sys/proc). */
static int process_alive(struct watch *w)
{
	return mp_proc_alive(w->pid, w->pids, WATCH_MAX_NSPIDS, &w->n_pids);
}

static void print_header(struct watch *w, struct mp_nvml *nv)
{
	FILE *note = w->csv ? stderr : w->out;
	unsigned i;

	fprintf(note,
	        "# memprof watch: GPU memory of pid %ld as NVML reports it, every %lld ms: a "
	        "coarse "
	        "curve with no allocations, addresses or call stacks, and it includes the CUDA "
	        "context; record the job with memprof record to see allocations\n",
	        w->pid, (long long)w->interval_ms);
	for (i = 0; i < mp_nvml_n_devices(nv); i++)
		fprintf(note, "# device %u: %s\n", i, mp_nvml_device_name(nv, i));
	if (w->csv)
		fprintf(w->out, "time_s,device,pid_bytes,device_used_bytes,device_total_bytes\n");
	else
		fprintf(w->out, "# %8s %6s %16s %18s %18s\n", "time_s", "device", "pid_bytes",
		        "device_used_bytes", "device_total_bytes");
}

/* One line per device; a field NVML did not give is "n/a" (empty in CSV). */
static void sample(struct watch *w, struct mp_nvml *nv, double t_s)
{
	char why[256], pid_text[24], used_text[24], total_text[24];
	unsigned i;

	for (i = 0; i < mp_nvml_n_devices(nv); i++) {
		uint64_t bytes = 0, used = 0, total = 0;
		const char *na = w->csv ? "" : "n/a";
		int listed =
		        mp_nvml_process_bytes(nv, i, w->pids, w->n_pids, &bytes, why, sizeof(why));
		int mem = listed < 0 ? -1 : mp_nvml_memory(nv, i, &used, &total, why, sizeof(why));

		if ((listed < 0 || mem < 0) && i < 32 && !(w->warned & (1u << i))) {
			w->warned |= 1u << i;
			fprintf(stderr, "memprof watch: device %u: %s\n", i, why);
		}
		w->ever_listed |= listed > 0;
		snprintf(pid_text, sizeof(pid_text), "%llu", (unsigned long long)bytes);
		if (listed < 0 || bytes == MP_NVML_UNKNOWN)
			snprintf(pid_text, sizeof(pid_text), "%s", na);
		snprintf(used_text, sizeof(used_text), "%llu", (unsigned long long)used);
		snprintf(total_text, sizeof(total_text), "%llu", (unsigned long long)total);
		if (mem < 0) {
			snprintf(used_text, sizeof(used_text), "%s", na);
			snprintf(total_text, sizeof(total_text), "%s", na);
		}
		if (w->csv)
			fprintf(w->out, "%.3f,%u,%s,%s,%s\n", t_s, i, pid_text, used_text,
			        total_text);
		else
			fprintf(w->out, "%10.3f %6u %16s %18s %18s\n", t_s, i, pid_text, used_text,
			        total_text);
	}
}

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Sleep until t0 + k intervals; 0, or -1 when a signal asked to stop. */
static int wait_for(const struct watch *w, const struct timespec *t0, int64_t k)
{
	int64_t ns = (int64_t)t0->tv_nsec + k * w->interval_ms * 1000000;
	struct timespec at = {.tv_sec = t0->tv_sec + (time_t)(ns / 1000000000),
	                      .tv_nsec = (long)(ns % 1000000000)};

	while (!stop_signal && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
	return stop_signal ? -1 : 0;
}

static int watch_loop(struct watch *w, struct mp_nvml *nv)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	print_header(w, nv);
	for (;;) {
		if (!process_alive(w)) {
			fprintf(stderr,
			        "memprof watch: process %ld exited; %lld sample(s) in %.1f s\n",
			        w->pid, (long long)w->n_samples, since(&t0));
			break;
		}
		sample(w, nv, since(&t0));
		w->n_samples++;
		if (fflush(w->out) != 0 || ferror(w->out))
			return mp_cmd_error(&mp_cmd_watch, "cannot write '%s': %s",
			                    w->out_path ? w->out_path : "standard output",
			                    strerror(errno));
		if (w->count && w->n_samples >= w->count)
			break;
		if (wait_for(w, &t0, w->n_samples) < 0) {
			fprintf(stderr,
			        "memprof watch: stopped by signal %d after %lld sample(s)\n",
			        (int)stop_signal, (long long)w->n_samples);
			break;
		}
	}
	if (!w->ever_listed && w->n_samples > 0)
		fprintf(stderr,
		        "memprof watch: NVML did not list pid %ld on any device: it has no CUDA "
		        "context, or (in a container) NVML lists pids of another namespace\n",
		        w->pid);
	return MP_EXIT_OK;
}

/* --interval: a duration with its unit, 10 ms to 1 h, kept in ms; prints
 * the usage error itself. */
static int parse_interval(const char *text, int64_t *ms)
{
	int64_t ns;
	int bare;
	char why[128];

	if (mp_parse_duration_unit(text, &ns, &bare) < 0) {
		mp_cmd_usage(&mp_cmd_watch, "invalid --interval '%s': %s", text,
		             mp_duration_problem(why, sizeof(why), text, bare, "ms"));
		return -1;
	}
	if (ns < 10000000 || ns > 3600000000000) {
		mp_cmd_usage(&mp_cmd_watch, "invalid --interval '%s': give 10ms to 1h", text);
		return -1;
	}
	*ms = ns / 1000000;
	return 0;
}

static int parse_args(struct watch *w, int argc, char **argv)
{
	struct mp_cmd_getopt g;
	int64_t v;
	int ch;

	mp_cmd_getopt_init(&g, options);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			if (mp_parse_count(optarg, 1, INT_MAX, &v) < 0)
				return mp_cmd_usage(&mp_cmd_watch, "invalid pid '%s'", optarg);
			w->pid = (long)v;
			break;
		case 'i':
			if (parse_interval(optarg, &w->interval_ms) < 0)
				return MP_EXIT_USAGE;
			break;
		case 'n':
			if (mp_parse_count(optarg, 1, INT64_MAX, &w->count) < 0)
				return mp_cmd_usage(&mp_cmd_watch, "invalid count '%s'", optarg);
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") != 0 && strcmp(optarg, "csv") != 0)
				return mp_cmd_usage(&mp_cmd_watch,
				                    "unknown format '%s' (text or csv)", optarg);
			w->csv = strcmp(optarg, "csv") == 0;
			break;
		case 'o':
			w->out_path = optarg;
			break;
		case 'h':
			help(stdout);
			return -1;
		default:
			return mp_cmd_bad_option(&mp_cmd_watch, argv, ch);
		}
	}
	if (optind < argc)
		return mp_cmd_usage(&mp_cmd_watch, "unexpected argument '%s'", argv[optind]);
	if (!w->pid)
		return mp_cmd_usage(&mp_cmd_watch, "no process given (--pid PID)");
	return 0;
}

static int run(int argc, char **argv)
{
	struct watch w = {.interval_ms = 500, .n_pids = 1};
	struct sigaction sa;
	struct mp_nvml *nv;
	char why[512];
	int rc = parse_args(&w, argc, argv);

	if (rc != 0)
		return rc < 0 ? MP_EXIT_OK : rc;
	w.pids[0] = (unsigned)w.pid;
	if (!process_alive(&w))
		return mp_cmd_error(&mp_cmd_watch, "no process %ld", w.pid);
	if (mp_nvml_open(&nv, why, sizeof(why)) < 0)
		return mp_cmd_error(&mp_cmd_watch, "%s: watch needs the NVIDIA driver", why);
	w.out = w.out_path ? fopen(w.out_path, "w") : stdout;
	if (!w.out) {
		mp_nvml_close(nv);
		return mp_cmd_error(&mp_cmd_watch, "cannot write '%s': %s", w.out_path,
		                    strerror(errno));
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = watch_loop(&w, nv);
	mp_nvml_close(nv);
	if (w.out_path && fclose(w.out) != 0 && rc == MP_EXIT_OK)
		rc = mp_cmd_error(&mp_cmd_watch, "cannot write '%s': %s", w.out_path,
		                  strerror(errno));
	return rc;
}

const struct mp_cmd mp_cmd_watch = {
        .name = "watch",
        .summary = "sample a process's GPU memory through NVML (no memprof inside it)",
        .usage = "memprof watch -p PID [-i DURATION] [-n N] [--format=text|csv] [-o FILE]",
        .help = help,
        .run = run,
};
