/*
 * import/merge_devices.c - the job-wide device numbers of a merge: each
 * input's ordinals are kept when no two inputs use one ordinal for
 * different GPUs, otherwise every device is renumbered 0..G-1 in input
 * order, then ordinal.  Two inputs' devices are one GPU only when host and
 * UUID are both known and equal.  Also the merged_devices text.
 */
#include "import/merge_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct memprof_process *process_of(const struct mp_merge_input *in, int64_t id)
{
	size_t i;

	for (i = 0; i < in->n_procs; i++)
		if (in->procs[i].id == id)
			return &in->procs[i];
	return NULL;
}

static const char *host_of(const struct mp_merge_input *in, const struct memprof_device *d)
{
	const struct memprof_process *p = process_of(in, d->process_id);

	return p ? p->host : NULL;
}

/* Are device a of input ia and device b of input ib the same GPU? */
static int same_gpu(const struct mp_merge_input *ia, const struct memprof_device *a,
                    const struct mp_merge_input *ib, const struct memprof_device *b)
{
	const char *ha = host_of(ia, a), *hb = host_of(ib, b);

	if (ha && hb && a->uuid && b->uuid)
		return strcmp(ha, hb) == 0 && strcmp(a->uuid, b->uuid) == 0;
	/* within one input, one ordinal is one device unless the UUIDs say not */
	return ia == ib && a->ordinal == b->ordinal;
}

/* Does some ordinal stand for different GPUs in two inputs? */
static int ordinals_clash(const struct mp_merge_plan *plan)
{
	size_t i, j, a, b;

	for (i = 0; i < plan->n; i++)
		for (j = 0; j < i; j++)
			for (a = 0; a < plan->in[i].n_devs; a++)
				for (b = 0; b < plan->in[j].n_devs; b++) {
					const struct memprof_device *da = &plan->in[i].devs[a].d,
					                            *db = &plan->in[j].devs[b].d;

					if (da->ordinal == db->ordinal &&
					    !same_gpu(&plan->in[i], da, &plan->in[j], db))
						return 1;
				}
	return 0;
}

/* The job device already given to a GPU that is the same as dev, or -1. */
static int32_t known_gpu(const struct mp_merge_plan *plan, size_t upto_input,
                         const struct mp_merge_input *in, const struct mp_merge_device *dev)
{
	size_t i, k;

	for (i = 0; i <= upto_input; i++)
		for (k = 0; k < plan->in[i].n_devs; k++) {
			const struct mp_merge_device *o = &plan->in[i].devs[k];

			if (o == dev)
				return -1; /* only those before dev have numbers */
			if (o->job >= 0 && same_gpu(&plan->in[i], &o->d, in, &dev->d))
				return o->job;
		}
	return -1;
}

static int by_ordinal(const void *a, const void *b)
{
	const struct mp_merge_device *x = a, *y = b;

	if (x->d.ordinal != y->d.ordinal)
		return x->d.ordinal < y->d.ordinal ? -1 : 1;
	return x->d.process_id < y->d.process_id ? -1 : x->d.process_id > y->d.process_id;
}

/* Has a device of an input before input upto, or of input upto before its
 * device k, been given job number job? */
static int job_taken(const struct mp_merge_plan *plan, size_t upto, size_t k, int32_t job)
{
	size_t i, j;

	for (i = 0; i <= upto && i < plan->n; i++)
		for (j = 0; j < (i == upto ? k : plan->in[i].n_devs); j++)
			if (plan->in[i].devs[j].job == job)
				return 1;
	return 0;
}

int mp_merge_devices_plan(struct mp_merge_plan *plan)
{
	size_t i, k;
	int32_t job;

	plan->renumbered = ordinals_clash(plan);
	plan->n_job_devices = 0;
	for (i = 0; i < plan->n; i++) {
		struct mp_merge_input *in = &plan->in[i];

		qsort(in->devs, in->n_devs, sizeof(*in->devs), by_ordinal);
		for (k = 0; k < in->n_devs; k++)
			in->devs[k].job = -1;
	}
	for (i = 0; i < plan->n; i++)
		for (k = 0; k < plan->in[i].n_devs; k++) {
			struct mp_merge_device *dev = &plan->in[i].devs[k];

			if (!plan->renumbered)
				job = dev->d.ordinal;
			else if ((job = known_gpu(plan, i, &plan->in[i], dev)) < 0)
				job = plan->n_job_devices;
			/* counted, not the highest number + 1: ordinals may be up to 2^31 - 1 */
			if (!job_taken(plan, i, k, job))
				plan->n_job_devices++;
			dev->job = job;
		}
	return 0;
}

