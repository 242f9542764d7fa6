/*
 * tests/tools/spool_script.c - writes a spool with the real writer from a
 * text script on stdin, so tests of 'memprof record', the spool importer and
 * attach can make spools without a GPU.  A test tool: it prints errors and
 * exits 1 on a bad line (with its number), 2 on usage.
 *
 * Usage: spool_script [OUT.mpt]
 *   Without OUT and with MEMPROF_SPOOL_DIR set, writes HOST-PID-STARTNS.mpt
 *   there (STARTNS: the header's start_mono_ns), as the injected library
 *   names its spool, and prints nothing.  Options of the writer come from
 *   MEMPROF_FLUSH_MS (ms) and SPOOL_SCRIPT_BUFFER_BYTES.
 *
 * Script: one item per line; '#' starts a comment line; words are KEY=VALUE
 * or bare, a value may be "double quoted" (\" and \\ inside).  Numbers are
 * decimal or 0x hex; negative decimals where the field is signed.
 *   header pid=N ppid=N flags=N stacks=off|sampled|all|0|1|2 sample=N depth=N
 *          cupti=N start=NS start_unix=NS
 *       must come first when present (else pid/ppid are this process's);
 *       start defaults to CLOCK_MONOTONIC now
 *   meta KEY VALUE
 *   string TEXT                  interns TEXT (names are interned on use too)
 *   module PATH base=A start=A end=A build_id=HEX id=N   (id default: 1, 2, ...)
 *   device ORDINAL name="..." uuid=TEXT total=BYTES node=N
 *       node: the GPU's nearest host NUMA node (-1 or absent: unknown)
 *   event kind=K name=TEXT corr=N thread=N ts=NS addr=A bytes=N device=N
 *         duration=NS stack=PC,PC,... phase=TEXT extra=N extra2=N flags=N
 *         mem_kind=N stream=N
 *       K: a number or mem_alloc mem_free pool_created pool_destroyed
 *       pool_trimmed api vmm_reserve vmm_free vmm_create vmm_release vmm_map
 *       vmm_unmap oom phase_push phase_pop mark preexisting window_start
 *       window_stop dropped disabled host_numa; device defaults to -1, the
 *       rest to 0
 *   dropped N                    counts N records lost (mp_spool_count_dropped)
 *   flush                        waits until everything so far is on disk
 *   sleep MS                     pauses MS milliseconds (what was appended may
 *                                be written meanwhile: the writer's own period)
 *   wait PATH                    pauses until PATH exists (a test says "go on")
 *   kill                         flushes, then SIGKILLs itself: a spool cut short
 *   end [disabled]               closes with the footer (also at end of input)
 */
#include "spool/writer.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORDS 64

struct word {
	char *key;   /* NULL for a bare word */
	char *value; /* the word itself when bare */
};

struct script {
	struct mp_spool_writer *w;
	struct mp_spool_header h;
	const char *path;
	char path_buf[4096];
	int lineno;
	uint32_t next_module_id;
};

static const char *const kind_names[] = {
        NULL,           "mem_alloc", "mem_free",    "pool_created", "pool_destroyed",
        "pool_trimmed", "api",       "vmm_reserve", "vmm_free",     "vmm_create",
        "vmm_release",  "vmm_map",   "vmm_unmap",   "oom",          "phase_push",
        "phase_pop",    "mark",      "preexisting", "window_start", "window_stop",
        "dropped",      "disabled",  "host_numa",
};

static int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void pause_ms(int64_t ms)
{
	struct timespec t = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static void die(const struct script *s, const char *what, const char *subject)
{
	fprintf(stderr, "spool_script: line %d: %s '%s'\n", s->lineno, what, subject);
	exit(1);
}

/* Split line into words in place; quoted values unescaped. */
static int split(struct script *s, char *p, struct word *words)
{
	int n = 0;

	for (;;) {
		char *out;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			return n;
		if (n == MAX_WORDS)
			die(s, "too many words", p);
		words[n].key = NULL;
		words[n].value = out = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			if (*p == '=' && !words[n].key) {
				*out++ = '\0';
				words[n].key = words[n].value;
				words[n].value = out;
				p++;
			} else if (*p == '"') {
				for (p++; *p && *p != '"'; p++) {
					if (*p == '\\' && p[1])
						p++;
					*out++ = *p;
				}
				if (*p != '"')
					die(s, "unterminated quote in", words[n].value);
				p++;
			} else {
				*out++ = *p++;
			}
		}
		if (*p)
			p++;
		*out = '\0';
		n++;
	}
}

