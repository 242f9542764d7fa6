/*
 * spool/format.h - the on-disk layout of a spool (.mpt), the file the
 * injected library writes inside the workload and 'memprof record' reads.
 *
 * Owns the layout only: no code.  A spool is append-only:
 *
 *   file header (struct mp_spool_header, 128 bytes, once, at offset 0)
 *   block*      each: struct mp_spool_block (24 bytes) + payload_bytes of items
 *
 * A block's payload is a run of items.  Every item starts with
 * struct mp_spool_item_head; its size is a multiple of 8.  Events are
 * fixed-size (struct mp_spool_event, 96 bytes); strings, stacks, modules,
 * devices and meta pairs are variable-size table items, each written before
 * the first event that refers to it (ids are small integers from 1; 0 means
 * none).  The last item of a complete spool is a footer, alone in the last
 * block.  A spool without a footer was cut short (the workload was killed):
 * a reader keeps every complete block before the cut and says the spool is
 * truncated.  A block whose magic or checksum is wrong is corrupt: a reader
 * keeps what came before it and names the offset.
 *
 * Numbers are in the writer's byte order; the header's byte_order field lets
 * a reader refuse a spool from a machine of the other order.  Fields are only
 * ever appended (bump MP_SPOOL_VERSION's minor part when adding kinds).
 */
#ifndef MP_SPOOL_FORMAT_H
#define MP_SPOOL_FORMAT_H

#include <stdint.h>

#define MP_SPOOL_MAGIC "MPSPOOL\x01"  /* 8 bytes, no NUL needed */
#define MP_SPOOL_VERSION 1
#define MP_SPOOL_BYTE_ORDER 0x01020304u
#define MP_SPOOL_BLOCK_MAGIC 0x4b42504du /* "MPBK" little-endian */
#define MP_SPOOL_MAX_BLOCK (64u << 20)   /* readers refuse larger blocks */
#define MP_SPOOL_MAX_STACK_DEPTH 128
#define MP_SPOOL_MAX_STRING (1u << 20)   /* longer strings are cut */

/* Header flags. */
enum mp_spool_flag {
	MP_SPOOL_F_DORMANT = 1u << 0, /* started dormant: events only inside start/stop windows */
	MP_SPOOL_F_NO_FRAMEWORK_CACHE = 1u << 1, /* memprof set the framework no-cache switches */
};

/* Stack capture modes (header stacks_mode, MEMPROF_STACKS). */
enum mp_spool_stacks { MP_STACKS_OFF = 0, MP_STACKS_SAMPLED = 1, MP_STACKS_ALL = 2 };

struct mp_spool_header {
	char magic[8];           /* MP_SPOOL_MAGIC */
	uint32_t version;        /* MP_SPOOL_VERSION */
	uint32_t header_bytes;   /* sizeof(struct mp_spool_header) */
	uint32_t event_bytes;    /* sizeof(struct mp_spool_event) */
	uint32_t byte_order;     /* MP_SPOOL_BYTE_ORDER as the writer stored it */
	int64_t pid;
	int64_t ppid;
	int64_t start_mono_ns;   /* CLOCK_MONOTONIC when the library started */
	int64_t start_unix_ns;   /* CLOCK_REALTIME at the same moment */
	uint32_t flags;          /* enum mp_spool_flag */
	uint32_t stacks_mode;    /* enum mp_spool_stacks */
	uint32_t stack_sample;   /* sampled: one call in this many gets a stack */
	uint32_t stack_depth;    /* most frames kept */
	uint32_t cupti_version;  /* cuptiGetVersion, 0 when unknown */
	uint32_t reserved0;
	uint8_t reserved[48];    /* zero */
};

/* Block header: payload_bytes of items follow; crc32 (IEEE, zlib's) of them. */
struct mp_spool_block {
	uint32_t magic;         /* MP_SPOOL_BLOCK_MAGIC */
	uint32_t payload_bytes; /* a multiple of 8, at most MP_SPOOL_MAX_BLOCK */
	uint32_t crc32;
	uint32_t n_items;
	uint64_t block_seq;     /* 0, 1, 2, ... */
};

/* Item types. */
enum mp_spool_item_type {
	MP_SI_EVENT = 1,  /* struct mp_spool_event */
	MP_SI_STRING = 2, /* struct mp_spool_string + len bytes, padded to 8 */
	MP_SI_STACK = 3,  /* struct mp_spool_stack + depth uint64_t return addresses */
	MP_SI_MODULE = 4, /* struct mp_spool_module */
	MP_SI_DEVICE = 5, /* struct mp_spool_device */
	MP_SI_META = 6,   /* struct mp_spool_meta */
	MP_SI_FOOTER = 7, /* struct mp_spool_footer */
};

