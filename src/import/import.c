/*
 * import/import.c - the importer table, format detection, and the one path
 * every import takes: temporary trace, importer, metadata, commit or discard.
 */
#include "import/import.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

const struct mp_importer *const mp_importers[] = {
        &mp_importer_spool, &mp_importer_trace, /* before nsys: both are SQLite databases */
        &mp_importer_torch, &mp_importer_minimalloc, &mp_importer_nsys,
        &mp_importer_rmm,   &mp_importer_csv,        NULL,
};

const struct mp_importer *mp_importer_find(const char *name)
{
	int i;

	for (i = 0; mp_importers[i]; i++)
		if (strcmp(mp_importers[i]->name, name) == 0)
			return mp_importers[i];
	return NULL;
}

static const struct {
	const char *text;
	int lossy;
} warnings[MP_WARN_N] = {
        [MP_WARN_UNMATCHED_FREE] = {"frees of unknown addresses kept as unmatched", 0},
        [MP_WARN_UNMATCHED_RELEASE] = {"segment releases without a reserve kept as unmatched", 0},
        [MP_WARN_DUPLICATE_ALLOC] = {"allocations at an address still live: the earlier "
                                     "allocation was closed by an implied free",
                                     1},
        [MP_WARN_DUPLICATE_RESERVE] = {"reserves at an address still reserved: the earlier "
                                       "segment was closed by an implied release",
                                       1},
        [MP_WARN_SKIPPED_HOST] = {"host memory records (pageable, pinned) skipped", 0},
        [MP_WARN_SKIPPED_UNKNOWN] = {"records of a kind memprof does not know skipped", 1},
        [MP_WARN_STATE_MISMATCH] = {"blocks or segments where the final allocator state "
                                    "disagrees with the trace",
                                    1},
        [MP_WARN_CLOCK_WRAP] = {"times of day that went backwards, taken as passing midnight", 0},
        [MP_WARN_SIZE_MISMATCH] = {"frees whose size differs from their allocation's: the "
                                   "allocation's size was kept",
                                   1},
        [MP_WARN_PARTIAL_LINE] = {"cut-off last lines (the log lost its tail) dropped", 1},
};

const char *mp_import_warning_text(enum mp_import_warning w)
{
	return w < MP_WARN_N ? warnings[w].text : "unknown warnings";
}

int mp_import_warning_is_lossy(enum mp_import_warning w)
{
	return w < MP_WARN_N && warnings[w].lossy;
}

void mp_import_note(struct mp_import_stats *st, const char *fmt, ...)
{
	size_t used = strlen(st->notes), room = sizeof(st->notes) - used;
	va_list ap;
	int n;

	if (room < 5)
		return; /* already full and marked */
	va_start(ap, fmt);
	n = vsnprintf(st->notes + used, room - 4, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room - 5) {
		st->notes[sizeof(st->notes) - 5] = '\0';
		strcat(st->notes, "...\n"); /* full: the rest is left out */
		return;
	}
	strcat(st->notes, "\n");
}

/*
 * A stream that replays the bytes already read for detection, then goes on
 * reading the original: detection works on pipes too.
 */
struct replay {
	FILE *in;
	char head[4096];
	size_t len, pos;
	char buf[256 << 10]; /* the stream's: reads of 256 KiB, not stdio's 8 */
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
	setvbuf(f, r->buf, _IOFBF, sizeof(r->buf));
	*in = f; /* the caller closes it; the original stays open */
	return found;
}

/* "412 frees of unknown ...; 3 allocations at ..." or "" */
static char *warnings_text(const struct mp_import_stats *st, int *lossy)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int w, first = 1;

	if (!f)
		return NULL;
	*lossy = 0;
	for (w = 0; w < MP_WARN_N; w++) {
		if (!st->n_warnings[w])
			continue;
		fprintf(f, "%s%lld %s", first ? "" : "; ", (long long)st->n_warnings[w],
		        warnings[w].text);
		first = 0;
		*lossy |= warnings[w].lossy;
	}
	return fclose(f) == 0 ? text : (free(text), NULL);
}

/* 1 when the importer set key to anything but "0". */
static int meta_flag(struct mp_store *s, const char *key)
{
	char *had = mp_store_get_meta(s, key);
	int set = had && strcmp(had, "0") != 0;

	free(had);
	return set;
}

/* Set key to value, after what the importer put there ("<had><sep><value>"). */
static int meta_append(struct mp_store *s, const char *key, const char *value, const char *sep)
{
	char *had = mp_store_get_meta(s, key), *both = NULL;
	int rc;

	if (!had)
		return mp_store_set_meta(s, key, value);
	rc = asprintf(&both, "%s%s%s", had, sep, value) < 0 ? MP_ENOMEM
	                                                    : mp_store_set_meta(s, key, both);
	free(had);
	free(both);
	return rc;
}