static uint64_t num(const struct script *s, const char *v)
{
	char *end;
	uint64_t x;

	errno = 0;
	if (v[0] == '-')
		x = (uint64_t)strtoll(v, &end, 0);
	else
		x = strtoull(v, &end, 0);
	if (errno || end == v || *end)
		die(s, "bad number", v);
	return x;
}

static uint32_t str_id(struct script *s, const char *v)
{
	uint32_t id = mp_spool_cstring(s->w, v);

	if (!id)
		die(s, "the writer dropped the string", v);
	return id;
}

static void header_word(struct script *s, const struct word *wd)
{
	static const char *const modes[] = {"off", "sampled", "all"};
	int i;

	if (!wd->key)
		die(s, "bad header word", wd->value);
	if (!strcmp(wd->key, "pid"))
		s->h.pid = (int64_t)num(s, wd->value);
	else if (!strcmp(wd->key, "ppid"))
		s->h.ppid = (int64_t)num(s, wd->value);
	else if (!strcmp(wd->key, "flags"))
		s->h.flags = (uint32_t)num(s, wd->value);
	else if (!strcmp(wd->key, "sample"))
		s->h.stack_sample = (uint32_t)num(s, wd->value);
	else if (!strcmp(wd->key, "depth"))
		s->h.stack_depth = (uint32_t)num(s, wd->value);
	else if (!strcmp(wd->key, "cupti"))
		s->h.cupti_version = (uint32_t)num(s, wd->value);
	else if (!strcmp(wd->key, "start"))
		s->h.start_mono_ns = (int64_t)num(s, wd->value);
	else if (!strcmp(wd->key, "start_unix"))
		s->h.start_unix_ns = (int64_t)num(s, wd->value);
	else if (!strcmp(wd->key, "stacks")) {
		for (i = 0; i < 3; i++)
			if (!strcmp(wd->value, modes[i]))
				break;
		s->h.stacks_mode = i < 3 ? (uint32_t)i : (uint32_t)num(s, wd->value);
	} else
		die(s, "unknown header key", wd->key);
}

static void open_writer(struct script *s)
{
	struct mp_spool_writer_opts o = {0, 0};
	const char *dir = getenv("MEMPROF_SPOOL_DIR");
	const char *e;
	char host[256];
	int rc;

	if ((e = getenv("MEMPROF_FLUSH_MS")))
		o.flush_ms = (int)num(s, e);
	if ((e = getenv("SPOOL_SCRIPT_BUFFER_BYTES")))
		o.buffer_bytes = (size_t)num(s, e);
	if (!s->path) {
		if (gethostname(host, sizeof(host)) < 0)
			strcpy(host, "localhost");
		host[sizeof(host) - 1] = '\0';
		snprintf(s->path_buf, sizeof(s->path_buf), "%s/%s-%" PRId64 "-%" PRId64 ".mpt", dir,
		         host, s->h.pid, s->h.start_mono_ns);
		s->path = s->path_buf;
	}
	rc = mp_spool_writer_open(&s->w, s->path, &s->h, &o);
	if (rc < 0) {
		fprintf(stderr, "spool_script: cannot create spool '%s': %s\n", s->path,
		        strerror(-rc));
		exit(1);
	}
}

