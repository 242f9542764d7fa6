/*
 * capture/activity.c - CUPTI activity buffers: hands CUPTI 1 MiB buffers,
 * walks the completed ones and turns MEMORY2, MEMORY_POOL and DEVICE
 * records into spool items; counts what CUPTI dropped.  Runs on CUPTI's
 * worker thread or on whichever thread flushes: no CUDA calls, no waiting.
 */
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "capture/inject_internal.h"

#define BUFFER_BYTES (1u << 20)

/*
 * CUPTI 12 delivered MEMORY2 as CUpti_ActivityMemory3, the first 120 bytes
 * of CUpti_ActivityMemory4: read nothing from 'source' on.
 */
#define MEMORY3_BYTES 120
_Static_assert(offsetof(CUpti_ActivityMemory4, source) == MEMORY3_BYTES,
               "CUpti_ActivityMemory4 no longer extends CUpti_ActivityMemory3");

static uint8_t mem_kind_of(CUpti_ActivityMemoryKind k)
{
	return (unsigned)k <= MP_MK_MANAGED_STATIC ? (uint8_t)k : MP_MK_UNKNOWN;
}

static int translate_memory(const CUpti_ActivityMemory4 *m, struct mp_spool_event *ev)
{
	if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
		ev->kind = MP_SK_MEM_ALLOC;
	else if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		ev->kind = MP_SK_MEM_FREE;
	else
		return 0;
	ev->mem_kind = mem_kind_of(m->memoryKind);
	ev->flags = m->isAsync ? MP_SE_ASYNC : 0;
	ev->device = (int32_t)m->deviceId;
	ev->correlation = m->correlationId;
	ev->ts_ns = (int64_t)m->timestamp;
	ev->address = m->address;
	ev->bytes = m->bytes;
	ev->stream = m->streamId == CUPTI_INVALID_STREAM_ID ? 0 : m->streamId;
	ev->extra = m->contextId;
	ev->extra2 = m->memoryPoolConfig.address;
	return 1;
}

static int translate_pool(const CUpti_ActivityMemoryPool3 *p, struct mp_spool_event *ev)
{
	switch (p->memoryPoolOperationType) {
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
		ev->kind = MP_SK_POOL_CREATED;
		ev->extra = p->releaseThreshold;
		break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
		ev->kind = MP_SK_POOL_DESTROYED;
		ev->extra = p->releaseThreshold;
		break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
		ev->kind = MP_SK_POOL_TRIMMED;
		ev->extra = p->minBytesToKeep;
		break;
	default:
		return 0;
	}
	ev->mem_kind = p->isManagedPool ? MP_MK_MANAGED : MP_MK_DEVICE;
	ev->device = (int32_t)p->deviceId;
	ev->correlation = p->correlationId;
	ev->ts_ns = (int64_t)p->timestamp;
	ev->address = p->address;
	ev->bytes = p->size;
	ev->extra2 = p->utilizedSize;
	return 1;
}

int mp_activity_translate(const CUpti_Activity *rec, struct mp_spool_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->device = -1;
	if (!rec)
		return 0;
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return translate_memory((const CUpti_ActivityMemory4 *)rec, ev);
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
		return translate_pool((const CUpti_ActivityMemoryPool3 *)rec, ev);
	default:
		return 0;
	}
}

const char *mp_activity_name(const CUpti_Activity *rec)
{
	if (!rec || rec->kind != CUPTI_ACTIVITY_KIND_MEMORY2)
		return NULL;
	return ((const CUpti_ActivityMemory4 *)rec)->name;
}

int mp_activity_translate_device(const CUpti_Activity *rec, struct mp_spool_device *dev,
                                 const char **name, char *uuid, size_t uuid_n)
{
	if (!rec || rec->kind != CUPTI_ACTIVITY_KIND_DEVICE)
		return 0;
	const CUpti_ActivityDevice5 *d = (const CUpti_ActivityDevice5 *)rec;
	memset(dev, 0, sizeof *dev);
	dev->head.type = MP_SI_DEVICE;
	dev->head.bytes = sizeof *dev;
	dev->ordinal = (int32_t)d->id;
	dev->total_bytes = d->globalMemorySize;
	*name = d->name;
	const unsigned char *b = (const unsigned char *)d->uuid.bytes;
	snprintf(uuid, uuid_n,
	         "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
	         b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
	         b[14], b[15]);
	return 1;
}

