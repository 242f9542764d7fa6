/*
 * capture/inject.c - InitializeInjection (the library's only export) and
 * the library's state: configuration from MEMPROF_*, the spool of this
 * process, CUPTI subscription, modes (off/dormant/recording), the flusher
 * thread, exit and fork handling, and turning itself off on any failure.
 * Never aborts, never exits, never blocks the workload.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "capture/inject_internal.h"

int InitializeInjection(void) __attribute__((visibility("default")));

static struct {
	_Atomic int mode;        /* enum mp_capture_mode */
	_Atomic int active;      /* threads between mp_capture_enter and _leave */
	_Atomic int closing;     /* exit: the spool is about to be closed */
	_Atomic int final_flush; /* exit: activity records still welcome */
	_Atomic int disabled;    /* mp_capture_disable ran */
	struct mp_spool_writer *spool;
	char spool_path[4096];
	pid_t init_pid;
	struct mp_capture_config cfg;
	CUpti_SubscriberHandle sub;
	int subscribed;
	_Atomic int activity_on;
	pthread_mutex_t ctl_lock; /* start, stop, mark, exit */
	pthread_t flusher;
	int flusher_started;
	pthread_mutex_t flusher_lock;
	pthread_cond_t flusher_cond;
	int flusher_stop;
	int control_started;
} g = {
        .ctl_lock = PTHREAD_MUTEX_INITIALIZER,
        .flusher_lock = PTHREAD_MUTEX_INITIALIZER,
        .flusher_cond = PTHREAD_COND_INITIALIZER,
};

static __thread uint32_t tl_tid;

/* --- small services ----------------------------------------------------------- */

/*
 * Set when CUPTI refused our clock: its activity records then carry CUPTI's
 * own timestamps, so every other stamp of the spool is taken from it too.
 */
static _Atomic int clock_is_cupti;

