/*
 * report/replay_text.c - the text rendering of 'memprof replay' for people:
 * a header that says once whether times are measured or modelled, how many
 * runs, and that reserved bytes follow the modelled driver granularity; a
 * table per device: the trace's recorded row, the pools ranked (best
 * marked), failed ones last, those that did nothing in a line each; the
 * first OOM and verify failures in a sentence each, the notes, then each
 * pool's details and its own stats, every time there labelled measured or
 * modelled, a measured one only with the spread of its runs.  Under --mpi
 * the devices name their rank, and a table of the job's figures follows.
 */
#include "replay/cost_model.h"
#include "report/replay.h"
#include "util/error.h"
#include "util/format.h"

#include <stdlib.h>
#include <string.h>

static const char *label(int measured)
{
	return measured ? "measured" : "modelled";
}

static const char *bytes(char *buf, size_t n, uint64_t v)
{
	return mp_format_bytes(buf, n, v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static const char *dur(char *buf, size_t n, int64_t ns)
{
	return mp_format_duration(buf, n, ns);
}

static void print_header(FILE *out, const struct mp_replay_report *rep)
{
	size_t n_measured = 0;
	char b[32];

	for (size_t i = 0; i < rep->n_results; i++)
		n_measured += rep->results[i].time_measured != 0;
	fprintf(out, "trace     %s\n", rep->trace_path ? rep->trace_path : "-");
	fprintf(out, "backend   %s\n", rep->backend ? rep->backend : "-");
	if (n_measured == rep->n_results && n_measured > 0)
		fprintf(out,
		        "times     backend time (measured): backend calls timed on the device; "
		        "the pool's CPU time on this host is apart, in each pool's details\n");
	else if (n_measured == 0)
		fprintf(out, "times     backend time (modelled): backend calls costed by the cost "
		             "model of memprof-replay(1); the pool's CPU time, measured on this "
		             "host, is apart, in each pool's details\n");
	else
		fprintf(out, "times     mixed: each pool's details say measured or modelled\n");
	if (rep->n_results > 0 && rep->results[0].n_runs > 1)
		fprintf(out,
		        "runs      %u of each pool: a measured time is their median, with its "
		        "spread\n",
		        (unsigned)rep->results[0].n_runs);
	else
		fprintf(out, "runs      1 of each pool: measured times are left out (--repeat=N "
		             "gives their median and spread)\n");
	fprintf(out,
	        "reserved  as the CUDA driver reserves it (modelled): a cudaMalloc of 2 MiB or "
	        "more in whole 2 MiB pages, a smaller one rounded to 512 B in 2 MiB pages "
	        "the small ones share\n");
	fprintf(out, "baseline  %s\n", rep->baseline ? rep->baseline : "none");
	if (rep->ranks)
		fprintf(out, "ranks     %d (MPI), gathered on rank 0\n", rep->n_ranks);
	if (rep->capacity_bytes)
		fprintf(out, "capacity  %s\n", bytes(b, sizeof(b), rep->capacity_bytes));
}

static void print_row(FILE *out, const struct mp_replay_report *rep,
                      const struct mp_replay_result *r, const char *place, int saved_w,
                      int show_verify)
{
	const struct mp_replay_result *b = mp_replay_compared_to(rep, r);
	char peak[32], ratio[16] = "-", saved[32] = "-", p50[32], p99[32], total[32],
	               tsaved[32] = "-";

	if (mp_replay_failed(r)) {
		/* its figures are not a result: nothing saved, no ratio */
		fprintf(out, "  %-4s %-12s failed: %llu OOM%s, first at event %lld\n", place,
		        r->pool, (unsigned long long)r->n_ooms, r->n_ooms == 1 ? "" : "s",
		        (long long)r->first_oom.seq);
		return;
	}
	if (r->lower_bound_bytes > 0)
		snprintf(ratio, sizeof(ratio), "%.3f",
		         (double)r->peak_reserved_bytes / (double)r->lower_bound_bytes);
	if (b)
		mp_format_bytes(saved, sizeof(saved),
		                (int64_t)b->peak_reserved_bytes - (int64_t)r->peak_reserved_bytes);
	/* backend time only: a measured one needs runs to have a spread */
	if (r->time_measured && r->n_runs < 2)
		snprintf(total, sizeof(total), "-");
	else
		dur(total, sizeof(total), (int64_t)r->backend_ns);
	if (b && !((r->time_measured || b->time_measured) && (r->n_runs < 2 || b->n_runs < 2)))
		dur(tsaved, sizeof(tsaved), (int64_t)b->backend_ns - (int64_t)r->backend_ns);
	fprintf(out, "  %-4s %-12s %13s %6s %*s %9.3f %9llu %10s %10s %12s %10s %5llu", place,
	        r->pool, bytes(peak, sizeof(peak), r->peak_reserved_bytes), ratio, saved_w, saved,
	        r->frag_at_peak, (unsigned long long)r->backend_calls,
	        dur(p50, sizeof(p50), (int64_t)r->alloc_ns_p50),
	        dur(p99, sizeof(p99), (int64_t)r->alloc_ns_p99), total, tsaved,
	        (unsigned long long)r->n_ooms);
	if (show_verify)
		fprintf(out, "  %s",
		        r->verify == MP_VERIFY_PASSED   ? "passed"
		        : r->verify == MP_VERIFY_FAILED ? "FAILED"
		                                        : "off");
	fputc('\n', out);
}

/* "oom at event 1234: request 2.00 GiB with 37.5 GiB live, 39.0 GiB reserved" */
static void print_oom_sentence(FILE *out, const struct mp_replay_result *r)
{
	char req[32], live[32], res[32];

	fprintf(out, "oom at event %lld: request %s with %s live, %s reserved",
	        (long long)r->first_oom.seq, bytes(req, sizeof(req), r->first_oom.request_bytes),
	        bytes(live, sizeof(live), r->first_oom.live_bytes),
	        bytes(res, sizeof(res), r->first_oom.reserved_bytes));
}

/* The pools that did nothing on this trace: one line each, why. */
static void print_no_effect(FILE *out, const struct mp_replay_report *rep, const size_t *idx,
                            size_t n)
{
	char why[200];
	int shown = 0;

	for (size_t i = 0; i < n; i++) {
		const struct mp_replay_result *r = &rep->results[idx[i]];

		if (!mp_replay_no_effect(rep, r, why, sizeof(why)))
			continue;
		if (!shown++)
			fprintf(out, "  did nothing on this trace (no details below):\n");
		fprintf(out, "    %-12s %s\n", r->pool, why);
	}
}

/* The trace's own figures beside the pools, and the caching model's error. */
static void print_recorded(FILE *out, const struct mp_replay_report *rep, const size_t *idx,
                           size_t n)
{
	const struct mp_replay_result *r0 = &rep->results[idx[0]], *c = NULL;
	char peak[32], ratio[16] = "-", err[96] = "", d[32];

	if (!r0->trace_has_segments) {
		fprintf(out,
		        "  %-4s %-12s unknown: the trace has no segment-level events, so no "
		        "pool's figures can be checked against it\n",
		        "", "recorded");
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(rep->results[idx[i]].pool, "caching") == 0)
			c = &rep->results[idx[i]];
	if (r0->lower_bound_bytes > 0)
		snprintf(ratio, sizeof(ratio), "%.3f",
		         (double)r0->trace_peak_reserved_bytes / (double)r0->lower_bound_bytes);
	if (c && !mp_replay_failed(c) && r0->trace_peak_reserved_bytes > 0) {
		int64_t diff =
		        (int64_t)c->peak_reserved_bytes - (int64_t)r0->trace_peak_reserved_bytes;

		snprintf(err, sizeof(err), "; caching's model of it: %s%s (%+.2f%%)",
		         diff >= 0 ? "+" : "-",
		         mp_format_bytes(d, sizeof(d), diff >= 0 ? diff : -diff),
		         100.0 * (double)diff / (double)r0->trace_peak_reserved_bytes);
	}
	fprintf(out,
	        "  %-4s %-12s %13s %6s  as the trace recorded it: %llu segment%s reserved, "
	        "%llu held at its peak%s\n",
	        "", "recorded", bytes(peak, sizeof(peak), r0->trace_peak_reserved_bytes), ratio,
	        (unsigned long long)r0->trace_segments, r0->trace_segments == 1 ? "" : "s",
	        (unsigned long long)r0->trace_segments_at_peak, err);
}

/* The table of one device: every pool that did something, ranked, the
 * best marked; those that did nothing in one line each; failed ones last. */
static void print_table(FILE *out, const struct mp_replay_report *rep, const size_t *idx, size_t n,
                        size_t n_did, int show_verify)
{
	char col[80], place[32], why[200];
	int w;

	snprintf(col, sizeof(col), "saved vs %s", rep->baseline ? rep->baseline : "-");
	w = (int)strlen(col) > 11 ? (int)strlen(col) : 11;
	fprintf(out, "  %-4s %-12s %13s %6s %*s %9s %9s %10s %10s %12s %10s %5s%s\n", "rank",
	        "pool", "peak reserved", "ratio", w, col, "ext frag", "calls", "alloc p50",
	        "alloc p99", "backend time", "time saved", "ooms", show_verify ? "  verify" : "");
	print_recorded(out, rep, idx, n);
	for (size_t i = 0; i < n; i++) {
		const struct mp_replay_result *r = &rep->results[idx[i]];

		if (i < n_did)
			snprintf(place, sizeof(place), "%zu%s", i + 1, i == 0 ? "*" : "");
		else if (mp_replay_no_effect(rep, r, why, sizeof(why)))
			continue;
		else
			snprintf(place, sizeof(place), "-");
		print_row(out, rep, r, place, w, show_verify);
	}
	if (n_did > 0)
		fprintf(out, "  * the best here: the least peak reserved (then the least backend "
		             "time); ext frag: external fragmentation at the peak\n");
	print_no_effect(out, rep, idx, n);
}

static void print_device(FILE *out, const struct mp_replay_report *rep, size_t first, size_t end,
                         int show_verify, size_t *idx)
{
	const struct mp_replay_result *r0 = &rep->results[first], *base;
	char lb[32], gb[32], rank[32] = "";
	size_t n_did;

	if (rep->ranks)
		snprintf(rank, sizeof(rank), "rank %d, ", rep->ranks[first]);
	fprintf(out,
	        "\ndevice %d (%s%s level): lower bound %s (peak requested bytes), %s (peak granted "
	        "bytes)\n",
	        r0->device, rank, r0->level == MP_LEVEL_SEGMENT ? "segment" : "block",
	        bytes(lb, sizeof(lb), r0->lower_bound_bytes),
	        bytes(gb, sizeof(gb), r0->peak_live_bytes));
	n_did = mp_replay_order(rep, first, end, idx);
	print_table(out, rep, idx, end - first, n_did, show_verify);
	base = rep->baseline ? mp_replay_baseline_of(rep, r0) : NULL;
	if (base && mp_replay_failed(base))
		fprintf(out, "  the baseline %s failed: no pool is compared with it\n", base->pool);
	for (size_t i = 0; i < end - first; i++) {
		const struct mp_replay_result *r = &rep->results[idx[i]];

		if (r->n_ooms) {
			fprintf(out, "  %s: %llu OOM%s; ", r->pool, (unsigned long long)r->n_ooms,
			        r->n_ooms > 1 ? "s" : "");
			print_oom_sentence(out, r);
			fputc('\n', out);
		}
		if (r->verify == MP_VERIFY_FAILED)
			fprintf(out, "  %s: verify failed: %.*s\n", r->pool,
			        (int)sizeof(r->verify_msg),
			        r->verify_msg[0] ? r->verify_msg : "(no detail)");
	}
}

static void print_calls(FILE *out, const struct mp_replay_result *r)
{
	int shown = 0;

	fprintf(out, "  backend calls   %llu", (unsigned long long)r->backend_calls);
	for (int c = 0; c < MP_COST_N_CALLS; c++)
		if (r->n_calls[c])
			fprintf(out, "%s%s %llu", shown++ ? ", " : ": ", mp_cost_call_name(c),
			        (unsigned long long)r->n_calls[c]);
	fputc('\n', out);
}

/* The backend's time, and what it saves against the baseline: modelled, or
 * measured with the spread of its runs (left out after one run). */
static void print_backend_time(FILE *out, const struct mp_replay_result *r,
                               const struct mp_replay_result *b)
{
	char t1[32], t2[32], t3[32];

	if (r->time_measured && r->n_runs < 2) {
		fprintf(out, "  backend time    left out: measured in one run only, its spread is "
		             "unknown (--repeat=N)\n");
		return;
	}
	if (r->time_measured)
		fprintf(out,
		        "  backend time    %s, the median of %u runs, from %s to %s (measured)\n",
		        dur(t1, sizeof(t1), (int64_t)r->backend_ns), (unsigned)r->n_runs,
		        dur(t2, sizeof(t2), (int64_t)r->backend_ns_min),
		        dur(t3, sizeof(t3), (int64_t)r->backend_ns_max));
	else
		fprintf(out, "  backend time    %s (modelled)\n",
		        dur(t1, sizeof(t1), (int64_t)r->backend_ns));
	if (b && !(b->time_measured && b->n_runs < 2))
		fprintf(out, "  time saved      %s of backend time against %s (%s)\n",
		        dur(t1, sizeof(t1), (int64_t)b->backend_ns - (int64_t)r->backend_ns),
		        b->pool, label(r->time_measured && b->time_measured));
}

static void print_times(FILE *out, const struct mp_replay_report *rep,
                        const struct mp_replay_result *r)
{
	const struct mp_replay_result *b = mp_replay_compared_to(rep, r);
	const char *tm = label(r->time_measured);
	char t1[32], t2[32], t3[32];

	fprintf(out,
	        "  alloc latency   p50 %s, p99 %s, max %s (backend %s, with the pool's CPU "
	        "time of the first run)\n",
	        dur(t1, sizeof(t1), (int64_t)r->alloc_ns_p50),
	        dur(t2, sizeof(t2), (int64_t)r->alloc_ns_p99),
	        dur(t3, sizeof(t3), (int64_t)r->alloc_ns_max), tm);
	fprintf(out, "  free latency    p50 %s, p99 %s (backend %s, likewise)\n",
	        dur(t1, sizeof(t1), (int64_t)r->free_ns_p50),
	        dur(t2, sizeof(t2), (int64_t)r->free_ns_p99), tm);
	print_backend_time(out, r, b);
	if (r->n_runs < 2)
		fprintf(out, "  pool CPU time   left out: measured in one run only, its spread is "
		             "unknown (--repeat=N)\n");
	else
		fprintf(out,
		        "  pool CPU time   %s, the median of %u runs, from %s to %s (measured on "
		        "this host)\n",
		        dur(t1, sizeof(t1), (int64_t)r->host_ns), (unsigned)r->n_runs,
		        dur(t2, sizeof(t2), (int64_t)r->host_ns_min),
		        dur(t3, sizeof(t3), (int64_t)r->host_ns_max));
}

static void print_stat(FILE *out, const struct mp_replay_stat *s)
{
	char v[32], name[48];

	snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, s->name);
	if (strncmp(s->unit, "bytes", sizeof(s->unit)) == 0)
		mp_format_bytes(v, sizeof(v), (int64_t)s->value);
	else if (strncmp(s->unit, "ns", sizeof(s->unit)) == 0)
		dur(v, sizeof(v), (int64_t)s->value);
	else if (strncmp(s->unit, "ratio", sizeof(s->unit)) == 0)
		snprintf(v, sizeof(v), "%.3f", s->value);
	else
		snprintf(v, sizeof(v), "%.15g", s->value);
	fprintf(out, "    %-28s %s\n", name, v);
}

static void print_memory(FILE *out, const struct mp_replay_result *r)
{
	char b1[32], b2[32], b3[32], b4[32];

	fprintf(out, "  reserved        peak %s at event %lld, %s at the end\n",
	        bytes(b1, sizeof(b1), r->peak_reserved_bytes), (long long)r->peak_reserved_seq,
	        bytes(b2, sizeof(b2), r->end_reserved_bytes));
	fprintf(out, "  live            peak %s; lower bound %s (peak requested)\n",
	        bytes(b1, sizeof(b1), r->peak_live_bytes),
	        bytes(b2, sizeof(b2), r->lower_bound_bytes));
	fprintf(out, "  at the peak     %s free in reserved, external fragmentation %.3f\n",
	        bytes(b3, sizeof(b3), r->free_at_peak_bytes), r->frag_at_peak);
	fprintf(out, "  allocs, frees   %llu, %llu\n", (unsigned long long)r->n_allocs,
	        (unsigned long long)r->n_frees);
	if (r->pool_threshold_bytes)
		fprintf(out, "  below %-9s %llu allocations straight to the backend\n",
		        bytes(b1, sizeof(b1), r->pool_threshold_bytes),
		        (unsigned long long)r->n_below_threshold);
	fprintf(out, "  copied, set     %s in %s, %s in %s (%s)\n",
	        bytes(b1, sizeof(b1), r->bytes_copied),
	        dur(b3, sizeof(b3), (int64_t)r->call_ns[MP_COST_COPY]),
	        bytes(b2, sizeof(b2), r->bytes_set),
	        dur(b4, sizeof(b4), (int64_t)r->call_ns[MP_COST_MEMSET]),
	        r->time_measured ? "measured" : "modelled");
	if (r->n_shared)
		fprintf(out, "  shared blocks   %llu placed inside a live block by design\n",
		        (unsigned long long)r->n_shared);
}

static void print_job_row(FILE *out, const struct mp_replay_job_row *j, int saved_w)
{
	char peak[32], lb[32], saved[32] = "-", total[32], tsaved[32] = "-";

	if (j->has_saved)
		mp_format_bytes(saved, sizeof(saved), j->saved_bytes);
	if (j->has_time_saved)
		dur(tsaved, sizeof(tsaved), j->time_saved_ns);
	fprintf(out, "  %-12s %5d %13s %4d/%-3d %11s %*s %10s %4d %10s %5llu\n", j->pool,
	        j->n_ranks, bytes(peak, sizeof(peak), j->peak_reserved_bytes), j->peak_rank,
	        (int)j->peak_device, bytes(lb, sizeof(lb), j->lower_bound_bytes), saved_w, saved,
	        dur(total, sizeof(total), (int64_t)j->backend_ns), j->slowest_rank, tsaved,
	        (unsigned long long)j->n_ooms);
}

/* The job's figures per pool (replay --mpi). */
static int print_job(FILE *out, const struct mp_replay_report *rep)
{
	struct mp_replay_job_row *rows = calloc(rep->n_results + 1, sizeof *rows);
	size_t n = rows ? mp_replay_job_rows(rep, rows, rep->n_results) : 0;
	char col[80];
	int w, measured = 1;

	if (!rows)
		return MP_ENOMEM;
	for (size_t i = 0; i < n; i++)
		measured &= rows[i].time_measured;
	snprintf(col, sizeof(col), "saved vs %s", rep->baseline ? rep->baseline : "-");
	w = (int)strlen(col) > 11 ? (int)strlen(col) : 11;
	fprintf(out,
	        "\njob (%d ranks): peak = the worst device's, saved = summed over the ranks' "
	        "devices, backend time = the slowest rank's (%s)\n",
	        rep->n_ranks, label(measured && n > 0));
	fprintf(out, "  %-12s %5s %13s %8s %11s %*s %10s %4s %10s %5s\n", "pool", "ranks",
	        "peak reserved", "rank/dev", "lower bound", w, col, "backend", "rank", "time saved",
	        "ooms");
	for (size_t i = 0; i < n; i++)
		print_job_row(out, &rows[i], w);
	free(rows);
	return 0;
}

static void print_details(FILE *out, const struct mp_replay_report *rep,
                          const struct mp_replay_result *r)
{
	char rank[32] = "";

	if (rep->ranks)
		snprintf(rank, sizeof(rank), "rank %d, ", rep->ranks[r - rep->results]);
	fprintf(out, "\n%s on device %d (%s%s backend)\n", r->pool, r->device, rank,
	        r->backend ? r->backend : "-");
	if (mp_replay_failed(r))
		fprintf(out,
		        "  result          failed: %llu OOM%s, first at event %lld: the figures "
		        "below are up to where it failed, no bytes or time saved\n",
		        (unsigned long long)r->n_ooms, r->n_ooms == 1 ? "" : "s",
		        (long long)r->first_oom.seq);
	print_memory(out, r);
	print_calls(out, r);
	print_times(out, rep, r);
	fprintf(out, "  OOMs            %llu", (unsigned long long)r->n_ooms);
	if (r->n_ooms) {
		fprintf(out, "; the first: ");
		print_oom_sentence(out, r);
	}
	fprintf(out, "\n  verify          %s%s%.*s\n",
	        r->verify == MP_VERIFY_PASSED   ? "passed"
	        : r->verify == MP_VERIFY_FAILED ? "failed"
	                                        : "off",
	        r->verify_msg[0] ? ": " : "", (int)sizeof(r->verify_msg), r->verify_msg);
	fprintf(out, "  pool stats%s\n", r->n_stats ? "" : "      none");
	for (size_t i = 0; i < r->n_stats && i < MP_REPLAY_MAX_STATS; i++)
		print_stat(out, &r->stats[i]);
}

int mp_replay_print_text(FILE *out, const struct mp_replay_report *rep)
{
	size_t *idx = calloc(rep->n_results + 1, sizeof(*idx));
	int show_verify = 0;
	size_t i, first;
	char why[200];

	if (!idx)
		return MP_ENOMEM;
	for (i = 0; i < rep->n_results; i++)
		show_verify |= rep->results[i].verify != MP_VERIFY_OFF;
	print_header(out, rep);
	for (first = 0; first < rep->n_results; first = i) {
		for (i = first; i < rep->n_results &&
		                rep->results[i].device == rep->results[first].device &&
		                (!rep->ranks || rep->ranks[i] == rep->ranks[first]);)
			i++;
		print_device(out, rep, first, i, show_verify, idx + first);
	}
	if (rep->ranks && print_job(out, rep) < 0) {
		free(idx);
		return MP_ENOMEM;
	}
	for (i = 0; i < rep->n_notes; i++)
		fprintf(out, "%s  - %s\n", i ? "" : "\nnotes\n", rep->notes[i]);
	/* details in the tables' order; a pool that did nothing has its line */
	for (i = 0; i < rep->n_results; i++)
		if (!mp_replay_no_effect(rep, &rep->results[idx[i]], why, sizeof(why)))
			print_details(out, rep, &rep->results[idx[i]]);
	free(idx);
	return ferror(out) ? MP_EIO : 0;
}
