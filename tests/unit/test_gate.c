/*
 * tests/unit/test_gate.c - analysis/gate: figures, comparison, thresholds.
 */
#include <criterion/criterion.h>

#include "analysis/gate.h"

Test(gate, placeholder)
{
	cr_assert_eq(mp_gate_ratio_nano(1, 2), 500000000);
}