int64_t mp_capture_now(void)
{
	struct timespec ts;
	uint64_t t;

	if (atomic_load_explicit(&clock_is_cupti, memory_order_relaxed) &&
	    mp_cupti.GetTimestamp(&t) == CUPTI_SUCCESS)
		return (int64_t)t;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t CUPTIAPI monotonic_timestamp(void)
{
	return (uint64_t)mp_capture_now();
}

uint32_t mp_capture_thread_id(void)
{
	if (!tl_tid)
		tl_tid = (uint32_t)syscall(SYS_gettid);
	return tl_tid;
}

int mp_capture_mode(void)
{
	return atomic_load(&g.mode);
}

struct mp_spool_writer *mp_capture_spool(void)
{
	return g.spool;
}

int mp_capture_enter(void)
{
	atomic_fetch_add(&g.active, 1);
	if (atomic_load(&g.closing))
		return MP_CAPTURE_OFF;
	return atomic_load(&g.mode);
}

void mp_capture_leave(void)
{
	atomic_fetch_sub(&g.active, 1);
}

int mp_capture_accepts_activity(void)
{
	return !atomic_load(&g.closing) &&
	       (atomic_load(&g.mode) == MP_CAPTURE_RECORDING || atomic_load(&g.final_flush));
}

void mp_capture_flush_activity(void)
{
	if (atomic_load(&g.activity_on) && mp_cupti.ActivityFlushAll)
		mp_cupti.ActivityFlushAll(0);
}

void mp_capture_set_for_test(struct mp_spool_writer *w, int mode)
{
	g.spool = w;
	atomic_store(&g.closing, 0);
	atomic_store(&g.mode, mode);
}

/* An event of the library itself (no API, no stack). */
static void write_own_event(int kind, const char *name)
{
	struct mp_spool_event ev;
	memset(&ev, 0, sizeof ev);
	ev.kind = (uint8_t)kind;
	ev.device = -1;
	ev.thread = mp_capture_thread_id();
	ev.ts_ns = mp_capture_now();
	ev.name = name ? mp_spool_cstring(g.spool, name) : 0;
	ev.phase = mp_phase_current();
	mp_spool_event(g.spool, &ev);
}

/* Threads of ours take no signals: the workload's handlers stay on its threads. */
static void block_signals(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
}

static void restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* --- turning off ----------------------------------------------------------------- */

void mp_capture_disable(const char *fmt, ...)
{
	char why[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (atomic_exchange(&g.disabled, 1))
		return;
	atomic_store(&g.mode, MP_CAPTURE_OFF);
	atomic_fetch_add(&g.active, 1);
	if (!atomic_load(&g.closing) && g.spool) {
		write_own_event(MP_SK_DISABLED, why);
		mp_spool_flush(g.spool, 0);
	}
	atomic_fetch_sub(&g.active, 1);
	fprintf(stderr, "memprof: recording stopped: %s\n", why);
	/* Callbacks already return at once; this spares CUPTI the calls. */
	if (g.subscribed && mp_cupti.EnableAllDomains)
		mp_cupti.EnableAllDomains(0, g.sub);
	if (atomic_exchange(&g.activity_on, 0)) {
		const char *k;
		mp_activity_enable(0, &k);
	}
}

/* Disable naming a failed CUPTI call and its result. */
static int cupti_failed(const char *call, const char *what, CUptiResult r)
{
	char name[160];
	mp_capture_disable("%s%s%s failed: %s", call, what ? " " : "", what ? what : "",
	                   mp_cupti_result_name(r, name, sizeof name));
	return -1;
}

/* --- configuration ----------------------------------------------------------------- */

static int parse_uint(const char *s, unsigned long *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int mp_capture_parse_config(struct mp_capture_config *c, const char *(*get)(const char *),
                            char *err, size_t n)
{
	const char *s;
	unsigned long v;
	int bad = 0;
	*c = (struct mp_capture_config){MP_STACKS_ALL, 16, 32, 0, 200};
#define BAD(...)                                                                                   \
	do {                                                                                       \
		if (!bad++)                                                                        \
			snprintf(err, n, __VA_ARGS__);                                             \
	} while (0)
	if ((s = get("MEMPROF_STACKS")) && *s) {
		if (!strcmp(s, "off"))
			c->stacks_mode = MP_STACKS_OFF;
		else if (!strcmp(s, "sampled"))
			c->stacks_mode = MP_STACKS_SAMPLED;
		else if (!strcmp(s, "all"))
			c->stacks_mode = MP_STACKS_ALL;
		else
			BAD("MEMPROF_STACKS='%s' is not off, sampled or all", s);
	}
	if ((s = get("MEMPROF_STACK_SAMPLE")) && *s) {
		if (parse_uint(s, &v) || v < 1 || v > UINT32_MAX)
			BAD("MEMPROF_STACK_SAMPLE='%s' is not a whole number from 1", s);
		else
			c->stack_sample = (uint32_t)v;
	}
	if ((s = get("MEMPROF_STACK_DEPTH")) && *s) {
		if (parse_uint(s, &v) || v < 1)
			BAD("MEMPROF_STACK_DEPTH='%s' is not a whole number from 1", s);
		else
			c->stack_depth = v > MP_SPOOL_MAX_STACK_DEPTH ? MP_SPOOL_MAX_STACK_DEPTH
			                                              : (uint32_t)v;
	}
	if ((s = get("MEMPROF_DORMANT")) && *s)
		c->dormant = strcmp(s, "0") != 0;
	if ((s = get("MEMPROF_FLUSH_MS")) && *s) {
		if (parse_uint(s, &v) || v < 1 || v > 3600000)
			BAD("MEMPROF_FLUSH_MS='%s' is not a number of milliseconds", s);
		else
			c->flush_ms = v < 10 ? 10 : (int)v;
	}
#undef BAD
	return bad ? -1 : 0;
}

static const char *get_env(const char *name)
{
	return getenv(name);
}

/* --- the spool: header and meta ------------------------------------------------------ */

static void meta_argv(struct mp_spool_writer *w)
{
	char buf[65536];
	FILE *f = fopen("/proc/self/cmdline", "re");
	if (!f)
		return;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	buf[n] = 0;
	mp_spool_meta(w, "argv", buf);
}

static void write_meta(struct mp_spool_writer *w)
{
	static const char *const env_names[] = {
	        "RANK",
	        "LOCAL_RANK",
	        "WORLD_SIZE",
	        "OMPI_COMM_WORLD_RANK",
	        "OMPI_COMM_WORLD_LOCAL_RANK",
	        "OMPI_COMM_WORLD_SIZE",
	        "PMI_RANK",
	        "PMI_SIZE",
	        "SLURM_PROCID",
	        "SLURM_LOCALID",
	        "SLURM_NTASKS",
	        "CUDA_VISIBLE_DEVICES",
	        "PYTORCH_NO_CUDA_MEMORY_CACHING",
	        "PYTORCH_CUDA_ALLOC_CONF",
	        "PYTORCH_ALLOC_CONF",
	        "XLA_PYTHON_CLIENT_ALLOCATOR",
	        "TF_GPU_ALLOCATOR",
	        "NCCL_CUMEM_ENABLE",
	};
	char buf[4096];
	meta_argv(w);
	if (gethostname(buf, sizeof buf - 1) == 0) {
		buf[sizeof buf - 1] = 0;
		mp_spool_meta(w, "host", buf);
	}
	ssize_t k = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (k > 0) {
		buf[k] = 0;
		mp_spool_meta(w, "exe", buf);
	}
	if (mp_cupti_path())
		mp_spool_meta(w, "cupti", mp_cupti_path());
	mp_numa_write_meta(w);
	for (size_t i = 0; i < sizeof env_names / sizeof env_names[0]; i++) {
		const char *v = getenv(env_names[i]);
		if (!v)
			continue;
		snprintf(buf, sizeof buf, "env:%s", env_names[i]);
		mp_spool_meta(w, buf, v);
	}
}

static int open_spool(const char *dir, uint32_t cupti_version)
{
	struct mp_spool_header h;
	struct timespec rt;
	char host[256] = "unknown";
	memset(&h, 0, sizeof h);
	h.start_mono_ns = mp_capture_now();
	clock_gettime(CLOCK_REALTIME, &rt);
	h.start_unix_ns = (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec;
	h.pid = getpid();
	h.ppid = getppid();
	h.flags = g.cfg.dormant ? MP_SPOOL_F_DORMANT : 0;
	const char *nocache = getenv("PYTORCH_NO_CUDA_MEMORY_CACHING");
	const char *xla = getenv("XLA_PYTHON_CLIENT_ALLOCATOR");
	if (nocache && !strcmp(nocache, "1") && xla && !strcmp(xla, "platform"))
		h.flags |=
		        MP_SPOOL_F_NO_FRAMEWORK_CACHE; /* what record --no-framework-cache sets */
	h.stacks_mode = (uint32_t)g.cfg.stacks_mode;
	h.stack_sample = g.cfg.stack_sample;
	h.stack_depth = g.cfg.stack_depth;
	h.cupti_version = cupti_version;
	if (gethostname(host, sizeof host - 1) != 0)
		snprintf(host, sizeof host, "unknown");
	host[sizeof host - 1] = 0;
	for (char *p = host; *p; p++)
		if (*p == '/')
			*p = '_';
	snprintf(g.spool_path, sizeof g.spool_path, "%s/%s-%ld-%lld.mpt", dir, host, (long)h.pid,
	         (long long)h.start_unix_ns);
	struct mp_spool_writer_opts o = {0, g.cfg.flush_ms};
	sigset_t old;
	block_signals(&old);
	int rc = mp_spool_writer_open(&g.spool, g.spool_path, &h, &o);
	restore_signals(&old);
	if (rc != 0) {
		g.spool = NULL;
		mp_capture_disable("cannot create spool '%s': %s", g.spool_path, strerror(-rc));
		return -1;
	}
	return 0;
}

/* --- exit and fork ----------------------------------------------------------------------- */

static void stop_flusher(void)
{
	if (!g.flusher_started)
		return;
	pthread_mutex_lock(&g.flusher_lock);
	g.flusher_stop = 1;
	pthread_cond_signal(&g.flusher_cond);
	pthread_mutex_unlock(&g.flusher_lock);
	pthread_join(g.flusher, NULL);
	g.flusher_started = 0;
}

static void at_exit(void)
{
	if (getpid() != g.init_pid || !g.spool)
		return;
	/* First: the control thread may be waiting for ctl_lock. */
	if (g.control_started)
		mp_control_stop();
	g.control_started = 0;
	pthread_mutex_lock(&g.ctl_lock);
	stop_flusher();
	if (atomic_load(&g.mode) == MP_CAPTURE_RECORDING && atomic_load(&g.activity_on)) {
		atomic_store(&g.final_flush, 1);
		mp_cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	}
	atomic_store(&g.closing, 1);
	atomic_store(&g.mode, MP_CAPTURE_OFF);
	/* Callbacks never block: they leave within microseconds. */
	for (int i = 0; i < 2000 && atomic_load(&g.active) > 0; i++) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	if (atomic_load(&g.active) == 0) {
		struct mp_spool_writer *w = g.spool;
		g.spool = NULL;
		mp_spool_writer_close(w, mp_capture_now(), atomic_load(&g.disabled));
	}
	pthread_mutex_unlock(&g.ctl_lock);
}

static void at_fork_child(void)
{
	/* The child has none of our threads; its locks and files are the parent's. */
	atomic_store(&g.closing, 1);
	atomic_store(&g.mode, MP_CAPTURE_OFF);
	atomic_store(&g.activity_on, 0);
	if (g.spool)
		mp_spool_writer_forget(g.spool);
	g.spool = NULL;
	g.flusher_started = 0;
	mp_live_forget_after_fork();
	if (g.control_started)
		mp_control_forget_after_fork();
	g.control_started = 0;
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	g.ctl_lock = fresh;
}

/* --- the flusher ----------------------------------------------------------------------- */

static void *flusher_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g.flusher_lock);
	while (!g.flusher_stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		long long ns = until.tv_nsec + (long long)g.cfg.flush_ms * 1000000LL;
		until.tv_sec += (time_t)(ns / 1000000000LL);
		until.tv_nsec = (long)(ns % 1000000000LL);
		pthread_cond_timedwait(&g.flusher_cond, &g.flusher_lock, &until);
		if (g.flusher_stop)
			break;
		pthread_mutex_unlock(&g.flusher_lock);
		if (atomic_load(&g.mode) == MP_CAPTURE_RECORDING)
			mp_capture_flush_activity();
		pthread_mutex_lock(&g.flusher_lock);
	}
	pthread_mutex_unlock(&g.flusher_lock);
	return NULL;
}

static void start_threads(void)
{
	sigset_t old;
	block_signals(&old);
	g.flusher_started = pthread_create(&g.flusher, NULL, flusher_main, NULL) == 0;
	int rc = mp_control_start();
	restore_signals(&old);
	g.control_started = rc == 0;
	if (rc != 0 && g.cfg.dormant)
		fprintf(stderr,
		        "memprof: no control socket (%s): 'memprof attach' cannot start "
		        "this process\n",
		        strerror(-rc));
}

/* --- CUPTI ------------------------------------------------------------------------------- */

static int start_cupti(void)
{
	CUptiResult r;
	const char *what = NULL;
	r = mp_cupti.ActivityRegisterTimestampCallback(monotonic_timestamp);
	if (r != CUPTI_SUCCESS) {
		uint64_t t;
		char name[160];

		/* CUPTI keeps its own clock: use it for every stamp, and say so. */
		if (mp_cupti.GetTimestamp(&t) != CUPTI_SUCCESS)
			return cupti_failed("cuptiActivityRegisterTimestampCallback", NULL, r);
		atomic_store(&clock_is_cupti, 1);
		mp_spool_meta(g.spool, "clock", "cupti");
		mp_spool_meta(g.spool, "clock_note",
		              mp_cupti_result_name(r, name, sizeof name));
	}
	r = mp_cupti.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (r != CUPTI_SUCCESS)
		return cupti_failed("cuptiSetThreadIdType", NULL, r);
	char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2] = "";
	CUpti_SubscriberParams sp;
	memset(&sp, 0, sizeof sp);
	sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	sp.subscriberName = "memprof";
	sp.oldSubscriberName = old;
	sp.oldSubscriberSize = sizeof old;
	r = mp_cupti.Subscribe_v2(&g.sub, mp_callbacks_handler, NULL, &sp);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		char name[160];
		old[sizeof old - 1] = 0;
		mp_capture_disable(
		        "another CUPTI client holds this process (%s): %s; memprof cannot "
		        "record under another profiler",
		        old[0] ? old : "a tool that gave no name",
		        mp_cupti_result_name(r, name, sizeof name));
		return -1;
	}
	if (r != CUPTI_SUCCESS)
		return cupti_failed("cuptiSubscribe_v2", NULL, r);
	g.subscribed = 1;
	if ((r = mp_callbacks_enable(g.sub, &what)) != CUPTI_SUCCESS)
		return cupti_failed("cuptiEnableCallback", what, r);
	if ((r = mp_phases_enable(g.sub)) != CUPTI_SUCCESS)
		return cupti_failed("cuptiEnableCallback", "(NVTX)", r);
	if ((r = mp_activity_register()) != CUPTI_SUCCESS)
		return cupti_failed("cuptiActivityRegisterCallbacks", NULL, r);
	if (!g.cfg.dormant) {
		atomic_store(&g.activity_on, 1);
		if ((r = mp_activity_enable(1, &what)) != CUPTI_SUCCESS)
			return cupti_failed("cuptiActivityEnable", what, r);
	}
	return 0;
}

