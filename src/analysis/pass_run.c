/*
 * analysis/pass_run.c - one pass of the analyses over a whole trace
 * (analysis/pass.h: mp_pass_run), the sequence analyze, report, diff and
 * check share: the reader opened with stacks, the pass set up (with the
 * trace's processes when the cross-rank figures are asked for), the
 * caller's listeners added after the analyses', the reader run; and what a
 * failed read is called.  Sets errors, never prints.
 */
#include "analysis/pass.h"

#include <stdlib.h>

#include "store/store.h"
#include "util/error.h"

int mp_pass_read(struct mp_store *s, struct mp_reader *r, const struct mp_memstate *ms,
                 struct mp_error *err)
{
	int rc = mp_reader_run(r);

	if (rc == MP_ENOMEM)
		mp_err(err, rc, "out of memory reading '%s'", mp_store_path(s));
	else if (rc == MP_EFORMAT)
		mp_err(err, rc,
		       "sizes too large in '%s': event %lld asks for 2^56 bytes or more, or brings "
		       "a sum of sizes beyond 2^62",
		       mp_store_path(s), (long long)ms->oversized_seq);
	else if (rc < 0)
		mp_err_copy(err, mp_store_error(s));
	return rc;
}

/* A new pass set up with o; the trace's processes read for its ranks when o has none. */
static int new_pass(struct mp_store *s, const struct mp_pass_opts *o, struct mp_pass **out,
                    struct mp_error *err)
{
	struct mp_pass_opts po = *o;
	struct memprof_process *procs = NULL;
	size_t n_procs = 0;
	int rc;

	if (po.ranks && !po.processes) {
		if (mp_store_processes(s, &procs, &n_procs) < 0)
			return mp_err_copy(err, mp_store_error(s));
		po.processes = procs;
		po.n_processes = n_procs;
	}
	if (!(*out = calloc(1, sizeof(**out)))) {
		mp_store_free_processes(procs, n_procs);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	rc = mp_pass_init(*out, &po);
	mp_store_free_processes(procs, n_procs);
	return rc < 0 ? mp_err(err, rc, "cannot set up the analyses") : 0;
}

int mp_pass_run(struct mp_store *s, const struct mp_pass_opts *o, mp_pass_setup_fn setup, void *ctx,
                struct mp_pass **pass, struct mp_reader **reader, struct mp_error *err)
{
	int rc;

	*pass = NULL;
	*reader = NULL;
	if (mp_reader_open(s, MP_READ_STACKS, reader) < 0)
		return mp_err_copy(err, mp_store_error(s));
	if ((rc = new_pass(s, o, pass, err)) < 0)
		return rc;
	rc = mp_pass_attach(*pass, *reader);
	if (rc == 0 && setup)
		rc = setup(ctx, *pass);
	if (rc < 0)
		return mp_err(err, rc, "cannot set up the analyses");
	rc = mp_pass_read(s, *reader, &(*pass)->ms, err);
	if (rc < 0 && mp_lifetime_error(&(*pass)->life))
		return mp_err(err, rc, "%s", mp_lifetime_error(&(*pass)->life));
	return rc;
}

void mp_pass_close(struct mp_pass *pass, struct mp_reader *reader)
{
	mp_reader_close(reader);
	if (pass) {
		mp_pass_free(pass);
		free(pass);
	}
}
