/*
 * tests/fuzz/fuzz_spool.c - fuzz target for the spool reader
 * (src/spool/reader.c): any bytes are read as a spool to its end,
 * every id an item names is looked up in the tables and the text or frames
 * found are touched.  Each input is read twice: as it is, and with every
 * block's crc32 recomputed, so that mutated items get past the checksum.
 * Aborts when an error comes back without a message or an incomplete spool
 * without its damage.  The checksum-fixed input also goes through the
 * spool importer (src/import/spool.c: joins, pairing, symbols) with a real
 * writer into a trace on a scratch directory, which must give events or an
 * error that says what was wrong.  Built with libFuzzer by 'make fuzz';
 * replayed over the corpus by 'make check' (replay_main.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "spool/reader.h"
#include "util/crc32.h"
#include "fuzz_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;
static struct fuzz_store fs;

static void cleanup(void)
{
	fuzz_store_remove(&fs);
}

static void touch_string(const struct mp_spool_reader *r, uint32_t id)
{
	size_t len, i;
	const char *s = mp_spool_reader_string(r, id, &len);

	if (!s) {
		if (len != 0)
			abort();
		return;
	}
	for (i = 0; i < len; i++)
		sink += (unsigned char)s[i];
	if (s[len] != '\0')
		abort();
}

static void touch_stack(const struct mp_spool_reader *r, uint32_t id)
{
	uint32_t depth, i;
	const uint64_t *pcs = mp_spool_reader_stack(r, id, &depth);

	if (!pcs && depth != 0)
		abort();
	if (depth > MP_SPOOL_MAX_STACK_DEPTH)
		abort();
	for (i = 0; pcs && i < depth; i++)
		sink += pcs[i];
}

static void touch_item(const struct mp_spool_reader *r, const struct mp_spool_item_head *ih)
{
	const struct mp_spool_event *ev = (const void *)ih;
	const struct mp_spool_meta *m = (const void *)ih;
	const struct mp_spool_device *d = (const void *)ih;

	switch (ih->type) {
	case MP_SI_EVENT:
		touch_string(r, ev->name);
		touch_string(r, ev->phase);
		touch_stack(r, ev->stack);
		sink += ev->address + ev->bytes + (uint64_t)ev->ts_ns + ev->extra2;
		break;
	case MP_SI_META:
		touch_string(r, m->key);
		touch_string(r, m->value);
		break;
	case MP_SI_DEVICE:
		touch_string(r, d->name);
		touch_string(r, d->uuid);
		sink += d->total_bytes;
		break;
	case MP_SI_FOOTER:
		sink += ((const struct mp_spool_footer *)ih)->n_dropped;
		break;
	default:
		abort(); /* tables and unknown items are never handed out */
	}
}

static void read_spool(const uint8_t *data, size_t size)
{
	const struct mp_spool_item_head *ih;
	struct mp_spool_reader *r;
	struct mp_error err;
	uint64_t off = 0;
	size_t i;
	FILE *f = fmemopen((void *)data, size, "rb");
	int rc;

	if (!f)
		return;
	err.msg[0] = '\0';
	if (mp_spool_reader_open(&r, f, "fuzz.mpt", &err) < 0) {
		if (!err.msg[0])
			abort();
		fclose(f);
		return;
	}
	while ((rc = mp_spool_reader_next(r, &ih, &err)) == 1)
		touch_item(r, ih);
	if (rc < 0 && !err.msg[0])
		abort();
	if (rc == 0 && !mp_spool_reader_complete(r) && !mp_spool_reader_damage(r, &off))
		abort();
	if (rc == 0 && off > size)
		abort();
	for (i = 0; i < mp_spool_reader_n_modules(r); i++) {
		const struct mp_spool_module *m = mp_spool_reader_module(r, i);

		touch_string(r, m->path);
		touch_string(r, m->build_id);
		sink += m->base + m->start + m->end;
	}
	if (mp_spool_reader_module(r, i))
		abort();
	touch_string(r, 0xffffffffu);
	touch_stack(r, 1u << 24);
	mp_spool_reader_close(r);
	fclose(f);
}

/* Recompute the crc32 of every block whose header and payload are present. */
static void fix_checksums(uint8_t *data, size_t size)
{
	size_t pos = sizeof(struct mp_spool_header);

	while (pos + sizeof(struct mp_spool_block) <= size) {
		struct mp_spool_block bh;

		memcpy(&bh, data + pos, sizeof(bh));
		if (bh.payload_bytes > size - pos - sizeof(bh))
			return;
		bh.crc32 = mp_crc32(0, data + pos + sizeof(bh), bh.payload_bytes);
		memcpy(data + pos, &bh, sizeof(bh));
		pos += sizeof(bh) + bh.payload_bytes;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	if (size == 0)
		return 0;
	read_spool(data, size);
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fix_checksums(copy, size);
	read_spool(copy, size);
	if (!fs.dir[0])
		atexit(cleanup);
	fuzz_store_prepare(&fs, "fuzz_spool");
	fuzz_run_importer(&fs, "spool", "fuzz.mpt", NULL, copy, size);
	free(copy);
	return 0;
}
