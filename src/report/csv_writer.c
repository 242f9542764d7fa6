/*
 * report/csv_writer.c - records to memprof CSV text, formatted by hand into
 * a large buffer (printf per field is the bottleneck on 10^7 events).  Stack
 * texts are formatted once per stack id and cached.
 */
#include "report/csv_writer.h"
#include "util/intmap.h"
#include "util/op_names.h"
#include "util/stack_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BUF_BYTES (1 << 20)

struct mp_csv_writer {
	FILE *out;
	char *buf;
	size_t len;
	int failed, saved_errno;
	int durations;                /* the duration_ns column is written */
	struct mp_intmap stack_texts; /* stack id -> malloc'd text */
};

static void flush(struct mp_csv_writer *w)
{
	if (w->len && !w->failed && fwrite(w->buf, 1, w->len, w->out) != w->len) {
		w->failed = 1;
		w->saved_errno = errno ? errno : EIO;
	}
	w->len = 0;
}

static void put(struct mp_csv_writer *w, const char *s, size_t n)
{
	while (n) {
		size_t room = BUF_BYTES - w->len, k = n < room ? n : room;

		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
		if (w->len == BUF_BYTES)
			flush(w);
	}
}

static void put_u64(struct mp_csv_writer *w, uint64_t v)
{
	char tmp[24];
	int i = 24;

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(w, tmp + i, (size_t)(24 - i));
}

static void put_i64(struct mp_csv_writer *w, int64_t v)
{
	if (v < 0) {
		put(w, "-", 1);
		put_u64(w, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(w, (uint64_t)v);
	}
}

static void put_hex(struct mp_csv_writer *w, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[20];
	int i = 20;

	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	put(w, tmp + i, (size_t)(20 - i));
}

/* A text field, quoted (RFC 4180) when it holds a comma, quote or line break. */
static void put_text(struct mp_csv_writer *w, const char *s)
{
	const char *p;

	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		put(w, s, strlen(s));
		return;
	}
	put(w, "\"", 1);
	for (p = s; *p; p++) {
		if (*p == '"')
			put(w, "\"", 1);
		put(w, p, 1);
	}
	put(w, "\"", 1);
}

struct mp_csv_writer *mp_csv_writer_open(FILE *out, int durations)
{
	static const char header[] =
	        "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,"
	        "thread,stack";
	struct mp_csv_writer *w = calloc(1, sizeof(*w));

	if (!w || !(w->buf = malloc(BUF_BYTES))) {
		free(w);
		return NULL;
	}
	w->out = out;
	w->durations = durations;
	mp_intmap_init(&w->stack_texts);
	put(w, header, sizeof(header) - 1);
	if (durations)
		put(w, ",duration_ns", 12);
	put(w, "\n", 1);
	return w;
}

static const char *stack_text(struct mp_csv_writer *w, const struct memprof_record *rec)
{
	uint64_t v;
	char *t;

	if (!rec->stack || rec->ev.stack_id == 0)
		return NULL;
	if (mp_intmap_get(&w->stack_texts, (uint64_t)rec->ev.stack_id, &v))
		return (const char *)(uintptr_t)v;
	t = mp_stack_text_format(rec->stack, NULL);
	if (!t || mp_intmap_put(&w->stack_texts, (uint64_t)rec->ev.stack_id,
	                        (uint64_t)(uintptr_t)t) < 0) {
		free(t);
		return NULL;
	}
	return t;
}

int mp_csv_writer_record(struct mp_csv_writer *w, const struct memprof_record *rec)
{
	const struct memprof_event *ev = &rec->ev;
	const char *op = mp_op_name(ev->op), *stack = stack_text(w, rec);

	if (!op || (rec->stack && ev->stack_id && !stack)) {
		w->failed = 1;
		w->saved_errno = op ? ENOMEM : EINVAL;
		return -1;
	}
	put_i64(w, ev->ts_ns);
	put(w, ",", 1);
	put(w, op, strlen(op));
	put(w, ",", 1);
	put_i64(w, ev->alloc_id);
	put(w, ",", 1);
	put_i64(w, ev->size_bytes);
	put(w, ",", 1);
	put_i64(w, ev->requested_bytes);
	put(w, ",", 1);
	put_hex(w, ev->address);
	put(w, ",", 1);
	put_i64(w, ev->device);
	put(w, ",", 1);
	put_u64(w, ev->stream);
	put(w, ",", 1);
	put_i64(w, rec->pid);
	put(w, ",", 1);
	put_text(w, rec->phase);
	put(w, ",", 1);
	put_text(w, rec->api);
	put(w, ",", 1);
	if (ev->device_free_bytes >= 0)
		put_i64(w, ev->device_free_bytes);
	put(w, ",", 1);
	if (ev->thread)
		put_i64(w, ev->thread);
	put(w, ",", 1);
	put_text(w, stack);
	if (w->durations) {
		put(w, ",", 1);
		if (ev->duration_ns)
			put_i64(w, ev->duration_ns);
	}
	put(w, "\n", 1);
	return w->failed ? -1 : 0;
}

int mp_csv_writer_close(struct mp_csv_writer *w)
{
	size_t i;
	int rc;

	flush(w);
	if (!w->failed && fflush(w->out) != 0) {
		w->failed = 1;
		w->saved_errno = errno;
	}
	for (i = 0; i < w->stack_texts.cap; i++)
		if (w->stack_texts.used[i])
			free((void *)(uintptr_t)w->stack_texts.vals[i]);
	mp_intmap_free(&w->stack_texts);
	rc = w->failed ? -1 : 0;
	if (w->failed)
		errno = w->saved_errno;
	free(w->buf);
	free(w);
	return rc;
}