struct mp_spool_item_head {
	uint16_t type;  /* enum mp_spool_item_type */
	uint16_t zero;
	uint32_t bytes; /* whole item, head included, multiple of 8 */
};

/*
 * What an event is.  MEM_* come from CUPTI activity records, API and VMM_*
 * and OOM from API callbacks, PHASE_* from NVTX callbacks, the rest from the
 * library itself.  Numbers are stored: never renumber.
 */
enum mp_spool_kind {
	MP_SK_MEM_ALLOC = 1,     /* MEMORY2 ALLOCATION: address, bytes, device, mem_kind, stream, correlation; extra = context id; extra2 = pool address */
	MP_SK_MEM_FREE = 2,      /* MEMORY2 RELEASE: same fields */
	MP_SK_POOL_CREATED = 3,  /* MEMORY_POOL: address = pool base, bytes = size, extra = release threshold, extra2 = utilized */
	MP_SK_POOL_DESTROYED = 4,
	MP_SK_POOL_TRIMMED = 5,  /* extra = minBytesToKeep */
	MP_SK_API = 6,           /* an allocation or free call returned: name = API name; address = pointer made or freed; bytes = size asked (0 for a free); extra = the call's result code; duration_ns; device from its context (-1 unknown) */
	MP_SK_VMM_RESERVE = 7,   /* cuMemAddressReserve: address = va, bytes = size */
	MP_SK_VMM_FREE = 8,      /* cuMemAddressFree: address, bytes */
	MP_SK_VMM_CREATE = 9,    /* cuMemCreate: extra = handle, bytes = size, device = location id, mem_kind = CUPTI memory kind (device or pinned host) */
	MP_SK_VMM_RELEASE = 10,  /* cuMemRelease: extra = handle */
	MP_SK_VMM_MAP = 11,      /* cuMemMap: address = va, bytes = size, extra = handle, extra2 = offset */
	MP_SK_VMM_UNMAP = 12,    /* cuMemUnmap: address, bytes */
	MP_SK_OOM = 13,          /* an allocation call failed for lack of memory: name = API, bytes = size asked, device */
	MP_SK_PHASE_PUSH = 14,   /* NVTX range start on thread: name = range message (domain prefixed "domain: " unless default) */
	MP_SK_PHASE_POP = 15,    /* NVTX range end on thread */
	MP_SK_MARK = 16,         /* 'memprof attach PID mark LABEL': name = label */
	MP_SK_PREEXISTING = 17,  /* live when a window opened (dormant start): address, bytes, device, mem_kind, stream; name = API that made it */
	MP_SK_WINDOW_START = 18, /* recording started (dormant mode: attach start) */
	MP_SK_WINDOW_STOP = 19,  /* recording stopped (attach stop) */
	MP_SK_DROPPED = 20,      /* extra = records lost since the last such event; name = why */
	MP_SK_DISABLED = 21,     /* the library turned itself off: name = why; nothing after this is recorded */
	MP_SK_HOST_NUMA = 22,    /* where a pinned host buffer's pages are, asked (move_pages) right after the call that pinned it returned: one event per node holding pages of it; address = buffer start (0 for cuMemCreate, whose correlation names it), bytes = the buffer's bytes estimated on the node from its share of the sampled pages, device = the context's device, extra = node, extra2 = pages sampled on it (0: the node is cuMemCreate's host NUMA location, not sampled), correlation, thread, name (API) and phase = the call's, ts = when the call returned.  Sampled pages not faulted in yet are on no node: a buffer's events may add up to less than its size */
};

/* Event flags. */
enum mp_spool_event_flag {
	MP_SE_ASYNC = 1u << 0,        /* stream-ordered (cudaMallocAsync and the like) */
	MP_SE_FROM_DRIVER = 1u << 1,  /* API is a driver call (cu*), else runtime (cuda*) */
	MP_SE_FREE_CALL = 1u << 2,    /* MP_SK_API: the call frees (address is what it freed) */
	MP_SE_HOST_MEMORY = 1u << 3,  /* MP_SK_API / PREEXISTING: host memory (pinned or managed-host) */
	MP_SE_MANAGED = 1u << 4,      /* MP_SK_API / PREEXISTING: managed memory */
	MP_SE_MAPPING = 1u << 5,      /* PREEXISTING: a cuMemMap mapping (segment level), not a block */
};

/* CUPTI memory kinds, as CUpti_ActivityMemoryKind numbers them. */
enum mp_spool_mem_kind {
	MP_MK_UNKNOWN = 0, MP_MK_PAGEABLE = 1, MP_MK_PINNED = 2, MP_MK_DEVICE = 3,
	MP_MK_ARRAY = 4, MP_MK_MANAGED = 5, MP_MK_DEVICE_STATIC = 6, MP_MK_MANAGED_STATIC = 7,
};

