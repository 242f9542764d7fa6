/*
 * cmd/replay_job.c - the job side of 'memprof replay --mpi' (replay_job.h):
 * ranks > 0 write stderr to a temporary file and stdout nowhere; when they
 * failed of their own, rank 0 shows what they wrote, each distinct text
 * once, prefixed with the ranks that wrote it; statuses
 * and option hashes agreed by allreduce; results and notes packed into
 * bytes (replay/pack.c), gathered to rank 0 and unpacked there.
 */
#include "cmd/cmd.h"
#include "cmd/replay_job.h"
#include "cmd/replay_mpi.h"
#include "replay/pack.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Ranks > 0: stdout to /dev/null, stderr to a temporary file. */
static void quiet(struct mp_replay_job *j)
{
	int null = open("/dev/null", O_WRONLY);

	fflush(stdout);
	fflush(stderr);
	j->captured = tmpfile();
	j->real_stdout = dup(1);
	j->real_stderr = dup(2);
	if (null >= 0) {
		dup2(null, 1);
		close(null);
	}
	if (j->captured)
		dup2(fileno(j->captured), 2);
}

int mp_replay_job_start(struct mp_replay_job *j)
{
	struct mp_error err = {0};

	memset(j, 0, sizeof *j);
	j->real_stderr = j->real_stdout = -1;
	if (mp_mpi_start(&j->g, &err) < 0)
		return mp_cmd_fail(&mp_cmd_replay, &err);
	j->started = 1;
	if (j->g.rank > 0)
		quiet(j);
	return 0;
}

int64_t mp_replay_job_max(struct mp_replay_job *j, int64_t v)
{
	int64_t x = v;

	return j->g.allreduce_max(j->g.ctx, &x, 1) < 0 ? v : x;
}

/* Rank 0: "1, 3" the ranks whose status is not 0, other than 0 itself. */
static void name_failed(struct mp_replay_job *j, int rc)
{
	int32_t mine = rc;
	unsigned char *all = NULL;
	size_t *lens = calloc((size_t)j->g.size, sizeof *lens);
	char list[256] = "";
	size_t len = 0;

	if (mp_mpi_gather(&j->g, &mine, sizeof mine, &all, lens) == 0 && all) {
		for (int r = 1; r < j->g.size && len + 16 < sizeof list; r++) {
			int32_t st;
			memcpy(&st, all + (size_t)r * sizeof st, sizeof st);
			if (st > 0)
				len += (size_t)snprintf(list + len, sizeof list - len, "%s%d",
				                        len ? ", " : "", r);
		}
		if (len)
			mp_cmd_error(&mp_cmd_replay, "failed on rank%s %s (their messages follow)",
			             strchr(list, ',') ? "s" : "", list);
	}
	free(all);
	free(lens);
}

int mp_replay_job_status(struct mp_replay_job *j, int rc)
{
	int64_t all;

	if (rc > 0 && !j->own_rc)
		j->own_rc = rc;
	all = mp_replay_job_max(j, rc > 0 ? rc : 0);
	if (all > 0 && j->g.size > 1)
		name_failed(j, rc > 0 ? rc : 0);
	return all > 0 ? (int)all : rc < 0 ? rc : 0;
}

int mp_replay_job_same(struct mp_replay_job *j, uint64_t h)
{
	int64_t v[2] = {(int64_t)(h >> 2), -(int64_t)(h >> 2)};

	if (j->g.allreduce_max(j->g.ctx, v, 2) < 0)
		return mp_cmd_error(&mp_cmd_replay, "MPI failed comparing the ranks' options");
	if (v[0] == -v[1])
		return 0;
	if (j->g.rank == 0)
		mp_cmd_usage(&mp_cmd_replay,
		             "the ranks were not given the same replay (pools, pool options, "
		             "backend, baseline, capacity, device, verify, or memprof build): run "
		             "the same command line on every rank");
	return MP_EXIT_USAGE;
}