static void write_record(struct mp_spool_writer *w, const CUpti_Activity *rec)
{
	struct mp_spool_event ev;
	if (mp_activity_translate(rec, &ev)) {
		const char *name = mp_activity_name(rec);
		if (name && *name)
			ev.name = mp_spool_cstring(w, name);
		mp_spool_event(w, &ev);
		return;
	}
	struct mp_spool_device dev;
	const char *name = NULL;
	char uuid[48];
	if (mp_activity_translate_device(rec, &dev, &name, uuid, sizeof uuid)) {
		dev.name = name ? mp_spool_cstring(w, name) : 0;
		dev.uuid = mp_spool_cstring(w, uuid);
		dev.host_node = mp_numa_device_item_node(dev.ordinal);
		mp_spool_append(w, &dev, sizeof dev);
	}
}

size_t mp_activity_consume(struct mp_spool_writer *w, uint8_t *buf, size_t valid_bytes)
{
	size_t n = 0;
	CUpti_Activity *rec = NULL;
	if (!buf || !mp_cupti.ActivityGetNextRecord)
		return 0;
	/* Ends with CUPTI_ERROR_MAX_LIMIT_REACHED; INVALID_KIND means an incomplete record. */
	while (mp_cupti.ActivityGetNextRecord(buf, valid_bytes, &rec) == CUPTI_SUCCESS) {
		n++;
		if (w)
			write_record(w, rec);
	}
	return n;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *p = NULL;
	/* Never NULL if it can be helped: CUPTI drops (and counts) records then. */
	if (posix_memalign(&p, 8, BUFFER_BYTES) != 0)
		p = NULL;
	*buffer = p;
	*size = p ? BUFFER_BYTES : 0;
	*max_records = 0;
}

static void note_dropped(struct mp_spool_writer *w)
{
	size_t n_dropped = 0;
	if (mp_cupti.ActivityGetNumDroppedRecords(NULL, 0, &n_dropped) != CUPTI_SUCCESS ||
	    n_dropped == 0)
		return;
	mp_spool_count_dropped(w, n_dropped);
	struct mp_spool_event ev;
	memset(&ev, 0, sizeof ev);
	ev.kind = MP_SK_DROPPED;
	ev.device = -1;
	ev.ts_ns = mp_capture_now();
	ev.extra = n_dropped;
	ev.name = mp_spool_cstring(w, "CUPTI activity records dropped (no buffer)");
	mp_spool_event(w, &ev);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid_bytes)
{
	(void)ctx;
	(void)stream_id;
	(void)size;
	mp_capture_enter();
	struct mp_spool_writer *w = mp_capture_accepts_activity() ? mp_capture_spool() : NULL;
	if (w && buffer) {
		mp_activity_consume(w, buffer, valid_bytes);
		note_dropped(w);
	}
	mp_capture_leave();
	free(buffer);
}

CUptiResult mp_activity_register(void)
{
	return mp_cupti.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
}

static const struct {
	CUpti_ActivityKind kind;
	const char *name;
} kinds[] = {
        {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE"},
        {CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2"},
        {CUPTI_ACTIVITY_KIND_MEMORY_POOL, "MEMORY_POOL"},
};

CUptiResult mp_activity_enable(int on, const char **failed_kind)
{
	CUptiResult first = CUPTI_SUCCESS;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		CUptiResult r;
		if (!on)
			r = mp_cupti.ActivityDisable(kinds[i].kind);
		else if (on == 2 && kinds[i].kind == CUPTI_ACTIVITY_KIND_DEVICE)
			r = mp_cupti.ActivityEnableAndDump(
			        kinds[i].kind); /* devices known already */
		else
			r = mp_cupti.ActivityEnable(kinds[i].kind);
		if (r != CUPTI_SUCCESS && first == CUPTI_SUCCESS) {
			first = r;
			*failed_kind = kinds[i].name;
			if (on)
				return r;
		}
	}
	return first;
}
