/*
 * live/sites.c - call sites and latency of the live state: which return
 * address of an allocation's stack is its site (the innermost frame outside
 * the profiler, CUPTI, the driver and the CUDA runtime), bytes held per
 * site, the top sites and their labels (import/symbols.h, on request only),
 * the latency histogram and the recent durations' p50/p99.
 */
#include "import/symbols.h"
#include "live/state.h"
#include "live/state_internal.h"
#include "util/array.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bucket bounds in ns, as mp_live_bucket_bounds_s. */
static const int64_t bounds_ns[MP_LIVE_N_BUCKETS] = {
        1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 10000000, 100000000,
};

/* --- modules and sites ------------------------------------------------------------------ */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int is_tool(const char *path)
{
	static const char *const tools[] = {"libmemprof-inject", "libcupti", "libcuda.so",
	                                    "libcudart", NULL};
	const char *const *t;

	for (t = tools; *t; t++)
		if (strncmp(base_name(path), *t, strlen(*t)) == 0)
			return 1;
	return 0;
}

int mp_live_sites_module(struct mp_live_process *p)
{
	size_t n = mp_live_spool_n_modules(p->spool);

	if (n > p->cap_tool_module &&
	    mp_array_reserve((void **)&p->tool_module, &p->cap_tool_module, n, 1) < 0)
		return MP_ENOMEM;
	for (; p->n_modules_seen < n; p->n_modules_seen++) {
		const struct mp_spool_module *m = mp_live_spool_module(p->spool, p->n_modules_seen);
		const char *path = mp_live_spool_string(p->spool, m->path, NULL);

		path = path ? path : "";
		p->tool_module[p->n_modules_seen] = (uint8_t)is_tool(path);
		mp_spool_labels_module(&p->labels, path);
	}
	return 0;
}

/* Index of the module holding pc, -1 none. */
static long module_of(const struct mp_live_process *p, uint64_t pc)
{
	size_t i;

	for (i = 0; i < p->n_modules_seen; i++) {
		const struct mp_spool_module *m = mp_live_spool_module(p->spool, i);

		if (pc >= m->start && pc < m->end)
			return (long)i;
	}
	return -1;
}

static int site_of_pc(struct mp_live_process *p, uint64_t pc, uint32_t *site)
{
	uint64_t i;

	if (mp_intmap_get(&p->pc_site, pc, &i)) {
		*site = (uint32_t)i;
		return 0;
	}
	if (mp_array_reserve((void **)&p->sites, &p->cap_sites, p->n_sites + 1, sizeof(*p->sites)) <
	            0 ||
	    mp_intmap_put(&p->pc_site, pc, p->n_sites + 1) < 0)
		return MP_ENOMEM;
	memset(&p->sites[p->n_sites], 0, sizeof(p->sites[0]));
	p->sites[p->n_sites].pc = pc;
	*site = (uint32_t)++p->n_sites;
	return 0;
}

int mp_live_site_of(struct mp_live_process *p, uint32_t stack, uint32_t *site)
{
	const uint64_t *pcs;
	uint32_t depth = 0, k;
	uint64_t cached;
	long m;

	*site = 0;
	if (!stack)
		return 0;
	if (mp_intmap_get(&p->stack_site, stack, &cached)) {
		*site = (uint32_t)cached;
		return 0;
	}
	if (!(pcs = mp_live_spool_stack(p->spool, stack, &depth)))
		return 0; /* not defined: the importer will say so */
	for (k = 0; k < depth; k++) {
		m = module_of(p, pcs[k]);
		if (m < 0 || !p->tool_module[m]) {
			if (site_of_pc(p, pcs[k], site) < 0)
				return MP_ENOMEM;
			break;
		}
	}
	return mp_intmap_put(&p->stack_site, stack, *site) < 0 ? MP_ENOMEM : 0;
}

void mp_live_site_add(struct mp_live_process *p, uint32_t site, int64_t delta_bytes)
{
	if (!site)
		return;
	p->sites[site - 1].live_bytes += delta_bytes;
	p->sites[site - 1].n_live += delta_bytes > 0 ? 1 : -1;
}

void mp_live_sites_free(struct mp_live_process *p)
{
	size_t i;

	for (i = 0; i < p->n_sites; i++)
		free(p->sites[i].label);
	free(p->sites);
	free(p->tool_module);
	mp_intmap_free(&p->stack_site);
	mp_intmap_free(&p->pc_site);
	mp_symbols_free(p->sym);
}

/* --- top sites and their labels ----------------------------------------------------------- */

/* Does a come before b in the top list? */
static int before(const struct mp_live_top *a, const struct mp_live_top *b)
{
	if (a->site->live_bytes != b->site->live_bytes)
		return a->site->live_bytes > b->site->live_bytes;
	if (a->proc->pid != b->proc->pid)
		return a->proc->pid < b->proc->pid;
	return a->site->pc < b->site->pc;
}

size_t mp_live_state_top_sites(const struct mp_live_state *st, struct mp_live_top *out, size_t n)
{
	size_t i, k, j, got = 0;

	for (i = 0; n && i < st->n_procs; i++) {
		const struct mp_live_process *p = st->procs[i];

		for (k = 0; p && k < p->n_sites; k++) {
			struct mp_live_top t = {p, &p->sites[k]};

			if (p->sites[k].live_bytes <= 0 || (got == n && !before(&t, &out[n - 1])))
				continue;
			j = got < n ? got++ : n - 1;
			for (; j > 0 && before(&t, &out[j - 1]); j--)
				out[j] = out[j - 1];
			out[j] = t;
		}
	}
	return got;
}