static void do_module(struct script *s, const struct word *wd, int n)
{
	struct mp_spool_module m;
	int i;

	memset(&m, 0, sizeof(m));
	m.head.type = MP_SI_MODULE;
	m.head.bytes = sizeof(m);
	m.id = ++s->next_module_id;
	if (n < 2 || wd[1].key)
		die(s, "module needs a path", n < 2 ? "" : wd[1].key);
	m.path = str_id(s, wd[1].value);
	for (i = 2; i < n; i++) {
		const char *k = wd[i].key ? wd[i].key : "";

		if (!strcmp(k, "base"))
			m.base = num(s, wd[i].value);
		else if (!strcmp(k, "start"))
			m.start = num(s, wd[i].value);
		else if (!strcmp(k, "end"))
			m.end = num(s, wd[i].value);
		else if (!strcmp(k, "build_id"))
			m.build_id = str_id(s, wd[i].value);
		else if (!strcmp(k, "id"))
			m.id = (uint32_t)num(s, wd[i].value);
		else
			die(s, "unknown module key", wd[i].value);
	}
	if (mp_spool_append(s->w, &m, sizeof(m)) < 0)
		die(s, "the writer dropped", "module");
}

static void do_device(struct script *s, const struct word *wd, int n)
{
	struct mp_spool_device d;
	int i;

	memset(&d, 0, sizeof(d));
	d.head.type = MP_SI_DEVICE;
	d.head.bytes = sizeof(d);
	if (n < 2 || wd[1].key)
		die(s, "device needs an ordinal", n < 2 ? "" : wd[1].key);
	d.ordinal = (int32_t)num(s, wd[1].value);
	for (i = 2; i < n; i++) {
		const char *k = wd[i].key ? wd[i].key : "";

		if (!strcmp(k, "name"))
			d.name = str_id(s, wd[i].value);
		else if (!strcmp(k, "uuid"))
			d.uuid = str_id(s, wd[i].value);
		else if (!strcmp(k, "total"))
			d.total_bytes = num(s, wd[i].value);
		else if (!strcmp(k, "node"))
			d.host_node = (uint32_t)(num(s, wd[i].value) + 1); /* -1: unknown */
		else
			die(s, "unknown device key", wd[i].value);
	}
	if (mp_spool_append(s->w, &d, sizeof(d)) < 0)
		die(s, "the writer dropped", "device");
}