struct mp_spool_event {
	struct mp_spool_item_head head; /* MP_SI_EVENT, 96 */
	uint8_t kind;       /* enum mp_spool_kind */
	uint8_t mem_kind;   /* enum mp_spool_mem_kind */
	uint16_t flags;     /* enum mp_spool_event_flag */
	int32_t device;     /* ordinal, -1 unknown */
	uint32_t thread;    /* OS thread id (gettid), 0 unknown */
	uint32_t correlation; /* CUPTI correlation id, 0 none */
	uint32_t name;      /* string id, 0 none */
	uint32_t stack;     /* stack id, 0 none */
	uint32_t phase;     /* string id of the innermost NVTX range open on the thread, 0 none */
	uint32_t zero;
	int64_t ts_ns;      /* CLOCK_MONOTONIC */
	uint64_t address;
	uint64_t bytes;
	uint64_t stream;    /* CUDA stream handle or CUPTI stream id, 0 none */
	int64_t duration_ns; /* MP_SK_API and VMM_*: time inside the call */
	uint64_t extra;     /* per kind, above */
	uint64_t extra2;
};

struct mp_spool_string {
	struct mp_spool_item_head head;
	uint32_t id;
	uint32_t len; /* bytes of text that follow, no NUL */
};

struct mp_spool_stack {
	struct mp_spool_item_head head;
	uint32_t id;
	uint32_t depth; /* return addresses that follow, innermost first */
};

/* A loaded module (dl_iterate_phdr): enough to symbolise a pc offline. */
struct mp_spool_module {
	struct mp_spool_item_head head;
	uint32_t id;
	uint32_t path;     /* string id; the main program's is its /proc/self/exe target */
	uint64_t base;     /* load bias (dlpi_addr) */
	uint64_t start;    /* lowest address of its PT_LOAD segments */
	uint64_t end;      /* one past the highest */
	uint32_t build_id; /* string id of the GNU build id in hex, 0 none */
	uint32_t zero;
};

struct mp_spool_device {
	struct mp_spool_item_head head;
	int32_t ordinal;
	uint32_t name;     /* string id */
	uint32_t uuid;     /* string id, 0 unknown */
	uint32_t host_node; /* the GPU's nearest host NUMA node + 1, 0 unknown (was zero) */
	uint64_t total_bytes; /* global memory size, 0 unknown */
};
/*
 * Several device items may name one ordinal (the CUPTI record, and the one
 * the library writes when it learns the GPU's host node, with name, uuid and
 * total_bytes 0): a reader merges them, the known fields winning.
 */

/* A key and value (string ids): argv, host, rank variables, environment switches. */
struct mp_spool_meta {
	struct mp_spool_item_head head;
	uint32_t key;
	uint32_t value;
};

/* Last item of a complete spool. */
struct mp_spool_footer {
	struct mp_spool_item_head head;
	uint64_t n_events;  /* events written (not counting tables) */
	uint64_t n_dropped; /* events lost (buffer full, write error, disabled) */
	int64_t end_mono_ns;
	uint32_t disabled;  /* 1 when the library turned itself off */
	uint32_t zero;
};

/*
 * Meta keys the library writes (readers keep unknown keys as they are):
 *   argv      the command line, arguments joined by single spaces
 *   host      gethostname()
 *   exe       /proc/self/exe
 *   env:NAME  the value of each of RANK, LOCAL_RANK, WORLD_SIZE,
 *             OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_RANK,
 *             OMPI_COMM_WORLD_SIZE, PMI_RANK, PMI_SIZE, SLURM_PROCID,
 *             SLURM_LOCALID, SLURM_NTASKS, CUDA_VISIBLE_DEVICES,
 *             PYTORCH_NO_CUDA_MEMORY_CACHING, PYTORCH_CUDA_ALLOC_CONF,
 *             PYTORCH_ALLOC_CONF, XLA_PYTHON_CLIENT_ALLOCATOR,
 *             TF_GPU_ALLOCATOR, NCCL_CUMEM_ENABLE that is set
 *   cupti     libcupti path loaded
 *   numa_distances  the host's NUMA node distances (sysfs nodeN/distance):
 *             "N:D,D,...;N:D,..." one row per node in increasing order,
 *             the columns in the rows' order; absent when sysfs has none
 *
 * New kinds (HOST_NUMA) and the device item's host_node came without a
 * version change: an older reader skips an unknown kind (and counts it) and
 * read host_node as a zero field.
 */

#endif
