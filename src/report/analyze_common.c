/*
 * report/analyze_common.c - what the text and JSON renderings of 'memprof
 * analyze' share: the notes (what could not be computed, and why), size
 * class labels, group kind names and the order devices are printed in.
 */
#include "report/analyze.h"
#include "util/stack_text.h"
#include "util/format.h"
#include "util/satmath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const mp_attr_kind_names[MP_ATTR_KINDS] = {"stack", "phase", "stream", "size", "api"};

int64_t mp_size_class_min(int64_t k)
{
	return k <= 0 ? 0 : INT64_C(1) << (k - 1);
}

int64_t mp_size_class_max(int64_t k)
{
	return k <= 0 ? 0 : k >= 63 ? INT64_MAX : (INT64_C(1) << k) - 1;
}

/* 2^k bytes in the largest binary unit that keeps it whole. */
static char *power_text(char *buf, size_t n, int k)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	int u = k / 10 < 6 ? k / 10 : 6;

	snprintf(buf, n, "%lld %s", 1LL << (k - 10 * u), units[u]);
	return buf;
}

char *mp_size_class_text(char *buf, size_t n, int k)
{
	char lo[24], hi[24];

	if (k <= 0) {
		snprintf(buf, n, "0 B");
		return buf;
	}
	snprintf(buf, n, "%s..%s", power_text(lo, sizeof(lo), k - 1),
	         k < 63 ? power_text(hi, sizeof(hi), k) : "8 EiB");
	return buf;
}

int mp_analyze_device_order(const struct mp_analysis *a, int order[MP_MEM_MAX_DEVICES])
{
	const struct mp_memstate *ms = a->ms;
	int n = 0, i, j;

	for (i = 0; i < ms->n_devices; i++) {
		if (a->device >= 0 && ms->devices[i].device != a->device)
			continue;
		for (j = n; j > 0 && ms->devices[order[j - 1]].device > ms->devices[i].device; j--)
			order[j] = order[j - 1];
		order[j] = i;
		n++;
	}
	return n;
}

#define NOTE(...)                                                                                  \
	do {                                                                                       \
		snprintf(text, sizeof(text), __VA_ARGS__);                                         \
		fn(ctx, text);                                                                     \
	} while (0)

static void trace_notes(const struct mp_analysis *a, void (*fn)(void *, const char *), void *ctx)
{
	const struct mp_memstate *ms = a->ms;
	int64_t allocs = ms->n_by_op[MEMPROF_OP_ALLOC] + ms->n_by_op[MEMPROF_OP_PREEXISTING];
	char text[512];

	if (ms->n_events == 0)
		NOTE("the trace has no events: there is nothing to analyze");
	else if (allocs == 0)
		NOTE("the trace has no allocations: live bytes are 0 throughout");
	if (a->truncated)
		NOTE("the trace is marked truncated: recording stopped early");
	if (a->window)
		NOTE("the trace is a window of the program (%s): what is live at its end may be "
		     "freed after it, so it is listed as live at the end of the window, not as "
		     "leaks; blocks live before the window began are preexisting",
		     a->window);
	if (a->no_timestamps)
		NOTE("the trace has no timestamps (a PyTorch snapshot without time_us, or whose "
		     "events are all the state at one moment): only the "
		     "order of events is known, so times are unknown, churn is only 'freed before "
		     "the next allocation on its stream', and no lifetime, idle block or "
		     "time-weighted figure is computed");
	if (a->modelled_granted_blocks > 0)
		NOTE("peak live bytes and internal fragmentation are partly modelled: %lld "
		     "allocations freed inside the window have only their request in the trace, "
		     "their granted size is modelled (rounded up to 512 B; the real block may be "
		     "larger)",
		     (long long)a->modelled_granted_blocks);
	if (a->lossy)
		NOTE("the trace is marked lossy: its importer inferred or dropped some records "
		     "('memprof info' says how many)");
	if (ms->n_unmatched_frees)
		NOTE("%lld frees have no allocation in the trace (allocated before recording "
		     "began?) and were ignored",
		     (long long)ms->n_unmatched_frees);
	if (ms->n_unmatched_releases)
		NOTE("%lld segment releases have no reserve in the trace and were ignored",
		     (long long)ms->n_unmatched_releases);
	if (ms->n_out_of_order)
		NOTE("%lld events have a timestamp earlier than the event before them: figures "
		     "follow trace order, and time-weighted figures count backward gaps as zero",
		     (long long)ms->n_out_of_order);
	if (ms->n_zero_size)
		NOTE("%lld allocations are of zero bytes: counted, holding nothing",
		     (long long)ms->n_zero_size);
	if (ms->devices_truncated)
		NOTE("the trace uses more than %d devices: only the first %d seen are analyzed",
		     MP_MEM_MAX_DEVICES, MP_MEM_MAX_DEVICES);
	if (a->device >= 0 && !mp_memstate_device(ms, a->device))
		NOTE("device %d has no events in this trace", a->device);
	if (a->frag->n_segment_mismatches)
		NOTE("%lld segment releases or unmaps did not match a segment held in the hole "
		     "model",
		     (long long)a->frag->n_segment_mismatches);
}

