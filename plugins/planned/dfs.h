/*
 * plugins/planned/dfs.h - the depth-first search behind planned_search: is
 * there a placement within cap bytes?  Shared by dfs.c (the search) and
 * search.c (orderings, node limits, the capacities asked about).
 */
#ifndef MEMPROF_PLUGIN_PLANNED_DFS_H
#define MEMPROF_PLUGIN_PLANNED_DFS_H

#include "planned.h"

enum dfs_result {
	DFS_FOUND,   /* sol holds a placement within cap */
	DFS_NONE,    /* proved: none exists */
	DFS_ABORTED, /* node limit reached */
	DFS_EXPIRED, /* deadline passed */
	DFS_FAILED,  /* out of memory */
};

struct dfs_change {
	uint32_t id;
	uint64_t old;
};

struct dfs_key {
	double k[3]; /* compared in turn, larger first */
	uint32_t item, id;
};

struct dfs_undo {
	struct dfs_change *v;
	size_t n, cap;
};

struct dfs {
	const struct planned_problem *pb;
	uint64_t cap;           /* the capacity being decided */
	const char *preorder;   /* 3 letters: W lifetime, A area, T fullest section's bytes */
	uint32_t *rank;         /* per buffer: its place in its part's preorder */
	struct dfs_key *keys;   /* scratch for ranking */
	uint64_t *off;          /* per buffer: offset, or PLANNED_UNPLACED */
	uint64_t *min_off;      /* per buffer: lowest offset above its placed neighbours */
	uint64_t *sol;          /* written at each placement: the last found placement */
	uint64_t *floor, *left; /* per section: lowest free offset, unplaced bytes */
	uint32_t *cuts;         /* per section boundary: unplaced buffers across it */
	int32_t *cover;         /* scratch, all zero between placements */
	/* per section, its unplaced members first: live[sec_start[sec] .. + n_live[sec]) */
	uint32_t *live, *n_live;
	uint32_t *where; /* per (buffer, section) from span_start[buffer]: its slot in live */
	uint32_t *span_start;
	struct dfs_undo undo_min, undo_floor;
	int64_t nodes_left;     /* this run's node limit */
	uint64_t n_nodes;       /* nodes visited since dfs_init */
	uint64_t n_placed;      /* placements made since dfs_init */
	uint64_t *lifted;       /* per buffer: the placement that last raised its min_off */
	uint64_t deadline_ns;   /* EXPIRED past this time ... */
	uint64_t node_deadline; /* ... or once n_nodes reaches this */
};

/* Allocate the state for pb; 0 or MEMPROF_POOL_ENOMEM.  dfs_free releases it. */
int dfs_init(struct dfs *s, const struct planned_problem *pb);
void dfs_free(struct dfs *s);
/* Decide s->cap from a clean state with s->preorder; the state is clean again after. */
enum dfs_result dfs_run(struct dfs *s);

#endif
