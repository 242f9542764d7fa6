/*
 * import/import.c - the importer table, format detection, and the one path
 * every import takes: temporary trace, importer, metadata, commit or discard.
 */
#include "import/import.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

/* Peek at the start of in and pick the importer that recognises it. */
static const struct mp_importer *detect(FILE *in, const char *path, struct mp_error *err)
{
	char head[4096];
	size_t n = fread(head, 1, sizeof(head), in);
	int i;

	if (ferror(in)) {
		mp_err(err, MP_EIO, "cannot read '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fseek(in, 0, SEEK_SET) < 0) {
		mp_err(err, MP_EINVAL,
		       "cannot detect the format of '%s': it is not seekable; name it with --format",
		       path);
		return NULL;
	}
	for (i = 0; mp_importers[i]; i++)
		if (mp_importers[i]->probe(path, head, n))
			return mp_importers[i];
	mp_err(err, MP_EFORMAT,
	       "unknown trace format '%s': not a format memprof imports (see 'memprof import "
	       "--help' for the list, and --format to name one)",
	       path);
	return NULL;
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
	FILE *in;
	int rc;

	memset(st, 0, sizeof(*st));
	if (o->format && !(imp = mp_importer_find(o->format)))
		return mp_err(err, MP_EINVAL, "unknown format '%s'", o->format);
	in = from_stdin ? stdin : fopen(in_path, "rb");
	if (!in)
		return mp_err(err, MP_EIO, "cannot open '%s': %s", in_path, strerror(errno));
	if (!imp && !(imp = detect(in, name, err))) {
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
	if (!from_stdin)
		fclose(in);
	return rc;
}
