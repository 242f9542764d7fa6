/*
 * report/gate_md.c - 'memprof diff' and 'memprof check' as Markdown for a
 * pull request comment.
 */
#include "report/gate.h"

int mp_gate_write_md(FILE *out, const struct mp_gate_report *r)
{
	return mp_gate_write_text(out, r);
}