int32_t mp_merge_job_device(const struct mp_merge_input *in, int64_t process_id, int32_t ordinal)
{
	size_t k;

	for (k = 0; k < in->n_devs; k++)
		if (in->devs[k].d.process_id == process_id && in->devs[k].d.ordinal == ordinal)
			return in->devs[k].job;
	return -1;
}

int32_t mp_merge_add_device(struct mp_merge_plan *plan, struct mp_merge_input *in,
                            int64_t process_id, int32_t ordinal)
{
	struct mp_merge_device *p = realloc(in->devs, (in->n_devs + 1) * sizeof(*p));
	int32_t job = -1;
	size_t k;

	if (!p)
		return -1;
	in->devs = p;
	for (k = 0; k < in->n_devs && job < 0; k++)
		if (in->devs[k].d.ordinal == ordinal) /* the input's other process on it */
			job = in->devs[k].job;
	if (job < 0)
		job = plan->renumbered ? plan->n_job_devices : ordinal;
	if (!job_taken(plan, (size_t)(in - plan->in), in->n_devs, job))
		plan->n_job_devices++;
	memset(&p[in->n_devs], 0, sizeof(*p));
	p[in->n_devs].d.process_id = process_id;
	p[in->n_devs].d.ordinal = ordinal;
	p[in->n_devs].job = job;
	in->n_devs++;
	return job;
}

static void describe(FILE *f, const struct mp_merge_input *in, const struct mp_merge_device *dev)
{
	const struct memprof_process *p = process_of(in, dev->d.process_id);

	fprintf(f, "'%s' process %lld (", in->path, (long long)dev->d.process_id);
	if (p && p->rank >= 0)
		fprintf(f, "rank %lld, ", (long long)p->rank);
	if (p && p->host)
		fprintf(f, "host %s, ", p->host);
	fprintf(f, "pid %lld) device %d", p ? (long long)p->pid : 0LL, (int)dev->d.ordinal);
}

struct job_ref {
	int32_t job;
	size_t input, k;
};

static int by_job(const void *a, const void *b)
{
	const struct job_ref *x = a, *y = b;

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* Every device of every input, in job order (then input, then position). */
static struct job_ref *jobs_in_order(const struct mp_merge_plan *plan, size_t *n)
{
	struct job_ref *refs;
	size_t i, k, total = 0;

	for (i = 0; i < plan->n; i++)
		total += plan->in[i].n_devs;
	refs = malloc((total ? total : 1) * sizeof(*refs));
	if (!refs)
		return NULL;
	*n = 0;
	for (i = 0; i < plan->n; i++)
		for (k = 0; k < plan->in[i].n_devs; k++)
			if (plan->in[i].devs[k].job >= 0)
				refs[(*n)++] = (struct job_ref){plan->in[i].devs[k].job, i, k};
	qsort(refs, *n, sizeof(*refs), by_job);
	return refs;
}

char *mp_merge_devices_text(const struct mp_merge_plan *plan)
{
	char *text = NULL;
	size_t len = 0, i, n = 0;
	struct job_ref *refs = jobs_in_order(plan, &n);
	FILE *f = refs ? open_memstream(&text, &len) : NULL;

	if (!f) {
		free(refs);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		const struct mp_merge_input *in = &plan->in[refs[i].input];

		if (i == 0 || refs[i].job != refs[i - 1].job)
			fprintf(f, "%s%d = ", i ? "\n" : "", (int)refs[i].job);
		else
			fputs(", ", f);
		describe(f, in, &in->devs[refs[i].k]);
	}
	free(refs);
	return fclose(f) == 0 ? text : (free(text), NULL);
}
