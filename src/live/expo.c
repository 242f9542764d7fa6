/*
 * live/expo.c - the live figures in the Prometheus text exposition format,
 * version 0.0.4: a HELP and a TYPE line per metric family, then its samples
 * labelled device, pid and rank (where known).  Pure: reads the state,
 * writes text.
 */
#include "live/expo.h"
#include "util/error.h"

#include <stdio.h>
#include <string.h>

/* le label values of the latency buckets (mp_live_bucket_bounds_s), then +Inf. */
static const char *const le[MP_LIVE_N_BUCKETS + 1] = {
        "1e-06",   "2.5e-06", "5e-06", "1e-05", "2.5e-05", "5e-05", "0.0001",
        "0.00025", "0.0005",  "0.001", "0.01",  "0.1",     "+Inf",
};

enum which {
	LIVE,
	RESERVED,
	PEAK_LIVE,
	PEAK_RESERVED,
	FRAG,
	ALLOCS,
	FREES,
	ALLOCATED,
	OOMS,
};

static const struct family {
	const char *name, *type, *help;
} families[] = {
        [LIVE] = {"memprof_live_bytes", "gauge",
                  "Bytes of live allocations (block level) on the device."},
        [RESERVED] = {"memprof_reserved_bytes", "gauge",
                      "Bytes reserved from the driver (segments and mappings); absent "
                      "where not known."},
        [PEAK_LIVE] = {"memprof_peak_live_bytes", "gauge",
                       "Highest live bytes on the device since recording began."},
        [PEAK_RESERVED] = {"memprof_peak_reserved_bytes", "gauge",
                           "Highest reserved bytes on the device since recording began."},
        [FRAG] = {"memprof_free_share_ratio", "gauge",
                  "Free bytes inside reserved memory over reserved bytes (0 to 1); absent "
                  "where not known."},
        [ALLOCS] = {"memprof_allocations_total", "counter",
                    "Allocation calls that made memory on the device."},
        [FREES] = {"memprof_frees_total", "counter",
                   "Free calls that released a live allocation on the device."},
        [ALLOCATED] = {"memprof_allocated_bytes_total", "counter",
                       "Bytes allocated on the device by allocation calls."},
        [OOMS] = {"memprof_ooms_total", "counter",
                  "Allocation calls that failed for lack of memory on the device."},
};

static void family_head(struct mp_live_text *out, const char *name, const char *type,
                        const char *help)
{
	mp_live_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* device="D",pid="P"[,rank="R"] (no escaping needed: numbers only). */
static void labels(char *buf, size_t n, const struct mp_live_process *p,
                   const struct mp_live_device *d)
{
	int k = 0;

	if (d)
		k = snprintf(buf, n, "device=\"%d\",", d->device);
	k += snprintf(buf + k, n - (size_t)k, "pid=\"%lld\"", (long long)p->pid);
	if (p->labels.rank >= 0)
		snprintf(buf + k, n - (size_t)k, ",rank=\"%lld\"", (long long)p->labels.rank);
}

/* The value of family w for device d, 0 when the sample is left out. */
static int value(enum which w, const struct mp_live_device *d, double *v)
{
	int live_shown = d->live_known || !d->reserved_known;

	switch (w) {
	case LIVE:
		*v = (double)d->live_bytes;
		return live_shown;
	case RESERVED:
		*v = (double)d->reserved_bytes;
		return d->reserved_known;
	case PEAK_LIVE:
		*v = (double)d->peak_live_bytes;
		return live_shown;
	case PEAK_RESERVED:
		*v = (double)d->peak_reserved_bytes;
		return d->reserved_known;
	case FRAG:
		*v = mp_live_free_share(d);
		return *v >= 0;
	case ALLOCS:
		*v = (double)d->n_allocs;
		return 1;
	case FREES:
		*v = (double)d->n_frees;
		return 1;
	case ALLOCATED:
		*v = (double)d->allocated_bytes;
		return 1;
	default:
		*v = (double)d->n_ooms;
		return 1;
	}
}

static void device_family(struct mp_live_text *out, const struct mp_live_state *st, enum which w)
{
	char lab[128];
	size_t i, k;
	double v;

	family_head(out, families[w].name, families[w].type, families[w].help);
	for (i = 0; i < st->n_procs; i++)
		for (k = 0; st->procs[i] && k < st->procs[i]->n_devices; k++) {
			const struct mp_live_device *d = &st->procs[i]->devices[k];

			if (!value(w, d, &v))
				continue;
			labels(lab, sizeof(lab), st->procs[i], d);
			mp_live_printf(out, w == FRAG ? "%s{%s} %.6g\n" : "%s{%s} %.0f\n",
			               families[w].name, lab, v);
		}
}

static void histogram(struct mp_live_text *out, const struct mp_live_state *st)
{
	const char *name = "memprof_alloc_latency_seconds";
	char lab[128];
	size_t i, k;
	int b;

	family_head(out, name, "histogram",
	            "Duration of the allocation calls that made memory on the device.");
	for (i = 0; i < st->n_procs; i++)
		for (k = 0; st->procs[i] && k < st->procs[i]->n_devices; k++) {
			const struct mp_live_device *d = &st->procs[i]->devices[k];
			int64_t cum = 0;

			labels(lab, sizeof(lab), st->procs[i], d);
			for (b = 0; b <= MP_LIVE_N_BUCKETS; b++) {
				cum += d->buckets[b];
				mp_live_printf(out, "%s_bucket{%s,le=\"%s\"} %lld\n", name, lab,
				               le[b], (long long)cum);
			}
			mp_live_printf(out, "%s_sum{%s} %lld.%09lld\n", name, lab,
			               (long long)(d->latency_sum_ns / 1000000000),
			               (long long)(d->latency_sum_ns % 1000000000));
			mp_live_printf(out, "%s_count{%s} %lld\n", name, lab,
			               (long long)d->n_latency);
		}
}

int mp_live_render_metrics(const struct mp_live_state *st, struct mp_live_text *out)
{
	char lab[128];
	size_t i;
	int w;

	for (w = LIVE; w <= OOMS; w++)
		device_family(out, st, (enum which)w);
	histogram(out, st);
	family_head(out, "memprof_dropped_events_total", "counter",
	            "Events the recording lost (buffers full, write errors), per process.");
	for (i = 0; i < st->n_procs; i++)
		if (st->procs[i]) {
			labels(lab, sizeof(lab), st->procs[i], NULL);
			mp_live_printf(out, "memprof_dropped_events_total{%s} %lld\n", lab,
			               (long long)st->procs[i]->n_dropped);
		}
	family_head(out, "memprof_processes", "gauge",
	            "Processes of the recorded command that wrote a spool so far.");
	mp_live_printf(out, "memprof_processes %zu\n", mp_live_state_n_processes(st));
	return out->failed ? MP_ENOMEM : 0;
}
