/*
 * import/torch_merge.c - the snapshot of a recorded PyTorch process found
 * beside its spool and read (torch.c's reader), and the spool's device
 * allocations sorted while they are converted: PyTorch's segments (a
 * snapshot segment's address, or a stack through libc10_cuda) stay
 * segments; the rest is memory PyTorch cannot see, labelled by the library
 * its stack passes through (NCCL, cuBLAS, cuDNN, other).  Writes nothing
 * but API names; torch_merge_write.c writes the blocks.
 */
#include "import/torch_merge.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

#define MAP_BIT (UINT64_C(1) << 63)

static uint64_t start_key(int32_t device, uint64_t address)
{
	return ((uint64_t)(uint32_t)device << 48) ^ address;
}

/* Every address where the snapshot says PyTorch had a segment: final ones, traced ones. */
static int note_starts(struct mp_torch_merge *m)
{
	size_t i, j;

	for (i = 0; i < m->n_devices; i++) {
		const struct tp_device *d = &m->devices[i];

		for (j = 0; j < d->n_final_segments; j++)
			if (mp_intmap_put(&m->starts,
			                  start_key(d->ordinal, d->final_segments[j].addr), 1) < 0)
				return MP_ENOMEM;
		for (j = 0; j < d->n_entries; j++)
			if ((d->entries[j].action == TP_SEGMENT_ALLOC ||
			     d->entries[j].action == TP_SEGMENT_MAP) &&
			    mp_intmap_put(&m->starts, start_key(d->ordinal, d->entries[j].addr),
			                  1) < 0)
				return MP_ENOMEM;
	}
	return 0;
}

/* The memprof_history dict the sitecustomize adds: ring size, reason, whose settings. */
static void read_history_info(struct mp_torch_merge *m)
{
	const struct mp_pk *h = mp_pk_get(mp_torch_doc_root(m->doc), "memprof_history"), *v;
	int64_t n;

	m->max_entries = -1;
	if (mp_pk_int(mp_pk_get(h, "max_entries"), &n) && n > 0)
		m->max_entries = n;
	v = mp_pk_get(h, "user");
	m->user_history = v && v->type == MP_PK_BOOL && v->v.i;
	if (m->user_history)
		m->max_entries = -1; /* the program's own ring size is not known */
	v = mp_pk_get(h, "reason");
	if (v && v->type == MP_PK_STR)
		snprintf(m->reason, sizeof(m->reason), "%.*s", (int)v->n, v->v.s);
}

/* DIR/torch-PID.pickle for the spool at path, malloc'd. */
static char *snapshot_path(const char *spool_path, int64_t pid)
{
	char *copy = strdup(spool_path), *out = NULL;

	if (copy && asprintf(&out, "%s/torch-%" PRId64 ".pickle", dirname(copy), pid) < 0)
		out = NULL;
	free(copy);
	return out;
}

/* Read the snapshot at m->path; 1 read, 0 not (noted), MP_ENOMEM. */
static int load(struct mp_spool_in *in, struct mp_torch_merge *m)
{
	struct mp_error err = {0};
	FILE *f = fopen(m->path, "rb");
	int rc;

	if (!f) {
		if (errno != ENOENT)
			mp_import_note(in->c->st, "'%s': PyTorch's history not merged: %s", m->path,
			               strerror(errno));
		return 0;
	}
	rc = mp_torch_doc_load(&m->doc, f, m->path, &err);
	fclose(f);
	if (rc == MP_ENOMEM)
		return mp_err(in->c->err, MP_ENOMEM, "out of memory reading '%s'", m->path);
	if (rc < 0) {
		mp_import_note(in->c->st, "PyTorch's history not merged: %s", err.msg);
		return 0;
	}
	m->devices = mp_torch_doc_devices(m->doc, &m->n_devices);
	read_history_info(m);
	return note_starts(m) < 0 ? mp_err(in->c->err, MP_ENOMEM, "out of memory") : 1;
}

int mp_torch_merge_open(struct mp_spool_in *in)
{
	struct mp_torch_merge *m;
	int rc;

	in->merge = NULL;
	if (!in->torch_segments || !in->c->file_path)
		return 0;
	if (!(m = calloc(1, sizeof(*m))))
		return mp_err(in->c->err, MP_ENOMEM, "out of memory");
	mp_intmap_init(&m->starts);
	mp_intmap_init(&m->open);
	if (!(m->path = snapshot_path(in->c->file_path, mp_spool_reader_header(in->r)->pid)))
		rc = mp_err(in->c->err, MP_ENOMEM, "out of memory");
	else
		rc = load(in, m);
	if (rc == 1)
		in->merge = m;
	else
		mp_torch_merge_free(m);
	return rc < 0 ? rc : 0;
}