static void frag_notes(const struct mp_analysis *a, const struct mp_frag_device *fd,
                       void (*fn)(void *, const char *), void *ctx)
{
	char text[512], g[32];
	int dev = fd->device;

	if (fd->model == MP_FRAG_NONE && fd->n_no_address)
		NOTE("device %d: no segments and no addresses, so external fragmentation cannot be "
		     "computed",
		     dev);
	if (fd->model == MP_FRAG_ADDRESS_SPACE)
		NOTE("device %d: no segment-level events; reserved memory and its holes are "
		     "modelled from block addresses at %s granularity",
		     dev, mp_format_bytes(g, sizeof(g), (int64_t)a->granularity));
	if (fd->model != MP_FRAG_NONE && fd->n_no_address)
		NOTE("device %d: %lld allocations without an address are left out of the hole "
		     "model",
		     dev, (long long)fd->n_no_address);
	if (fd->holes_at_end.n_outside)
		NOTE("device %d: %lld blocks live at the end lie outside every segment", dev,
		     (long long)fd->holes_at_end.n_outside);
	if (fd->holes_at_end.n_overlaps)
		NOTE("device %d: %lld allocations overlapped a live block (a corrupt or lossy "
		     "trace): "
		     "holes next to them are approximate",
		     dev, (long long)fd->holes_at_end.n_overlaps);
	if (fd->tw.n_unknown)
		NOTE("device %d: after %lld events reserved bytes were below live bytes (blocks "
		     "outside the segments): free-in-reserved is unknown there and not "
		     "time-weighted",
		     dev, (long long)fd->tw.n_unknown);
	if (fd->model != MP_FRAG_NONE && fd->model_since_seq > fd->first_seq)
		NOTE("device %d: its fragmentation model starts at event %lld (%s); time-weighted "
		     "figures cover the trace from there",
		     dev, (long long)fd->model_since_seq,
		     fd->model == MP_FRAG_SEGMENTS ? "its first segment event"
		                                   : "its first allocation with an address");
	if (fd->n_ooms_total > (int64_t)fd->n_ooms)
		NOTE("device %d: %lld OOMs; the first %zu are listed", dev,
		     (long long)fd->n_ooms_total, fd->n_ooms);
}

void mp_analyze_notes(const struct mp_analysis *a, void (*fn)(void *ctx, const char *note),
                      void *ctx)
{
	int order[MP_MEM_MAX_DEVICES], n, i;
	char text[512];

	trace_notes(a, fn, ctx);
	n = mp_analyze_device_order(a, order);
	for (i = 0; i < n; i++) {
		const struct mp_mem_device *d = &a->ms->devices[order[i]];
		const struct mp_frag_device *fd = mp_frag_device(a->frag, d->device);
		const struct mp_attr_device *ad = mp_attribution_device(a->attr, d->device);

		if (fd)
			frag_notes(a, fd, fn, ctx);
		if (a->at == MP_ATTR_AT_OOM && (!ad || !ad->taken))
			NOTE("device %d: no OOM, so nothing is attributed at one", d->device);
		else if (a->at == MP_ATTR_AT_TIME && (!ad || !ad->taken))
			NOTE("device %d: no event at or before the time asked", d->device);
		else if (a->at == MP_ATTR_AT_PEAK && d->live_peak.seq == 0)
			NOTE("device %d: nothing was ever live", d->device);
	}
}

const char *mp_analyze_lifetime_key(const struct mp_analysis *a, int kind)
{
	if (kind == MP_LIFETIME_LEAK && a->window)
		return "live_at_window_end";
	return mp_lifetime_kind_name(kind);
}

const char *mp_analyze_bytes(char *buf, size_t n, int64_t v)
{
	return v < 0 ? "unknown" : mp_format_bytes(buf, n, v);
}

const char *mp_analyze_at_time(char *buf, size_t n, const struct mp_analysis *a, int64_t ts_ns)
{
	char d[32];

	if (a->no_timestamps)
		snprintf(buf, n, "an unknown time");
	else
		snprintf(buf, n, "+%s",
		         mp_format_duration(d, sizeof(d), mp_sat_sub(ts_ns, a->ms->first_ts_ns)));
	return buf;
}

size_t mp_frame_name_len(const char *name)
{
	size_t len = strlen(name), i;
	int depth = 0;

	for (i = 0; i < len; i++) {
		if (name[i] == '<')
			depth++;
		else if (name[i] == '>' && depth > 0)
			depth--;
		else if (name[i] == '(' && depth == 0 && i > 0 &&
		         strncmp(name + i, "(anonymous namespace)", 21) != 0)
			return i;
	}
	return len;
}

int mp_frame_short_name(char *buf, size_t n, const char *name)
{
	size_t len = strlen(name), i = mp_frame_name_len(name);

	if (i > 72)
		i = 72;
	return snprintf(buf, n, "%.*s%s", (int)i, name, i < len && name[i] != '(' ? "..." : "");
}

const char *mp_stack_summary(char *buf, size_t n, const struct memprof_stack *s, int depth,
                             const char *sep)
{
	int i = s ? mp_stack_call_site(s) : -1, shown = 0, w;
	size_t len = 0;
	char name[96];

	buf[0] = '\0';
	if (depth <= 0) /* not set: the default */
		depth = 3;
	for (; i >= 0 && i < (int)s->n_frames && shown < depth && len + 1 < n; i++) {
		const struct memprof_frame *f = &s->frames[i];
		const char *file = strrchr(f->file, '/') ? strrchr(f->file, '/') + 1 : f->file;
		int source = f->line > 0 && file[0] && strcmp(file, "??") != 0;

		if (shown && (!source || !mp_stack_frame_shown(f)))
			continue;
		mp_frame_short_name(name, sizeof(name), f->name);
		if (source)
			w = snprintf(buf + len, n - len, "%s%s (%s:%lld)", shown ? sep : "", name,
			             file, (long long)f->line);
		else
			w = snprintf(buf + len, n - len, "%s%s", shown ? sep : "", name);
		if (w < 0)
			break;
		len += (size_t)w < n - len ? (size_t)w : n - len - 1;
		shown++;
	}
	return buf;
}
