/*
 * import/torch_spill.c - a snapshot's trace entries kept out of memory.  As
 * the pickle streams a device's entries they fill a chunk of TP_CHUNK in
 * memory; a full chunk is appended to a temporary file made beside the
 * output and unlinked at once, so memory holds at most one chunk a device.
 * Readers walk a device's entries in order through one chunk of buffer.
 */
#include "import/torch.h"
#include "util/array.h"
#include "util/cleanup.h"
#include "util/temp_name.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK_BYTES ((size_t)TP_CHUNK * sizeof(struct tp_entry))

struct tp_spill {
	int fd;        /* -1 until the first chunk is written */
	uint64_t size; /* bytes written */
	char *beside;  /* the output's path, or NULL */
	char *input;   /* the snapshot, for messages */
	char msg[512]; /* the last failure */
};

struct tp_spill *tp_spill_new(const char *beside_path, const char *input)
{
	struct tp_spill *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fd = -1;
	s->beside = beside_path ? strdup(beside_path) : NULL;
	s->input = strdup(input ? input : "<input>");
	if ((beside_path && !s->beside) || !s->input) {
		tp_spill_free(s);
		return NULL;
	}
	return s;
}

void tp_spill_free(struct tp_spill *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->beside);
	free(s->input);
	free(s);
}

const char *tp_spill_error(const struct tp_spill *s)
{
	return s && s->msg[0] ? s->msg : "the temporary file of trace entries failed";
}

static int failed(struct tp_spill *s, const char *what, int e)
{
	snprintf(s->msg, sizeof(s->msg),
	         "cannot %s the temporary file that holds the trace entries of '%s': %s", what,
	         s->input, strerror(e));
	return MP_EIO;
}

/* The file, made on first use: beside the output, else in $TMPDIR or /tmp. */
static int open_file(struct tp_spill *s)
{
	const char *dir = getenv("TMPDIR");
	char *name;
	int slot = -1, e;

	if (s->beside) {
		name = mp_temp_template(s->beside);
	} else {
		size_t n = strlen(dir && *dir ? dir : "/tmp") + 32;

		if ((name = malloc(n)))
			snprintf(name, n, "%s/memprof-entries-XXXXXX", dir && *dir ? dir : "/tmp");
	}
	if (!name)
		return MP_ENOMEM;
	s->fd = mp_cleanup_mkstemp(name, &slot);
	e = errno;
	if (s->fd >= 0)
		unlink(name); /* nothing is left behind, whatever happens next */
	mp_cleanup_forget(slot);
	free(name);
	return s->fd < 0 ? failed(s, "create", e) : 0;
}

/* n bytes of buf at offset of s's file: 0 or MP_EIO. */
static int write_at(struct tp_spill *s, const void *buf, size_t n, uint64_t offset)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k =
		        pwrite(s->fd, (const char *)buf + done, n - done, (off_t)(offset + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return failed(s, "write", k < 0 ? errno : ENOSPC);
		done += (size_t)k;
	}
	return 0;
}

static int write_chunk(struct tp_spill *s, const struct tp_entry *chunk, uint64_t *at)
{
	if ((s->fd < 0 && open_file(s) < 0) || write_at(s, chunk, CHUNK_BYTES, s->size) < 0)
		return MP_EIO;
	*at = s->size;
	s->size += CHUNK_BYTES;
	return 0;
}

int tp_spill_append(struct tp_spill *s, struct tp_chunks *c, struct tp_entry **tail, size_t *n_tail,
                    size_t *cap, const struct tp_entry *e, struct mp_error *err)
{
	if (*n_tail == TP_CHUNK) {
		if (mp_array_reserve((void **)&c->at, &c->cap, c->n + 1, sizeof(*c->at)) < 0)
			return mp_err(err, MP_ENOMEM, "out of memory");
		if (write_chunk(s, *tail, &c->at[c->n]) < 0)
			return mp_err(err, MP_EIO, "%s", s->msg);
		c->n++;
		c->spill = s;
		*n_tail = 0;
	}
	if (*n_tail == *cap) {
		size_t want = *cap ? 2 * *cap : 16;
		struct tp_entry *a;

		want = want > TP_CHUNK ? TP_CHUNK : want;
		if (!(a = realloc(*tail, want * sizeof(*a))))
			return mp_err(err, MP_ENOMEM, "out of memory");
		*tail = a;
		*cap = want;
	}
	(*tail)[(*n_tail)++] = *e;
	return 0;
}

/* n bytes at offset of s's file into buf: 0 or MP_EIO. */
static int read_at(struct tp_spill *s, void *buf, size_t n, uint64_t offset)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = pread(s->fd, (char *)buf + done, n - done, (off_t)(offset + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return failed(s, "read", k < 0 ? errno : EIO);
		done += (size_t)k;
	}
	return 0;
}

void tp_reader_init(struct tp_reader *r, const struct tp_device *d)
{
	r->d = d;
	r->buf = NULL;
	r->chunk = SIZE_MAX;
	r->failed = 0;
}

const struct tp_entry *tp_reader_load(struct tp_reader *r, size_t i)
{
	const struct tp_chunks *c = &r->d->spilled;
	size_t k = i / TP_CHUNK;

	if (r->failed || k >= c->n)
		return NULL;
	if (!r->buf && !(r->buf = malloc(CHUNK_BYTES))) {
		r->failed = MP_ENOMEM;
		return NULL;
	}
	if (read_at(c->spill, r->buf, CHUNK_BYTES, c->at[k]) < 0) {
		r->failed = MP_EIO;
		r->chunk = SIZE_MAX;
		return NULL;
	}
	r->chunk = k;
	return &r->buf[i % TP_CHUNK];
}

void tp_reader_free(struct tp_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->chunk = SIZE_MAX;
}

/* Where entry i of d lies in the file (i below the spilled ones). */
static uint64_t offset_of(const struct tp_device *d, size_t i)
{
	return d->spilled.at[i / TP_CHUNK] + (uint64_t)(i % TP_CHUNK) * sizeof(struct tp_entry);
}

int tp_entry_get(const struct tp_device *d, size_t i, struct tp_entry *out)
{
	size_t base = d->spilled.n * TP_CHUNK;

	if (i >= base) {
		*out = d->entries[i - base];
		return 0;
	}
	return read_at(d->spilled.spill, out, sizeof(*out), offset_of(d, i));
}

int tp_entry_set_granted(struct tp_device *d, size_t i, int64_t granted)
{
	size_t base = d->spilled.n * TP_CHUNK;

	if (i >= base) {
		d->entries[i - base].granted = granted;
		return 0;
	}
	return write_at(d->spilled.spill, &granted, sizeof(granted),
	                offset_of(d, i) + offsetof(struct tp_entry, granted));
}
