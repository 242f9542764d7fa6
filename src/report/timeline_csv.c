/*
 * report/timeline_csv.c - timeline rows as CSV text.  At most max_points
 * rows per device, so plain stdio; a failed write is found once, by the
 * final flush and the stream's error flag, and answered MP_EIO.
 */
#include "report/timeline_csv.h"
#include "util/error.h"

#include <inttypes.h>

struct row_ctx {
	FILE *out;
	int32_t device;
};

static int write_row(void *ctx, const struct mp_timeline_point *p)
{
	struct row_ctx *c = ctx;

	fprintf(c->out, "%" PRId32 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", c->device,
	        p->ts_ns, p->seq, p->live_bytes, p->requested_bytes);
	if (p->reserved_bytes >= 0)
		fprintf(c->out, "%" PRId64, p->reserved_bytes);
	return putc('\n', c->out) == EOF ? MP_EIO : 0;
}

int mp_timeline_csv_write_series(FILE *out, const struct mp_timeline_series *s)
{
	struct row_ctx c = {out, s->device};

	if (mp_timeline_foreach(s, write_row, &c) < 0 || fflush(out) != 0 || ferror(out))
		return MP_EIO;
	return 0;
}

int mp_timeline_csv_write(FILE *out, const struct mp_timeline *t, int device_or_minus1)
{
	int32_t devices[MP_TIMELINE_MAX_DEVICES];
	int i, n = mp_timeline_devices(t, devices);

	fputs(MP_TIMELINE_CSV_HEADER, out);
	for (i = 0; i < n; i++) {
		if (device_or_minus1 != MP_TIMELINE_ALL_DEVICES && devices[i] != device_or_minus1)
			continue;
		if (mp_timeline_csv_write_series(out, mp_timeline_series(t, devices[i])) < 0)
			return MP_EIO;
	}
	if (fflush(out) != 0 || ferror(out))
		return MP_EIO;
	return 0;
}
