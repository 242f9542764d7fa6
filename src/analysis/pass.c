/*
 * analysis/pass.c - sets up the analyses of one pass over a trace
 * (analysis/pass.h) and registers them in a fixed order; computes nothing
 * itself.
 */
#include "analysis/pass.h"

#include <string.h>

#include "util/error.h"

#define DEFAULT_KINDS                                                                              \
	((1u << MP_ATTR_STACK) | (1u << MP_ATTR_PHASE) | (1u << MP_ATTR_STREAM) |                  \
	 (1u << MP_ATTR_SIZE))

void mp_pass_opts_default(struct mp_pass_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->granularity = MP_FRAG_DEFAULT_GRANULARITY;
	o->kinds = DEFAULT_KINDS;
	o->at = MP_ATTR_AT_PEAK;
	o->life.churn_window_ns = MP_LIFETIME_DEFAULT_CHURN_WINDOW_NS;
	o->life.idle_min_share = MP_LIFETIME_DEFAULT_IDLE_SHARE;
	o->plan_device = -1;
}

int mp_pass_init(struct mp_pass *p, const struct mp_pass_opts *o)
{
	int rc = 0;

	memset(p, 0, sizeof(*p));
	p->opts = *o;
	mp_memstate_init(&p->ms);
	mp_frag_init(&p->frag, &p->ms, o->granularity);
	mp_attribution_init(&p->attr, &p->ms, o->kinds, o->at, o->at_ts_ns);
	p->attr.at_relative = o->at_relative;
	mp_lifetime_init(&p->life, &o->life, &p->ms);
	if (o->timeline_points > 0)
		rc = mp_timeline_init(&p->timeline, o->timeline_points);
	if (rc == 0 && o->ranks)
		rc = mp_ranks_init(&p->ranks, o->processes, o->n_processes, o->ranks_device);
	if (rc == 0 && o->plan)
		rc = mp_plan_init(&p->plan, &p->ms, &p->frag, o->step_name, o->plan_device, 0);
	p->opts.step_name = NULL; /* not kept */
	p->opts.processes = NULL; /* not kept */
	p->opts.n_processes = 0;
	return rc;
}

int mp_pass_attach(struct mp_pass *p, struct mp_reader *r)
{
	struct mp_mem_listener ls[4] = {
	        mp_frag_listener(&p->frag), mp_attribution_listener(&p->attr),
	        mp_lifetime_listener(&p->life), mp_timeline_listener(&p->timeline)};
	struct mp_mem_listener rl = mp_ranks_listener(&p->ranks);
	struct mp_mem_listener pl = mp_plan_listener(&p->plan);
	struct mp_consumer c = mp_memstate_consumer(&p->ms);
	int i, n = p->opts.timeline_points > 0 ? 4 : 3;

	for (i = 0; i < n; i++)
		if (mp_memstate_listen(&p->ms, &ls[i]) < 0)
			return MP_EINVAL;
	if (p->opts.ranks && mp_memstate_listen(&p->ms, &rl) < 0)
		return MP_EINVAL;
	if (p->opts.plan && mp_memstate_listen(&p->ms, &pl) < 0) /* after frag's */
		return MP_EINVAL;
	return mp_reader_add(r, &c) < 0 ? MP_EINVAL : 0;
}

int64_t mp_pass_at_ts_ns(const struct mp_pass *p)
{
	return p->attr.at_ts_ns;
}

void mp_pass_free(struct mp_pass *p)
{
	if (p->opts.plan)
		mp_plan_free(&p->plan);
	if (p->opts.ranks)
		mp_ranks_free(&p->ranks);
	if (p->opts.timeline_points > 0)
		mp_timeline_free(&p->timeline);
	mp_lifetime_free(&p->life);
	mp_attribution_free(&p->attr);
	mp_frag_free(&p->frag);
	mp_memstate_free(&p->ms);
}
