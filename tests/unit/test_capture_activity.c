/*
 * tests/unit/test_capture_activity.c - activity records of the injected
 * library: hand-built MEMORY2 (CUpti_ActivityMemory4), MEMORY_POOL
 * (CUpti_ActivityMemoryPool3), DEVICE (CUpti_ActivityDevice5) and MARKER
 * records in one buffer, walked by the real cuptiActivityGetNextRecord of
 * libcupti (loaded through cupti_load), translated and written to a spool.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "capture/inject_internal.h"
#include "capture_helpers.h"

static _Alignas(8) uint8_t buffer[8192];
static size_t used;

static void *add_record(size_t bytes)
{
	cr_assert_leq(used + bytes, sizeof buffer);
	void *p = buffer + used;
	memset(p, 0, bytes);
	used += bytes;
	return p;
}

static void load_cupti(void)
{
	char err[512];
	int rc = mp_cupti_load(th_cupti_path(), err, sizeof err);
	cr_assert_eq(rc, 0, "load CUPTI: %s", err);
}

static CUpti_ActivityMemory4 *add_memory(CUpti_ActivityMemoryOperationType op,
                                         CUpti_ActivityMemoryKind kind, uint64_t address,
                                         uint64_t bytes)
{
	CUpti_ActivityMemory4 *m = add_record(sizeof *m);
	m->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m->memoryOperationType = op;
	m->memoryKind = kind;
	m->correlationId = 77;
	m->address = address;
	m->bytes = bytes;
	m->timestamp = 123456789012ull;
	m->PC = 0x401000;
	m->processId = 4242;
	m->deviceId = 1;
	m->contextId = 9;
	m->streamId = 13;
	m->isAsync = 1;
	m->memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	m->memoryPoolConfig.address = 0x7f0000000000ull;
	m->memoryPoolConfig.releaseThreshold = 1u << 30;
	m->memoryPoolConfig.pool.size = 64u << 20;
	m->memoryPoolConfig.utilizedSize = 2u << 20;
	m->source = "/opt/lib/libtorch_cuda.so";
	return m;
}

static CUpti_ActivityMemoryPool3 *add_pool(CUpti_ActivityMemoryPoolOperationType op)
{
	CUpti_ActivityMemoryPool3 *p = add_record(sizeof *p);
	p->kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	p->memoryPoolOperationType = op;
	p->memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	p->correlationId = 88;
	p->processId = 4242;
	p->deviceId = 2;
	p->minBytesToKeep = 4096;
	p->address = 0x7f1000000000ull;
	p->size = 32u << 20;
	p->releaseThreshold = 8u << 20;
	p->timestamp = 222;
	p->utilizedSize = 1u << 20;
	p->isManagedPool = 0;
	return p;
}

static CUpti_ActivityDevice5 *add_device(void)
{
	CUpti_ActivityDevice5 *d = add_record(sizeof *d);
	d->kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d->globalMemorySize = 80ull << 30;
	d->id = 3;
	for (int i = 0; i < 16; i++)
		d->uuid.bytes[i] = (char)(0x10 + i);
	d->name = "NVIDIA H100 80GB HBM3";
	return d;
}

static CUpti_ActivityMarker2 *add_marker(void)
{
	CUpti_ActivityMarker2 *m = add_record(sizeof *m);
	m->kind = CUPTI_ACTIVITY_KIND_MARKER;
	m->flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
	m->timestamp = 5;
	m->id = 1;
	m->name = "ignored";
	return m;
}

/* Walk the buffer with CUPTI; records[] gets each record, returns how many. */
static size_t walk(CUpti_Activity **records, size_t max, CUptiResult *last)
{
	size_t n = 0;
	CUpti_Activity *rec = NULL;
	CUptiResult r;
	while ((r = mp_cupti.ActivityGetNextRecord(buffer, used, &rec)) == CUPTI_SUCCESS) {
		cr_assert_lt(n, max);
		records[n++] = rec;
	}
	*last = r;
	return n;
}