static void initialize(void)
{
	const char *s = getenv("MEMPROF_DISABLE");
	if (s && *s && strcmp(s, "0") != 0)
		return;
	const char *dir = getenv("MEMPROF_SPOOL_DIR");
	if (!dir || !*dir) {
		fprintf(stderr, "memprof: MEMPROF_SPOOL_DIR is not set: this process is not "
		                "recorded\n");
		return;
	}
	char cfg_err[256] = "", cupti_err[768] = "";
	int cfg_bad = mp_capture_parse_config(&g.cfg, get_env, cfg_err, sizeof cfg_err);
	int cupti_bad = mp_cupti_load(NULL, cupti_err, sizeof cupti_err);
	uint32_t version = 0;
	if (!cupti_bad && mp_cupti.GetVersion(&version) != CUPTI_SUCCESS)
		version = 0;
	g.init_pid = getpid();
	if (open_spool(dir, version) != 0)
		return;
	atexit(at_exit);
	pthread_atfork(NULL, NULL, at_fork_child);
	write_meta(g.spool);
	mp_modules_scan(g.spool);
	if (cfg_bad) {
		mp_capture_disable("%s", cfg_err);
		return;
	}
	if (cupti_bad) {
		mp_capture_disable("%s", cupti_err);
		return;
	}
	mp_stacks_init(g.cfg.stacks_mode, g.cfg.stack_sample, g.cfg.stack_depth);
	if (start_cupti() != 0)
		return;
	start_threads();
	atomic_store(&g.mode, g.cfg.dormant ? MP_CAPTURE_DORMANT : MP_CAPTURE_RECORDING);
}