/* The label of pc: "function (file:line)", else "module+0xOFF", else "0xPC". */
static char *label(struct mp_live_process *p, uint64_t pc)
{
	struct memprof_frame f = {0};
	long m = module_of(p, pc);
	char *out = NULL;
	int tool;

	if (p->sym && mp_symbols_frame(p->sym, pc, &f, &tool) == 0 && f.name &&
	    strncmp(f.name, "0x", 2) != 0) {
		if (f.line > 0)
			return asprintf(&out, "%s (%s:%lld)", f.name, base_name(f.file),
			                (long long)f.line) < 0
			               ? NULL
			               : out;
		return asprintf(&out, "%s (%s)", f.name, base_name(f.file ? f.file : "")) < 0 ? NULL
		                                                                              : out;
	}
	if (m >= 0) {
		const struct mp_spool_module *mod = mp_live_spool_module(p->spool, (size_t)m);
		const char *path = mp_live_spool_string(p->spool, mod->path, NULL);

		return asprintf(&out, "%s+0x%llx", base_name(path ? path : "?"),
		                (unsigned long long)(pc - mod->base)) < 0
		               ? NULL
		               : out;
	}
	return asprintf(&out, "0x%llx", (unsigned long long)pc) < 0 ? NULL : out;
}

/* Give the process's symboliser the modules it does not have yet. */
static int feed_symbols(struct mp_live_process *p)
{
	if (!p->sym && !(p->sym = mp_symbols_new()))
		return MP_ENOMEM;
	for (; p->n_sym_modules < p->n_modules_seen; p->n_sym_modules++) {
		const struct mp_spool_module *m = mp_live_spool_module(p->spool, p->n_sym_modules);
		const char *path = mp_live_spool_string(p->spool, m->path, NULL);
		const char *build_id = mp_live_spool_string(p->spool, m->build_id, NULL);

		if (mp_symbols_add_module(p->sym, path ? path : "", m->base, m->start, m->end,
		                          build_id) < 0)
			return MP_ENOMEM;
	}
	return 0;
}

int mp_live_state_label_sites(struct mp_live_state *st, size_t n)
{
	struct mp_live_top *top = n ? calloc(n, sizeof(*top)) : NULL;
	size_t i, got;
	int rc = 0;

	if (n && !top)
		return MP_ENOMEM;
	got = mp_live_state_top_sites(st, top, n);
	for (i = 0; rc == 0 && i < got; i++) {
		struct mp_live_process *p = (struct mp_live_process *)top[i].proc;
		struct mp_live_site *s = (struct mp_live_site *)top[i].site;

		if (s->label)
			continue;
		if ((rc = feed_symbols(p)) == 0 && !(s->label = label(p, s->pc)))
			rc = MP_ENOMEM;
	}
	free(top);
	return rc;
}

/* --- latency ------------------------------------------------------------------------------ */

static int bucket(int64_t ns)
{
	int i;

	for (i = 0; i < MP_LIVE_N_BUCKETS && ns > bounds_ns[i]; i++)
		;
	return i;
}

void mp_live_latency_add(struct mp_live_device *d, struct mp_live_slot *s, int64_t dur_ns)
{
	s->lat_ns = 0;
	s->lat_seq = 0;
	if (dur_ns <= 0)
		return;
	s->lat_ns = dur_ns;
	d->buckets[bucket(dur_ns)]++;
	d->n_latency++;
	d->latency_sum_ns += dur_ns;
	d->recent_ns[d->n_recent % MP_LIVE_RECENT] = dur_ns;
	s->lat_seq = ++d->n_recent;
}

void mp_live_latency_longer(struct mp_live_device *d, struct mp_live_slot *s, int64_t dur_ns)
{
	if (dur_ns <= s->lat_ns)
		return;
	if (s->lat_ns <= 0) {
		mp_live_latency_add(d, s, dur_ns);
		return;
	}
	d->buckets[bucket(s->lat_ns)]--;
	d->buckets[bucket(dur_ns)]++;
	d->latency_sum_ns += dur_ns - s->lat_ns;
	if (d->n_recent - (s->lat_seq - 1) <= MP_LIVE_RECENT)
		d->recent_ns[(s->lat_seq - 1) % MP_LIVE_RECENT] = dur_ns;
	s->lat_ns = dur_ns;
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t nearest_rank(const int64_t *v, size_t n, int percent)
{
	size_t rank = (n * (size_t)percent + 99) / 100; /* ceil(n * p / 100) */

	return v[rank ? rank - 1 : 0];
}

static size_t gather(const struct mp_live_device *d, int64_t *v, size_t n)
{
	size_t k = d->n_recent < MP_LIVE_RECENT ? (size_t)d->n_recent : MP_LIVE_RECENT;

	memcpy(v + n, d->recent_ns, k * sizeof(*v));
	return n + k;
}

size_t mp_live_latency_quantiles(const struct mp_live_state *st, const struct mp_live_device *dev,
                                 int64_t *p50_ns, int64_t *p99_ns)
{
	size_t i, k, n = 0, cap = 0;
	int64_t *v;

	*p50_ns = *p99_ns = 0;
	for (i = 0; !dev && i < st->n_procs; i++)
		cap += st->procs[i] ? st->procs[i]->n_devices * MP_LIVE_RECENT : 0;
	if (dev)
		cap = MP_LIVE_RECENT;
	if (!cap || !(v = malloc(cap * sizeof(*v))))
		return 0;
	if (dev)
		n = gather(dev, v, 0);
	for (i = 0; !dev && i < st->n_procs; i++)
		for (k = 0; st->procs[i] && k < st->procs[i]->n_devices; k++)
			n = gather(&st->procs[i]->devices[k], v, n);
	if (n) {
		qsort(v, n, sizeof(*v), by_value);
		*p50_ns = nearest_rank(v, n, 50);
		*p99_ns = nearest_rank(v, n, 99);
	}
	free(v);
	return n;
}