Test(capture_activity, memory_pool_device_and_marker_records_through_cupti)
{
	load_cupti();
	used = 0;
	add_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
	           CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f2000000000ull, 1u << 20);
	add_marker();
	add_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED,
	           0x7f2000000000ull, 1u << 20);
	add_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED);
	add_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED);
	add_device();

	CUpti_Activity *recs[16];
	CUptiResult last;
	size_t n = walk(recs, 16, &last);
	cr_assert_eq(n, 6, "CUPTI walked %zu records", n);
	cr_assert_eq(last, CUPTI_ERROR_MAX_LIMIT_REACHED, "end of buffer: %d", (int)last);

	struct mp_spool_event ev;
	cr_assert_eq(mp_activity_translate(recs[0], &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_MEM_ALLOC);
	cr_assert_eq(ev.mem_kind, MP_MK_DEVICE);
	cr_assert_eq(ev.flags, MP_SE_ASYNC);
	cr_assert_eq(ev.device, 1);
	cr_assert_eq(ev.correlation, 77);
	cr_assert_eq(ev.ts_ns, 123456789012ll);
	cr_assert_eq(ev.address, 0x7f2000000000ull);
	cr_assert_eq(ev.bytes, 1u << 20);
	cr_assert_eq(ev.stream, 13);
	cr_assert_eq(ev.extra, 9, "context id");
	cr_assert_eq(ev.extra2, 0x7f0000000000ull, "pool address");
	cr_assert_eq(ev.thread, 0);
	cr_assert_eq(ev.name, 0);

	/* A marker is not ours: skipped. */
	cr_assert_eq(mp_activity_translate(recs[1], &ev), 0);

	cr_assert_eq(mp_activity_translate(recs[2], &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_MEM_FREE);
	cr_assert_eq(ev.mem_kind, MP_MK_MANAGED);

	cr_assert_eq(mp_activity_translate(recs[3], &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_POOL_CREATED);
	cr_assert_eq(ev.mem_kind, MP_MK_DEVICE);
	cr_assert_eq(ev.device, 2);
	cr_assert_eq(ev.correlation, 88);
	cr_assert_eq(ev.ts_ns, 222);
	cr_assert_eq(ev.address, 0x7f1000000000ull);
	cr_assert_eq(ev.bytes, 32u << 20);
	cr_assert_eq(ev.extra, 8u << 20, "release threshold");
	cr_assert_eq(ev.extra2, 1u << 20, "utilized");

	cr_assert_eq(mp_activity_translate(recs[4], &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_POOL_TRIMMED);
	cr_assert_eq(ev.extra, 4096, "min bytes to keep");

	/* The device record is a table item, not an event. */
	cr_assert_eq(mp_activity_translate(recs[5], &ev), 0);
	struct mp_spool_device dev;
	const char *name = NULL;
	char uuid[48];
	cr_assert_eq(mp_activity_translate_device(recs[5], &dev, &name, uuid, sizeof uuid), 1);
	cr_assert_eq(dev.ordinal, 3);
	cr_assert_eq(dev.total_bytes, 80ull << 30);
	cr_assert_str_eq(name, "NVIDIA H100 80GB HBM3");
	cr_assert_str_eq(uuid, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
	cr_assert_eq(mp_activity_translate_device(recs[0], &dev, &name, uuid, sizeof uuid), 0);
}

Test(capture_activity, every_memory_kind_and_bad_values)
{
	static const struct {
		CUpti_ActivityMemoryKind cupti;
		uint8_t ours;
	} kinds[] = {
	        {CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN, MP_MK_UNKNOWN},
	        {CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, MP_MK_PAGEABLE},
	        {CUPTI_ACTIVITY_MEMORY_KIND_PINNED, MP_MK_PINNED},
	        {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, MP_MK_DEVICE},
	        {CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, MP_MK_ARRAY},
	        {CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, MP_MK_MANAGED},
	        {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, MP_MK_DEVICE_STATIC},
	        {CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC, MP_MK_MANAGED_STATIC},
	        {(CUpti_ActivityMemoryKind)99, MP_MK_UNKNOWN},
	};
	struct mp_spool_event ev;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		used = 0;
		CUpti_ActivityMemory4 *m = add_memory(
		        CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, kinds[i].cupti, 0x1000, 8);
		cr_assert_eq(mp_activity_translate((CUpti_Activity *)m, &ev), 1);
		cr_assert_eq(ev.mem_kind, kinds[i].ours, "kind %d", (int)kinds[i].cupti);
	}
	used = 0;
	CUpti_ActivityMemory4 *m = add_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID,
	                                      CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x1000, 8);
	cr_assert_eq(mp_activity_translate((CUpti_Activity *)m, &ev), 0, "invalid operation");
	m->memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m->streamId = CUPTI_INVALID_STREAM_ID;
	m->isAsync = 0;
	cr_assert_eq(mp_activity_translate((CUpti_Activity *)m, &ev), 1);
	cr_assert_eq(ev.stream, 0, "no stream");
	cr_assert_eq(ev.flags, 0);
	CUpti_ActivityMemoryPool3 *p =
	        add_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED);
	p->isManagedPool = 1;
	cr_assert_eq(mp_activity_translate((CUpti_Activity *)p, &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_POOL_DESTROYED);
	cr_assert_eq(ev.mem_kind, MP_MK_MANAGED);
	p->memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_INVALID;
	cr_assert_eq(mp_activity_translate((CUpti_Activity *)p, &ev), 0);
	cr_assert_eq(mp_activity_translate(NULL, &ev), 0);
}

/* A CUPTI 12 record (CUpti_ActivityMemory3): 120 bytes, nothing after them is read. */
Test(capture_activity, cupti12_memory3_record)
{
	used = 0;
	add_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
	           0xabc000, 4096);
	/* An exact 120-byte heap block: a read past it is an error under ASan. */
	unsigned char *rec = malloc(120);
	cr_assert_not_null(rec);
	memcpy(rec, buffer, 120);
	struct mp_spool_event ev;
	cr_assert_eq(mp_activity_translate((const CUpti_Activity *)rec, &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_MEM_FREE);
	cr_assert_eq(ev.mem_kind, MP_MK_PINNED);
	cr_assert_eq(ev.address, 0xabc000);
	cr_assert_eq(ev.bytes, 4096);
	cr_assert_eq(ev.correlation, 77);
	cr_assert_eq(ev.extra2, 0x7f0000000000ull, "memoryPoolConfig.address, byte 88");
	cr_assert_null(mp_activity_name((const CUpti_Activity *)rec));
	free(rec);
}

/* mp_activity_consume writes what the buffer holds to a spool; read it back. */
Test(capture_activity, consume_writes_events_devices_and_names)
{
	load_cupti();
	used = 0;
	CUpti_ActivityMemory4 *st =
	        add_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
	                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, 0x5000, 256);
	st->name = "g_table";
	add_marker();
	add_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED);
	add_device();

	char dir[256], path[512];
	th_tmpdir(dir, sizeof dir);
	struct mp_spool_writer *w = th_open_writer(dir, path, sizeof path);
	cr_assert_eq(mp_activity_consume(w, buffer, used), 4);
	cr_assert_eq(mp_spool_writer_close(w, 1000, 0), 0);

	struct th_spool s;
	th_read_spool(path, &s);
	cr_assert_null(s.error, "%s", s.error);
	cr_assert_eq(s.n_events, 2);
	cr_assert_eq(s.events[0].kind, MP_SK_MEM_ALLOC);
	cr_assert_eq(s.events[0].mem_kind, MP_MK_DEVICE_STATIC);
	cr_assert_str_eq(th_str(&s, s.events[0].name), "g_table");
	cr_assert_eq(s.events[1].kind, MP_SK_POOL_CREATED);
	cr_assert_eq(s.n_devices, 1);
	cr_assert_eq(s.devices[0].ordinal, 3);
	cr_assert_eq(s.devices[0].total_bytes, 80ull << 30);
	cr_assert_str_eq(th_str(&s, s.devices[0].name), "NVIDIA H100 80GB HBM3");
	cr_assert_str_eq(th_str(&s, s.devices[0].uuid), "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
	cr_assert(s.has_footer);
	th_free_spool(&s);
	th_rmdir(dir);
}