/* Set key to value unless the importer already did. */
static int meta_default(struct mp_store *s, const char *key, const char *value)
{
	char *had = mp_store_get_meta(s, key);

	free(had);
	return had ? 0 : mp_store_set_meta(s, key, value);
}

static int write_meta(struct mp_store *s, const char *source, const char *source_files,
                      const struct mp_import_opts *o, const struct mp_import_stats *st)
{
	char created[32], dropped[24], notes[sizeof(st->notes)];
	size_t len = strlen(st->notes);
	time_t now = time(NULL);
	struct tm tm;
	char *warn;
	int lossy, rc;

	gmtime_r(&now, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	warn = warnings_text(st, &lossy);
	if (!warn)
		return MP_ENOMEM;
	lossy |= st->n_dropped > 0 || st->n_truncated > 0 || meta_flag(s, "lossy");
	memcpy(notes, st->notes, len + 1);
	if (len && notes[len - 1] == '\n')
		notes[len - 1] = '\0'; /* lines between notes, none after the last */
	snprintf(dropped, sizeof(dropped), "%lld", (long long)st->n_dropped);
	rc = mp_store_set_meta(s, "source", o->source ? o->source : source) < 0 ||
	     mp_store_set_meta(s, "source_file", source_files) < 0 ||
	     mp_store_set_meta(s, "tool_version", o->tool_version ? o->tool_version : "") < 0 ||
	     mp_store_set_meta(s, "created", created) < 0 ||
	     meta_default(s, "clock", "monotonic_ns") < 0 ||
	     (st->n_dropped ? mp_store_set_meta(s, "dropped_records", dropped)
	                    : meta_default(s, "dropped_records", "0")) < 0 ||
	     (st->n_truncated ? mp_store_set_meta(s, "truncated", "1")
	                      : meta_default(s, "truncated", "0")) < 0 ||
	     mp_store_set_meta(s, "lossy", lossy ? "1" : "0") < 0 ||
	     (*warn && meta_append(s, "import_warnings", warn, "; ") < 0) ||
	     (notes[0] && meta_append(s, "import_notes", notes, "\n") < 0) ||
	     (o->command_line && mp_store_set_meta(s, "command_line", o->command_line) < 0);
	free(warn);
	return rc ? MP_EIO : 0;
}

static void add_stats(struct mp_import_stats *sum, const struct mp_import_stats *one)
{
	int w;

	sum->n_events += one->n_events;
	sum->n_allocs += one->n_allocs;
	sum->n_dropped += one->n_dropped;
	sum->n_truncated += one->n_truncated;
	sum->unsorted |= one->unsorted;
	if (one->notes[0]) /* each line ends with '\n': copy it without its last one */
		mp_import_note(sum, "%.*s", (int)strlen(one->notes) - 1, one->notes);
	for (w = 0; w < MP_WARN_N; w++)
		sum->n_warnings[w] += one->n_warnings[w];
}

/* Progress of a long import: "<file>: 41% read, 3.1M events". */
struct progress {
	FILE *out;
	const char *cmd;
	FILE *in;
	const char *path;
	int64_t size; /* of the input, 0 when unknown */
	int shown;
};

static void show_progress(void *ctx, int64_t n_events)
{
	struct progress *p = ctx;
	long pos = p->size > 0 ? ftell(p->in) : -1;

	if (pos >= 0)
		fprintf(p->out, "\rmemprof %s: %s: %3d%% read, %.1fM events ", p->cmd, p->path,
		        (int)(100.0 * (double)pos / (double)p->size), (double)n_events / 1e6);
	else
		fprintf(p->out, "\rmemprof %s: %s: %.1fM events ", p->cmd, p->path,
		        (double)n_events / 1e6);
	fflush(p->out);
	p->shown = 1;
}

static int64_t file_size(FILE *f)
{
	struct stat sb;

	return fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) ? (int64_t)sb.st_size : 0;
}

