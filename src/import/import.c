/*
 * import/import.c - the importer table, format detection, and the one path
 * every import takes: temporary trace, importer, metadata, commit or discard.
 */
#include "import/import.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

const struct mp_importer *const mp_importers[] = {
        &mp_importer_csv,
        NULL,
};

const struct mp_importer *mp_importer_find(const char *name)
{
	int i;

	for (i = 0; mp_importers[i]; i++)
		if (strcmp(mp_importers[i]->name, name) == 0)
			return mp_importers[i];
	return NULL;
}

/*
 * A stream that replays the bytes already read for detection, then goes on
 * reading the original: detection works on pipes too.
 */
struct replay {
	FILE *in;
	char head[4096];
	size_t len, pos;
};

static ssize_t replay_read(void *cookie, char *buf, size_t size)
{
	struct replay *r = cookie;
	size_t k;

	if (r->pos < r->len) {
		k = r->len - r->pos < size ? r->len - r->pos : size;
		memcpy(buf, r->head + r->pos, k);
		r->pos += k;
		return (ssize_t)k;
	}
	k = fread(buf, 1, size, r->in);
	return k == 0 && ferror(r->in) ? -1 : (ssize_t)k;
}

static int replay_close(void *cookie)
{
	free(cookie);
	return 0;
}

/* Peek at the start of *in and pick the importer that recognises it; when
 * *in cannot seek back, replace it with a stream that replays the peek. */
static const struct mp_importer *detect(FILE **in, const char *path, struct mp_error *err)
{
	static const cookie_io_functions_t io = {replay_read, NULL, NULL, replay_close};
	const struct mp_importer *found = NULL;
	struct replay *r = calloc(1, sizeof(*r));
	FILE *f;
	int i;

	if (!r) {
		mp_err(err, MP_ENOMEM, "out of memory");
		return NULL;
	}
	r->in = *in;
	r->len = fread(r->head, 1, sizeof(r->head), *in);
	if (ferror(*in))
		mp_err(err, MP_EIO, "cannot read '%s': %s", path, strerror(errno));
	else if (r->len == 0)
		mp_err(err, MP_EFORMAT, "empty input '%s': nothing to import", path);
	for (i = 0; !ferror(*in) && r->len && mp_importers[i] && !found; i++)
		if (mp_importers[i]->probe(path, r->head, r->len))
			found = mp_importers[i];
	if (!found) {
		if (!ferror(*in) && r->len)
			mp_err(err, MP_EFORMAT,
			       "unknown trace format '%s': not a format memprof imports (see "
			       "'memprof import --help' for the list, and --format to name one)",
			       path);
		free(r);
		return NULL;
	}
	if (fseek(*in, 0, SEEK_SET) == 0) {
		free(r);
		return found;
	}
	f = fopencookie(r, "r", io); /* a pipe: replay what was read */
	if (!f) {
		mp_err(err, MP_ENOMEM, "out of memory");
		free(r);
		return NULL;
	}
	*in = f; /* the caller closes it; the original stays open */
	return found;
}

static int write_meta(struct mp_store *s, const struct mp_importer *imp, const char *in_path,
                      const struct mp_import_opts *o)
{
	char created[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (mp_store_set_meta(s, "source", imp->name) < 0 ||
	    mp_store_set_meta(s, "source_file", in_path) < 0 ||
	    mp_store_set_meta(s, "tool_version", o->tool_version ? o->tool_version : "") < 0 ||
	    mp_store_set_meta(s, "created", created) < 0 ||
	    mp_store_set_meta(s, "clock", "monotonic_ns") < 0 ||
	    mp_store_set_meta(s, "dropped_records", "0") < 0 ||
	    mp_store_set_meta(s, "truncated", "0") < 0 || mp_store_set_meta(s, "lossy", "0") < 0)
		return MP_EIO;
	if (o->command_line && mp_store_set_meta(s, "command_line", o->command_line) < 0)
		return MP_EIO;
	return 0;
}

int mp_import_file(const char *in_path, const char *out_path, const struct mp_import_opts *o,
                   struct mp_import_stats *st, struct mp_error *err)
{
	const struct mp_importer *imp = NULL;
	int from_stdin = strcmp(in_path, "-") == 0;
	const char *name = from_stdin ? "<stdin>" : in_path;
	struct mp_store *s = NULL;
	struct mp_writer *w = NULL;
	FILE *in, *original;
	int rc;

	memset(st, 0, sizeof(*st));
	if (o->format && !(imp = mp_importer_find(o->format)))
		return mp_err(err, MP_EINVAL, "unknown format '%s'", o->format);
	in = from_stdin ? stdin : fopen(in_path, "rb");
	if (!in)
		return mp_err(err, MP_EIO, "cannot open '%s': %s", in_path, strerror(errno));
	original = in;
	if (!imp && !(imp = detect(&in, name, err))) {
		rc = err ? err->code : MP_EFORMAT;
		goto out;
	}
	rc = mp_store_create(&s, out_path, o->overwrite, err);
	if (rc < 0)
		goto out;
	rc = mp_writer_open(s, &w);
	if (rc == 0)
		rc = imp->run(in, name, w, st, err);
	else
		mp_err_copy(err, mp_store_error(s));
	if (w) {
		int close_rc = mp_writer_close(w);

		if (rc == 0 && close_rc < 0)
			rc = mp_err_copy(err, mp_store_error(s));
	}
	if (rc == 0 && write_meta(s, imp, name, o) < 0)
		rc = mp_err_copy(err, mp_store_error(s));
	if (rc == 0) {
		rc = mp_store_commit(s, err);
		s = NULL;
	}
out:
	mp_store_close(s); /* deletes the temporary file of a failed import */
	if (in != original)
		fclose(in); /* the replay stream */
	if (!from_stdin)
		fclose(original);
	return rc;
}
