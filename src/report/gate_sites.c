/*
 * report/gate_sites.c - the call sites live at the peak, one table per
 * device, in a writer's style (struct mp_gate_sites_style, report/gate.h):
 * check's sites by bytes, diff's by growth with the new and the gone
 * marked.  The writers (gate_text.c, gate_md.c) give the formats and how
 * a site's text is written (escaped for Markdown, as is for text).
 */
#include "report/gate.h"

#include "util/format.h"

/* A site's text, written by the style. */
static void site(FILE *out, const struct mp_gate_sites_style *st, const struct mp_gate_site *s)
{
	char text[1024];

	st->write_site(out, mp_gate_site_text(text, st->site_size, s, st->site_width));
}

void mp_gate_print_sites_check(FILE *out, const struct mp_gate_report *r,
                               const struct mp_gate_device *h, const struct mp_gate_sites_style *st)
{
	char b[32];
	size_t i;

	if (h->n_sites == 0)
		return;
	fputs(st->head_check, out);
	for (i = 0; i < h->n_sites && i < (size_t)r->top; i++) {
		fprintf(out, st->row_check, mp_format_bytes(b, sizeof(b), h->sites[i].bytes),
		        (long long)h->sites[i].blocks);
		site(out, st, &h->sites[i]);
		fputs(st->end_check, out);
	}
	if (h->n_sites > (size_t)r->top)
		fprintf(out, st->more_check, h->n_sites - (size_t)r->top);
}

void mp_gate_print_sites_diff(FILE *out, const struct mp_gate_report *r,
                              const struct mp_gate_device_change *c,
                              const struct mp_gate_sites_style *st)
{
	char tb[32], th[32], td[32];
	size_t i;

	if (c->n_sites == 0) {
		fputs(st->no_change, out);
		return;
	}
	fputs(st->head_diff, out);
	for (i = 0; i < c->n_sites && i < (size_t)r->top; i++) {
		const struct mp_gate_site_change *sc = &c->sites[i];

		fprintf(out, st->row_diff,
		        sc->base ? mp_format_bytes(tb, sizeof(tb), sc->base->bytes) : "-",
		        sc->head ? mp_format_bytes(th, sizeof(th), sc->head->bytes) : "-",
		        mp_gate_signed_bytes(td, sizeof(td), sc->delta_bytes));
		site(out, st, sc->head ? sc->head : sc->base);
		fprintf(out, st->end_diff,
		        !sc->base   ? st->new_mark
		        : !sc->head ? st->gone_mark
		                    : "");
	}
	if (c->n_sites > (size_t)r->top)
		fprintf(out, st->more_diff, c->n_sites - (size_t)r->top);
}
