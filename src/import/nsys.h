/*
 * import/nsys.h - the parts of the Nsight Systems importer shared by its two
 * files: nsys.c reads the export (schema, enums, the ordered query) and
 * nsys_events.c turns each checked row into events (pairing, pools).
 */
#ifndef MP_IMPORT_NSYS_H
#define MP_IMPORT_NSYS_H

#include <stddef.h>
#include <stdint.h>

#include "import/import.h"
#include "util/intmap.h"

/* What memprof does with a memory kind. */
enum mp_nsys_class {
	MP_NSYS_UNKNOWN, /* skipped, MP_WARN_SKIPPED_UNKNOWN */
	MP_NSYS_HOST,    /* pageable, pinned: skipped, MP_WARN_SKIPPED_HOST */
	MP_NSYS_GPU,     /* device, array, managed, static: block events */
};

/* One row of CUDA_GPU_MEMORY_USAGE_EVENTS, checked, with its joined API call. */
struct mp_nsys_row {
	int64_t start;       /* ns on the session clock, >= 0 */
	uint64_t global_pid; /* nsys's serialized GlobalId of the process */
	int32_t device;
	uint64_t address;
	int64_t bytes;   /* >= 0 */
	int is_alloc;    /* else a deallocation */
	const char *api; /* runtime function name, else "nsys:<kind>" */
	size_t api_len;
	uint64_t stream;     /* 0 when NULL or absent */
	int64_t thread;      /* OS tid from the runtime call's globalTid, else 0 */
	int64_t duration_ns; /* the runtime call's end - start, else 0 */
	int has_pool;        /* a local pool address (not 0) and its size are known */
	uint64_t pool_address;
	int64_t pool_size; /* >= 0 */
};

/* Live state of one device of one process. */
struct mp_nsys_slot {
	struct mp_intmap block_ids;   /* address -> alloc id */
	struct mp_intmap block_sizes; /* address -> size */
	struct mp_intmap pool_ids;    /* pool address -> segment id */
	struct mp_intmap pool_sizes;  /* pool address -> size last seen */
};

struct mp_nsys_events {
	struct mp_import_ctx *c;
	struct mp_intmap processes; /* global pid -> process id */
	struct mp_intmap slot_of;   /* process id << 32 | device -> slot index + 1 */
	struct mp_nsys_slot *slots;
	size_t n_slots, cap_slots;
	int64_t next_alloc_id, next_segment_id;
};

void mp_nsys_events_init(struct mp_nsys_events *e, struct mp_import_ctx *c);
void mp_nsys_events_free(struct mp_nsys_events *e);
/* Write the events of one GPU row.  Returns 0 or a negative MP_E* code with
 * the message in c->err (a writer's failure copied there). */
int mp_nsys_events_row(struct mp_nsys_events *e, const struct mp_nsys_row *row);

#endif