/* Open in_path, find its importer and run it into w. */
static int import_one(const char *in_path, int index, struct mp_store *s, struct mp_writer *w,
                      const struct mp_import_opts *o, struct mp_import_stats *st,
                      const struct mp_importer **imp_out, struct mp_error *err)
{
	const struct mp_importer *imp = NULL;
	int from_stdin = strcmp(in_path, "-") == 0;
	struct mp_import_ctx c = {0};
	FILE *in, *original;
	int rc;

	if (o->format && !(imp = mp_importer_find(o->format)))
		return mp_err(err, MP_EINVAL, "unknown format '%s'", o->format);
	in = from_stdin ? stdin : fopen(in_path, "rb");
	if (!in)
		return mp_err(err, MP_EIO, "cannot open '%s': %s", in_path, strerror(errno));
	original = in;
	c.path = from_stdin ? "<stdin>" : in_path;
	c.file_path = from_stdin ? NULL : in_path;
	if (!imp && !(imp = detect(&in, c.path, err))) {
		rc = err->code ? err->code : MP_EFORMAT;
		goto out;
	}
	if (imp->by_path && from_stdin) {
		rc = mp_err(err, MP_EINVAL, "cannot read a %s from standard input: name the file",
		            imp->name);
		goto out;
	}
	c.in = in;
	c.w = w;
	c.store = s;
	c.st = st;
	c.err = err;
	c.shared = o->shared;
	c.input_index = index;
	struct progress prog = {o->progress, o->cmd_name ? o->cmd_name : "import",   in,
	                        c.path,      imp->by_path ? 0 : file_size(original), 0};
	if (o->progress)
		mp_writer_on_progress(w, show_progress, &prog);
	rc = imp->run(&c);
	mp_writer_on_progress(w, NULL, NULL);
	if (prog.shown)
		fprintf(o->progress, "\r\033[K");
	if (rc == MP_EIO || rc == MP_ENOMEM || rc == MP_EFULL)
		if (!err->msg[0])
			mp_err_copy(err, mp_writer_error(w));
	*imp_out = imp;
out:
	if (in != original)
		fclose(in); /* the replay stream */
	if (!from_stdin)
		fclose(original);
	return rc;
}

/* "a.csv, b.csv" and the importer names, "rmm" or "rmm+torch" */
static int describe_inputs(const char *const *in_paths, int n, const struct mp_importer **imps,
                           char **files, char **sources)
{
	size_t lf = 0, ls = 0;
	FILE *f = open_memstream(files, &lf), *g = open_memstream(sources, &ls);
	int i, j;

	if (!f || !g) {
		if (f)
			fclose(f);
		if (g)
			fclose(g);
		return MP_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		fprintf(f, "%s%s", i ? ", " : "",
		        strcmp(in_paths[i], "-") ? in_paths[i] : "<stdin>");
		for (j = 0; j < i && imps[j] != imps[i]; j++)
			;
		if (j == i)
			fprintf(g, "%s%s", i ? "+" : "", imps[i]->name);
	}
	return (fclose(f) | fclose(g)) == 0 ? 0 : MP_ENOMEM;
}

int mp_import_files(const char *const *in_paths, int n, const char *out_path,
                    const struct mp_import_opts *o, struct mp_import_stats *st,
                    struct mp_error *err)
{
	const struct mp_importer **imps = calloc((size_t)n + 1, sizeof(*imps));
	char *files = NULL, *sources = NULL;
	struct mp_store *s = NULL;
	struct mp_writer *w = NULL;
	int i, rc, close_rc;

	memset(st, 0, sizeof(*st));
	if (!imps)
		return mp_err(err, MP_ENOMEM, "out of memory");
	rc = mp_store_create(&s, out_path, o->overwrite, err);
	if (rc == 0 && (rc = mp_writer_open(s, &w)) < 0)
		mp_err_copy(err, mp_store_error(s));
	if (rc == 0 && o->labels && (rc = mp_writer_label_processes(w, o->labels)) < 0)
		mp_err_copy(err, mp_store_error(s));
	for (i = 0; rc == 0 && i < n; i++) {
		struct mp_import_stats one = {0};

		rc = import_one(in_paths[i], i, s, w, o, &one, &imps[i], err);
		add_stats(st, &one);
	}
	if (w) {
		close_rc = mp_writer_close(w);
		if (rc == 0 && close_rc < 0)
			rc = mp_err_copy(err, mp_store_error(s));
	}
	if (rc == 0 && o->after)
		rc = o->after(o->shared, s, st, err);
	if (rc == 0 && (n > 1 || st->unsorted) && mp_store_sort_events(s) < 0)
		rc = mp_err_copy(err, mp_store_error(s));
	if (rc == 0 && describe_inputs(in_paths, n, imps, &files, &sources) < 0)
		rc = mp_err(err, MP_ENOMEM, "out of memory");
	if (rc == 0 && write_meta(s, sources, files, o, st) < 0)
		rc = mp_err_copy(err, mp_store_error(s));
	if (rc == 0) {
		rc = mp_store_commit(s, err);
		s = NULL;
	}
	mp_store_close(s); /* deletes the temporary file of a failed import */
	free(files);
	free(sources);
	free(imps);
	return rc;
}