int mp_replay_job_gather(struct mp_replay_job *j, struct mp_replay_result **results,
                         size_t *n_results, int **ranks, char **notes, size_t *n_notes,
                         size_t max_notes, const char *backend)
{
	size_t size = 0, *lens = calloc((size_t)j->g.size, sizeof *lens);
	unsigned char *mine = mp_replay_pack(*results, *n_results, notes, *n_notes, &size),
	              *all = NULL;
	struct mp_replay_unpacked u = {.notes = calloc(max_notes + 1, sizeof(char *)),
	                               .max_notes = max_notes};
	int64_t ok = mine && lens && u.notes ? 0 : 1;
	int rc = -1;

	/* Every rank goes to the gather only when every rank could pack. */
	if (mp_replay_job_max(j, ok) == 0 && mp_mpi_gather(&j->g, mine, size, &all, lens) == 0)
		rc = j->g.rank == 0 ? mp_replay_unpack(all, lens, j->g.size, backend, &u) : 0;
	if (rc == 0 && j->g.rank == 0) {
		free(*results);
		free(*ranks);
		for (size_t i = 0; i < *n_notes; i++)
			free(notes[i]);
		memcpy(notes, u.notes, u.n_notes * sizeof *notes);
		*results = u.results;
		*ranks = u.ranks;
		*n_results = u.n_results;
		*n_notes = u.n_notes;
		u.results = NULL;
		u.ranks = NULL;
		u.n_notes = 0;
	}
	for (size_t i = 0; i < u.n_notes; i++)
		free(u.notes[i]);
	free(u.notes);
	free(u.results);
	free(u.ranks);
	free(mine);
	free(all);
	free(lens);
	return rc;
}

/* Ranks > 0: stdout and stderr back, and what went to stderr when it failed of its own (malloc'd).
 */
static char *restore(struct mp_replay_job *j, size_t *len)
{
	char *text = NULL;
	long n;

	fflush(stdout);
	fflush(stderr);
	if (j->real_stdout >= 0) {
		dup2(j->real_stdout, 1);
		close(j->real_stdout);
	}
	if (j->real_stderr >= 0) {
		dup2(j->real_stderr, 2);
		close(j->real_stderr);
	}
	*len = 0;
	if (!j->captured)
		return NULL;
	if (j->own_rc && fseek(j->captured, 0, SEEK_END) == 0 && (n = ftell(j->captured)) > 0 &&
	    (text = malloc((size_t)n))) {
		rewind(j->captured);
		*len = fread(text, 1, (size_t)n, j->captured);
	}
	fclose(j->captured);
	j->captured = NULL;
	return text;
}

/* Rank 0: text (n bytes) with every line prefixed by who ("rank 1: ", "ranks 1, 2: "). */
static void print_prefixed(const char *who, const char *text, size_t n)
{
	for (size_t at = 0; at < n;) {
		const char *nl = memchr(text + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (text + at)) : n - at;

		fprintf(stderr, "%s: %.*s\n", who, (int)len, text + at);
		at += len + 1;
	}
}

/* Rank 0: each distinct text of the ranks > 0 once, with the ranks that wrote it. */
static void show_texts(const struct mp_replay_job *j, const unsigned char *all, const size_t *lens)
{
	size_t *off = calloc((size_t)j->g.size + 1, sizeof *off);
	char *shown = calloc((size_t)j->g.size + 1, 1), who[256];

	for (int r = 1; off && r < j->g.size; r++)
		off[r] = off[r - 1] + lens[r - 1];
	for (int r = 1; off && shown && r < j->g.size; r++) {
		size_t len = 0;
		int n = 0;

		if (!lens[r] || shown[r])
			continue;
		for (int q = r; q < j->g.size; q++)
			if (!shown[q] && lens[q] == lens[r] &&
			    !memcmp(all + off[q], all + off[r], lens[r])) {
				shown[q] = 1;
				if (len + 16 < sizeof who)
					len += (size_t)snprintf(who + len, sizeof who - len, "%s%d",
					                        n ? ", " : "", q);
				n++;
			}
		memmove(who + (n > 1 ? 6 : 5), who, len + 1);
		memcpy(who, n > 1 ? "ranks " : "rank ", n > 1 ? 6 : 5);
		print_prefixed(who, (const char *)all + off[r], lens[r]);
	}
	free(off);
	free(shown);
}

void mp_replay_job_end(struct mp_replay_job *j)
{
	size_t len = 0, *lens;
	char *text = NULL;
	unsigned char *all = NULL;

	if (!j->started)
		return;
	if (j->g.rank > 0)
		text = restore(j, &len);
	lens = calloc((size_t)j->g.size, sizeof *lens);
	/* The ranks' own messages are shown by rank 0, each distinct one once. */
	if (lens && j->g.size > 1 && mp_mpi_gather(&j->g, text ? text : "", len, &all, lens) == 0 &&
	    all)
		show_texts(j, all, lens);
	free(all);
	free(lens);
	free(text);
	mp_mpi_stop();
	j->started = 0;
}
