/*
 * tests/unit/cost_names_stub.c - TEMPORARY: mp_cost_call_name for
 * test_replay_report until src/replay/cost_model.c exists.  Delete this file
 * (and its mention in Makefile.am) when cost_model.c joins libmemprof-core;
 * the test asserts against mp_cost_call_name, so it keeps working unchanged.
 */
#include "replay/cost_model.h"

const char *mp_cost_call_name(enum mp_cost_call call)
{
	static const char *const names[MP_COST_N_CALLS] = {
	        "cudaMalloc",      "cudaFree",        "cuMemAddressReserve",   "cuMemAddressFree",
	        "cuMemMap",        "cuMemUnmap",      "cudaMallocAsync",       "cudaFreeAsync",
	        "cudaMemsetAsync", "cudaMemcpyAsync", "cudaStreamSynchronize",
	};

	return (unsigned)call < MP_COST_N_CALLS ? names[call] : "unknown";
}