int InitializeInjection(void)
{
	static _Atomic int once;
	if (!atomic_exchange(&once, 1))
		initialize();
	return 1;
}

/* --- control: start, stop, mark, status ------------------------------------------------------- */

static int reply(char *msg, size_t n, int rc, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int reply(char *msg, size_t n, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (msg && n)
		vsnprintf(msg, n, fmt, ap);
	va_end(ap);
	return rc;
}

static const char *mode_name(int mode)
{
	return mode == MP_CAPTURE_RECORDING ? "recording"
	       : mode == MP_CAPTURE_DORMANT ? "dormant"
	                                    : "off";
}

int mp_capture_start(char *msg, size_t n)
{
	pthread_mutex_lock(&g.ctl_lock);
	int mode = atomic_load(&g.mode), rc;
	if (mode != MP_CAPTURE_DORMANT || !g.spool || atomic_load(&g.closing)) {
		rc = reply(msg, n, -1, "cannot start: the library is %s", mode_name(mode));
		goto out;
	}
	int64_t now = mp_capture_now();
	write_own_event(MP_SK_WINDOW_START, NULL);
	mp_live_write_preexisting(g.spool, now);
	mp_modules_scan(g.spool);
	atomic_store(&g.mode, MP_CAPTURE_RECORDING);
	const char *what = "";
	CUptiResult r = mp_cupti.ActivityEnable ? mp_activity_enable(2, &what) : CUPTI_SUCCESS;
	if (r != CUPTI_SUCCESS) {
		char name[160];
		const char *k;
		mp_activity_enable(0, &k);
		atomic_store(&g.mode, MP_CAPTURE_DORMANT);
		write_own_event(MP_SK_WINDOW_STOP, NULL);
		rc = reply(msg, n, -1, "cannot enable CUPTI activity %s: %s", what,
		           mp_cupti_result_name(r, name, sizeof name));
		goto out;
	}
	atomic_store(&g.activity_on, mp_cupti.ActivityEnable != NULL);
	rc = reply(msg, n, 0, "recording");
out:
	pthread_mutex_unlock(&g.ctl_lock);
	return rc;
}

int mp_capture_stop(char *msg, size_t n)
{
	pthread_mutex_lock(&g.ctl_lock);
	int mode = atomic_load(&g.mode), rc;
	if (mode != MP_CAPTURE_RECORDING || !g.spool || atomic_load(&g.closing)) {
		rc = reply(msg, n, -1, "cannot stop: the library is %s", mode_name(mode));
		goto out;
	}
	if (atomic_exchange(&g.activity_on, 0)) {
		const char *k;
		mp_activity_enable(0, &k);
		mp_cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	}
	atomic_store(&g.mode, MP_CAPTURE_DORMANT);
	write_own_event(MP_SK_WINDOW_STOP, NULL);
	mp_spool_flush(g.spool, 1);
	rc = reply(msg, n, 0, "dormant");
out:
	pthread_mutex_unlock(&g.ctl_lock);
	return rc;
}

int mp_capture_mark(const char *label, char *msg, size_t n)
{
	pthread_mutex_lock(&g.ctl_lock);
	int mode = atomic_load(&g.mode), rc;
	if (mode != MP_CAPTURE_RECORDING || !g.spool || atomic_load(&g.closing)) {
		rc = reply(msg, n, -1, "cannot mark: the library is %s", mode_name(mode));
	} else {
		write_own_event(MP_SK_MARK, label ? label : "");
		rc = reply(msg, n, 0, "marked");
	}
	pthread_mutex_unlock(&g.ctl_lock);
	return rc;
}

void mp_capture_status(char *buf, size_t n)
{
	uint64_t n_live = 0, live_bytes = 0, events = 0, dropped = 0;
	pthread_mutex_lock(&g.ctl_lock);
	int mode = atomic_load(&g.mode);
	if (g.spool) {
		events = mp_spool_n_events(g.spool);
		dropped = mp_spool_n_dropped(g.spool);
	}
	mp_live_totals(&n_live, &live_bytes);
	snprintf(buf, n,
	         "mode=%s pid=%ld spool=%s events=%llu dropped=%llu live_allocations=%llu "
	         "live_bytes=%llu",
	         mode_name(mode), (long)getpid(), g.spool && g.spool_path[0] ? g.spool_path : "-",
	         (unsigned long long)events, (unsigned long long)dropped,
	         (unsigned long long)n_live, (unsigned long long)live_bytes);
	pthread_mutex_unlock(&g.ctl_lock);
}