/* The library a module path names, as an origin; -1 none known. */
static int origin_of_module(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (strncmp(base, "libnccl", 7) == 0)
		return TM_NCCL;
	if (strncmp(base, "libcublas", 9) == 0)
		return TM_CUBLAS;
	if (strncmp(base, "libcudnn", 8) == 0)
		return TM_CUDNN;
	if (strncmp(base, "libc10_cuda", 11) == 0 || strncmp(base, "libtorch_cuda", 13) == 0)
		return TM_TORCH;
	return -1;
}

/* The first known library of the stack, innermost frame first; -1 none (or no stack). */
static int origin_of_stack(const struct mp_spool_in *in, uint32_t sid)
{
	size_t nm = mp_spool_reader_n_modules(in->r), j;
	const uint64_t *pcs;
	uint32_t depth = 0, k;
	char path[4096];
	int o;

	if (!sid || !(pcs = mp_spool_reader_stack(in->r, sid, &depth)))
		return -1;
	for (k = 0; k < depth; k++)
		for (j = 0; j < nm; j++) {
			const struct mp_spool_module *mod = mp_spool_reader_module(in->r, j);

			if (pcs[k] < mod->start || pcs[k] >= mod->end)
				continue;
			if ((o = origin_of_module(
			             mp_spool_text(in, mod->path, path, sizeof(path)))) >= 0)
				return o;
			break;
		}
	return -1;
}

/* "cudaMalloc (NCCL)": who's API with its origin, interned. */
static int64_t labelled_api(struct mp_spool_in *in, const struct mp_spool_event *who, int origin)
{
	static const char *const names[] = {"NCCL", "cuBLAS workspace", "cuDNN workspace",
	                                    "outside PyTorch"};
	char api[256], text[320];
	int len;
	int64_t id;

	mp_spool_text(in, who->kind == MP_SK_API ? who->name : 0, api, sizeof(api));
	if (who->kind == MP_SK_VMM_MAP)
		snprintf(api, sizeof(api), "cuMemMap");
	len = snprintf(text, sizeof(text), "%s (%s)", api[0] ? api : "device memory",
	               names[origin]);
	id = mp_writer_api(in->c->w, text, (size_t)len);
	if (id < 0) {
		mp_err_copy(in->c->err, mp_writer_error(in->c->w));
		return MP_EIO;
	}
	return id;
}

int mp_torch_merge_outside(struct mp_spool_in *in, const struct mp_spool_event *who,
                           uint64_t address, int32_t device, int64_t size, int64_t *api_id)
{
	struct mp_torch_merge *m = in->merge;
	int origin = origin_of_stack(in, who->stack);

	if (origin == TM_TORCH)
		return 0;
	if (origin < 0 && mp_intmap_get(&m->starts, start_key(device, address), NULL))
		return 0;
	if (origin < 0)
		origin = TM_OTHER;
	m->n_outside[origin]++;
	m->bytes_outside[origin] += size;
	if ((*api_id = labelled_api(in, who, origin)) < 0)
		return (int)*api_id;
	return 1;
}

int mp_torch_merge_map_outside(struct mp_spool_in *in, const struct mp_spool_event *who,
                               int64_t size, int64_t *api_id)
{
	struct mp_torch_merge *m = in->merge;
	int origin = origin_of_stack(in, who->stack);

	if (origin < 0 || origin == TM_TORCH || origin == TM_OTHER)
		return 0;
	m->n_outside[origin]++;
	m->bytes_outside[origin] += size;
	if ((*api_id = labelled_api(in, who, origin)) < 0)
		return (int)*api_id;
	return 1;
}

static int open_segment(struct mp_torch_merge *m, uint64_t key, const struct memprof_event *ev)
{
	if (mp_array_reserve((void **)&m->segs, &m->cap_segs, m->n_segs + 1, sizeof(*m->segs)) < 0)
		return MP_ENOMEM;
	m->segs[m->n_segs] =
	        (struct tm_segment){ev->address, ev->size_bytes, ev->ts_ns, INT64_MAX, ev->device};
	return mp_intmap_put(&m->open, key, ++m->n_segs) < 0 ? MP_ENOMEM : 0;
}

int mp_torch_merge_seen(struct mp_torch_merge *m, const struct memprof_event *ev)
{
	uint64_t key = (uint64_t)ev->alloc_id, at;

	switch (ev->op) {
	case MEMPROF_OP_MAP:
		key |= MAP_BIT; /* fall through */
	case MEMPROF_OP_RESERVE:
		return open_segment(m, key, ev);
	case MEMPROF_OP_UNMAP:
		key |= MAP_BIT; /* fall through */
	case MEMPROF_OP_RELEASE:
		if (mp_intmap_get(&m->open, key, &at)) {
			m->segs[at - 1].t1 = ev->ts_ns;
			mp_intmap_del(&m->open, key);
		}
		return 0;
	default:
		return 0;
	}
}

void mp_torch_merge_free(struct mp_torch_merge *m)
{
	if (!m)
		return;
	mp_torch_doc_free(m->doc);
	mp_intmap_free(&m->starts);
	mp_intmap_free(&m->open);
	free(m->segs);
	free(m->path);
	free(m);
}
