/*
 * report/runs.c - lookups over the stored replay runs a report receives
 * (report/runs.h): a metric by name, the newest run of each pool.
 */
#include "report/runs.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

const struct mp_report_metric *mp_report_run_metric(const struct mp_report_run *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return &r->metrics[i];
	return NULL;
}

static int same_key(const struct mp_report_run *a, const struct mp_report_run *b)
{
	return a->device == b->device && strcmp(a->pool, b->pool) == 0 &&
	       strcmp(a->backend, b->backend) == 0;
}

static const struct mp_report_run *sort_base;

static int by_key(const void *pa, const void *pb)
{
	const struct mp_report_run *a = &sort_base[*(const size_t *)pa];
	const struct mp_report_run *b = &sort_base[*(const size_t *)pb];
	int c;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if ((c = strcmp(a->pool, b->pool)) != 0)
		return c;
	return strcmp(a->backend, b->backend);
}

size_t mp_report_runs_latest(const struct mp_report_runs *runs, size_t *idx)
{
	size_t i, j, n = 0;

	for (i = 0; i < runs->n; i++) {
		for (j = 0; j < n && !same_key(&runs->runs[idx[j]], &runs->runs[i]); j++)
			;
		if (j == n)
			idx[n++] = i;
		else if (runs->runs[i].id > runs->runs[idx[j]].id)
			idx[j] = i;
	}
	sort_base = runs->runs;
	qsort(idx, n, sizeof(*idx), by_key);
	sort_base = NULL;
	return n;
}

const char *mp_report_run_where(char *buf, size_t n, int32_t device, int heading)
{
	if (device == MP_REPORT_JOB_DEVICE)
		snprintf(buf, n, "%s job (all ranks)", heading ? "The" : "the");
	else
		snprintf(buf, n, "%s %d", heading ? "Device" : "device", (int)device);
	return buf;
}
