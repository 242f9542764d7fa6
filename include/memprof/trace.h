/*
 * memprof/trace.h - the trace event model (DESIGN.md section 2), public.
 *
 * Owns the vocabulary shared by every layer and by plugins: operations,
 * the event record and call-stack frames.  Plain data only: no functions,
 * no allocation, no I/O.  Fields are only ever appended.
 */
#ifndef MEMPROF_TRACE_H
#define MEMPROF_TRACE_H

#include <stdint.h>

/* Operation codes.  The numbers are stored in trace databases: never renumber. */
enum memprof_op {
	MEMPROF_OP_ALLOC = 1,       /* block allocated (what the program asked for) */
	MEMPROF_OP_FREE = 2,        /* block freed */
	MEMPROF_OP_PREEXISTING = 3, /* block live before recording began */
	MEMPROF_OP_RESERVE = 4,     /* segment reserved from the driver */
	MEMPROF_OP_RELEASE = 5,     /* segment released to the driver */
	MEMPROF_OP_MAP = 6,         /* physical pages mapped into a segment */
	MEMPROF_OP_UNMAP = 7,       /* physical pages unmapped */
	MEMPROF_OP_OOM = 8,         /* an allocation failed for lack of memory */
	MEMPROF_OP_PHASE_BEGIN = 9, /* a phase (NVTX range, annotation) starts */
	MEMPROF_OP_PHASE_END = 10,  /* a phase ends */
	/*
	 * The program freed a block whose memory the allocator can reuse only
	 * later (PyTorch's free_requested, when other streams still use it):
	 * the block stops being live here and stays active until its free.
	 */
	MEMPROF_OP_FREE_REQUESTED = 11,
};
#define MEMPROF_OP_MIN MEMPROF_OP_ALLOC
#define MEMPROF_OP_MAX MEMPROF_OP_FREE_REQUESTED

/* One frame of a host call stack.  line is 0 when unknown, file "" likewise. */
struct memprof_frame {
	const char *name;
	const char *file;
	int64_t line;
};

/* A call stack, innermost frame first. */
struct memprof_stack {
	uint32_t n_frames;
	const struct memprof_frame *frames;
};

/*
 * One event.  Which fields mean what depends on op:
 *   alloc, preexisting: alloc_id, size_bytes (granted), requested_bytes, address
 *   free, free_requested: alloc_id (of the alloc), size_bytes, address
 *   reserve, release, map, unmap: alloc_id is the segment id, size_bytes, address
 *   oom:                requested_bytes (the failed request), device_free_bytes
 *   phase_begin/end:    phase
 * Ids (process_id, phase_id, stack_id, api_id) are 0 when absent.
 */
struct memprof_event {
	int64_t seq;   /* position in the trace, from 1 */
	int64_t ts_ns; /* monotonic timestamp, nanoseconds */
	int op;        /* enum memprof_op */
	int64_t alloc_id;
	int64_t size_bytes;
	int64_t requested_bytes;
	uint64_t address;
	int64_t device_free_bytes; /* oom only; -1 when unknown */
	int32_t device;            /* device ordinal */
	int64_t process_id;        /* row of the processes table */
	uint64_t stream;
	int64_t phase_id;
	int64_t stack_id;
	int64_t api_id;
	int64_t thread; /* OS thread id of the caller, 0 when unknown */
	/* time inside the allocation or free call that made the event, 0 when
	 * unknown (most imported formats; a recorded trace has it) */
	int64_t duration_ns;
};

/* A process of the traced job (the processes table). */
struct memprof_process {
	int64_t id;        /* row id, referenced by events */
	int64_t pid, ppid; /* ppid 0 when unknown */
	const char *host;  /* NULL when unknown */
	int64_t rank;      /* -1 when unknown, as are local_rank and world_size */
	int64_t local_rank;
	int64_t world_size;
	const char *command; /* NULL when unknown */
};

/* A device a process used (the devices table). */
struct memprof_device {
	int64_t process_id;
	int32_t ordinal;
	const char *name; /* NULL when unknown, as is uuid */
	const char *uuid;
	int64_t total_bytes; /* 0 when unknown */
};

/*
 * An event with its links resolved to names, as the trace reader hands it
 * to consumers.  The strings and the stack belong to the reader and stay
 * valid until it is closed; each is NULL when the event has none.
 */
struct memprof_record {
	struct memprof_event ev;
	const char *phase;
	const char *api;
	const struct memprof_stack *stack; /* NULL unless stacks were asked for */
	int64_t pid;                       /* OS process id, 0 when unknown */
};

#endif /* MEMPROF_TRACE_H */
