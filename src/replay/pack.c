/*
 * replay/pack.c - a rank's results and notes packed into bytes for the
 * gather of 'replay --mpi', and the job's arrays unpacked from every
 * rank's bytes on rank 0 (replay/pack.h).  Checks the bytes it unpacks.
 */
#include "replay/pack.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* [n_results, n_notes] int32, the results (backend NULL), the notes each NUL-ended. */
unsigned char *mp_replay_pack(const struct mp_replay_result *res, size_t n_res, char *const *notes,
                              size_t n_notes, size_t *size)
{
	size_t n = 8 + n_res * sizeof *res, at;
	int32_t head[2] = {(int32_t)n_res, (int32_t)n_notes};
	unsigned char *buf;

	for (size_t i = 0; i < n_notes; i++)
		n += strlen(notes[i]) + 1;
	if (!(buf = malloc(n)))
		return NULL;
	memcpy(buf, head, 8);
	at = 8;
	for (size_t i = 0; i < n_res; i++, at += sizeof *res) {
		struct mp_replay_result r = res[i];
		r.backend = NULL; /* a pointer: meaningless in another process */
		memcpy(buf + at, &r, sizeof r);
	}
	for (size_t i = 0; i < n_notes; i++) {
		size_t len = strlen(notes[i]) + 1;
		memcpy(buf + at, notes[i], len);
		at += len;
	}
	*size = n;
	return buf;
}

/* Appends rank r's len bytes at p to u; -1 when they are not a packed rank. */
static int unpack(struct mp_replay_unpacked *u, int r, const unsigned char *p, size_t len,
                  const char *backend)
{
	int32_t head[2];
	size_t at = 8;

	if (len < 8)
		return -1;
	memcpy(head, p, 8);
	if (head[0] < 0 || head[1] < 0 || (size_t)head[0] > (len - 8) / sizeof *u->results)
		return -1;
	for (int32_t i = 0; i < head[0]; i++, at += sizeof *u->results) {
		memcpy(&u->results[u->n_results], p + at, sizeof *u->results);
		u->results[u->n_results].backend = backend;
		u->ranks[u->n_results++] = r;
	}
	for (int32_t i = 0; i < head[1]; i++) {
		const char *s = (const char *)p + at;
		size_t n = strnlen(s, len - at);
		char *note;

		if (at + n >= len)
			return -1;
		at += n + 1;
		if (u->n_notes < u->max_notes && (note = malloc(n + 32))) {
			snprintf(note, n + 32, "rank %d: %s", r, s);
			u->notes[u->n_notes++] = note;
		}
	}
	return 0;
}

int mp_replay_unpack(const unsigned char *all, const size_t *lens, int n_ranks, const char *backend,
                     struct mp_replay_unpacked *u)
{
	size_t max_results = 0, at = 0;
	int rc = 0;

	for (int r = 0; r < n_ranks; r++)
		max_results += lens[r] / sizeof *u->results + 1;
	u->results = calloc(max_results, sizeof *u->results);
	u->ranks = calloc(max_results, sizeof *u->ranks);
	if (!u->results || !u->ranks)
		return -1;
	for (int r = 0; r < n_ranks && rc == 0; r++) {
		rc = unpack(u, r, all + at, lens[r], backend);
		at += lens[r];
	}
	return rc;
}