static uint8_t event_kind(struct script *s, const char *v)
{
	size_t i;

	for (i = 1; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (!strcmp(v, kind_names[i]))
			return (uint8_t)i;
	return (uint8_t)num(s, v);
}

static uint32_t event_stack(struct script *s, char *v)
{
	uint64_t pcs[MP_SPOOL_MAX_STACK_DEPTH];
	uint32_t depth = 0;
	char *tok, *save = NULL;

	for (tok = strtok_r(v, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (depth == MP_SPOOL_MAX_STACK_DEPTH)
			die(s, "stack deeper than 128 frames", tok);
		pcs[depth++] = num(s, tok);
	}
	return depth ? mp_spool_stack(s->w, pcs, depth) : 0;
}

/* One KEY=VALUE of an event line; 0 when the key is unknown. */
static int event_field(struct script *s, struct mp_spool_event *ev, const char *k, char *v)
{
	if (!strcmp(k, "kind"))
		ev->kind = event_kind(s, v);
	else if (!strcmp(k, "name"))
		ev->name = str_id(s, v);
	else if (!strcmp(k, "phase"))
		ev->phase = str_id(s, v);
	else if (!strcmp(k, "stack"))
		ev->stack = event_stack(s, v);
	else if (!strcmp(k, "corr"))
		ev->correlation = (uint32_t)num(s, v);
	else if (!strcmp(k, "thread"))
		ev->thread = (uint32_t)num(s, v);
	else if (!strcmp(k, "ts"))
		ev->ts_ns = (int64_t)num(s, v);
	else if (!strcmp(k, "addr"))
		ev->address = num(s, v);
	else if (!strcmp(k, "bytes"))
		ev->bytes = num(s, v);
	else if (!strcmp(k, "device"))
		ev->device = (int32_t)num(s, v);
	else if (!strcmp(k, "duration"))
		ev->duration_ns = (int64_t)num(s, v);
	else if (!strcmp(k, "extra"))
		ev->extra = num(s, v);
	else if (!strcmp(k, "extra2"))
		ev->extra2 = num(s, v);
	else if (!strcmp(k, "flags"))
		ev->flags = (uint16_t)num(s, v);
	else if (!strcmp(k, "mem_kind"))
		ev->mem_kind = (uint8_t)num(s, v);
	else if (!strcmp(k, "stream"))
		ev->stream = num(s, v);
	else
		return 0;
	return 1;
}

static void do_event(struct script *s, struct word *wd, int n)
{
	struct mp_spool_event ev;
	int i;

	memset(&ev, 0, sizeof(ev));
	ev.device = -1;
	for (i = 1; i < n; i++)
		if (!wd[i].key || !event_field(s, &ev, wd[i].key, wd[i].value))
			die(s, "unknown event key", wd[i].key ? wd[i].key : wd[i].value);
	if (mp_spool_event(s->w, &ev) < 0)
		die(s, "the writer dropped", "event");
}

/* One script line; returns 1 at 'end'. */
static int do_line(struct script *s, struct word *wd, int n)
{
	const char *cmd = wd[0].value;

	if (!s->w)
		open_writer(s);
	if (!strcmp(cmd, "meta") && n == 3 && !wd[1].key && !wd[2].key) {
		if (mp_spool_meta(s->w, wd[1].value, wd[2].value) < 0)
			die(s, "the writer dropped", "meta");
	} else if (!strcmp(cmd, "string") && n == 2) {
		str_id(s, wd[1].value);
	} else if (!strcmp(cmd, "module")) {
		do_module(s, wd, n);
	} else if (!strcmp(cmd, "device")) {
		do_device(s, wd, n);
	} else if (!strcmp(cmd, "event")) {
		do_event(s, wd, n);
	} else if (!strcmp(cmd, "dropped") && n == 2) {
		mp_spool_count_dropped(s->w, num(s, wd[1].value));
	} else if (!strcmp(cmd, "flush") && n == 1) {
		mp_spool_flush(s->w, 1);
	} else if (!strcmp(cmd, "sleep") && n == 2) {
		pause_ms((int64_t)num(s, wd[1].value));
	} else if (!strcmp(cmd, "wait") && n == 2) {
		while (access(wd[1].value, F_OK) != 0)
			pause_ms(10);
	} else if (!strcmp(cmd, "kill") && n == 1) {
		mp_spool_flush(s->w, 1);
		kill(getpid(), SIGKILL);
	} else if (!strcmp(cmd, "end")) {
		return 1;
	} else {
		die(s, "bad line", cmd);
	}
	return 0;
}

static int finish(struct script *s, int disabled)
{
	int rc;

	if (!s->w)
		open_writer(s);
	rc = mp_spool_writer_close(s->w, mono_ns(), disabled);
	if (rc < 0) {
		fprintf(stderr, "spool_script: cannot write spool '%s': %s\n", s->path,
		        strerror(-rc));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct script s;
	struct word wd[MAX_WORDS];
	char line[65536];
	int n, disabled = 0;

	memset(&s, 0, sizeof(s));
	if (argc > 2 || (argc == 1 && !getenv("MEMPROF_SPOOL_DIR"))) {
		fprintf(stderr,
		        "usage: spool_script OUT.mpt < SCRIPT (or MEMPROF_SPOOL_DIR set)\n");
		return 2;
	}
	s.path = argc == 2 ? argv[1] : NULL;
	s.h.pid = getpid();
	s.h.ppid = getppid();
	s.h.start_mono_ns = mono_ns();
	s.h.start_unix_ns = (int64_t)time(NULL) * 1000000000;
	s.h.stacks_mode = MP_STACKS_ALL;
	s.h.stack_sample = 16;
	s.h.stack_depth = 32;
	while (fgets(line, sizeof(line), stdin)) {
		s.lineno++;
		n = split(&s, line, wd);
		if (n == 0 || wd[0].value[0] == '#')
			continue;
		if (!strcmp(wd[0].value, "header") && !s.w) {
			int i;

			for (i = 1; i < n; i++)
				header_word(&s, &wd[i]);
			continue;
		}
		if (do_line(&s, wd, n)) {
			disabled = n > 1 && !strcmp(wd[1].value, "disabled");
			break;
		}
	}
	return finish(&s, disabled);
}
