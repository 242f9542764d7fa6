/*
 * tests/unit/test_numa_query.c - capture/numa.c: the move_pages query on
 * this machine's real topology, checked page by page against the kernel's
 * other answer, get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR) (asked through
 * syscall(2): no libnuma needed), pages not yet touched included; and the
 * sysfs readers on a fake tree with several nodes and distances.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <glob.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "analysis/numa.h"
#include "capture/numa.h"

#define POLICY_F_NODE 1 /* MPOL_F_NODE of numaif.h */
#define POLICY_F_ADDR 2 /* MPOL_F_ADDR */

/* The node of the page at p, as get_mempolicy says (it faults the page in). */
static int policy_node(void *p)
{
	int node = -1;
	long rc = syscall(SYS_get_mempolicy, &node, NULL, 0UL, p, POLICY_F_NODE | POLICY_F_ADDR);
	cr_assert_eq(rc, 0, "get_mempolicy: %s", strerror(errno));
	return node;
}

static long pg(void)
{
	return sysconf(_SC_PAGESIZE);
}

static char *map_pages(size_t n)
{
	char *p = mmap(NULL, n * (size_t)pg(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	               -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	return p;
}

static uint32_t pages_on(const struct mp_numa_placement *pl, int node)
{
	for (uint32_t k = 0; k < pl->n_nodes; k++)
		if (pl->nodes[k].node == node)
			return pl->nodes[k].pages;
	return 0;
}

static uint32_t placed(const struct mp_numa_placement *pl)
{
	uint32_t sum = 0;
	for (uint32_t k = 0; k < pl->n_nodes; k++)
		sum += pl->nodes[k].pages;
	return sum;
}

Test(numa_query, every_page_of_a_small_buffer_untouched_ones_unplaced)
{
	size_t n = 10;
	char *p = map_pages(n);
	struct mp_numa_placement pl;
	int expect[64] = {0};

	for (size_t i = 0; i < n; i += 2)
		p[i * (size_t)pg()] = 1; /* pages 0, 2, 4, 6, 8 */
	int rc = mp_numa_query(p, n * (size_t)pg(), &pl);
	if (rc == -ENOSYS)
		cr_skip_test("move_pages: this kernel has no NUMA support");
	cr_assert_eq(rc, 0);
	cr_assert_eq(pl.n_sampled, 10);
	cr_assert_eq(pl.n_unplaced, 5, "the 5 pages never touched are on no node");
	cr_assert_eq(placed(&pl), 5);
	for (size_t i = 0; i < n; i += 2) {
		int node = policy_node(p + i * (size_t)pg());
		cr_assert(node >= 0 && node < 64);
		expect[node]++;
	}
	for (int node = 0; node < 64; node++)
		cr_assert_eq(pages_on(&pl, node), (uint32_t)expect[node], "node %d", node);
	/* Written to, the rest land somewhere too (a read would map the shared zero page). */
	for (size_t i = 1; i < n; i += 2) {
		p[i * (size_t)pg()] = 1;
		expect[policy_node(p + i * (size_t)pg())]++;
	}
	cr_assert_eq(mp_numa_query(p, n * (size_t)pg(), &pl), 0);
	cr_assert_eq(pl.n_unplaced, 0);
	cr_assert_eq(placed(&pl), 10);
	for (int node = 0; node < 64; node++)
		cr_assert_eq(pages_on(&pl, node), (uint32_t)expect[node], "node %d", node);
	munmap(p, n * (size_t)pg());
}

Test(numa_query, a_large_buffer_is_sampled_and_every_node_reported_holds_pages)
{
	size_t n = 1000;
	char *p = map_pages(n);
	struct mp_numa_placement pl;
	uint32_t on_node[64] = {0};

	memset(p, 1, n * (size_t)pg());
	int rc = mp_numa_query(p, n * (size_t)pg(), &pl);
	if (rc == -ENOSYS)
		cr_skip_test("move_pages: this kernel has no NUMA support");
	cr_assert_eq(rc, 0);
	cr_assert_eq(pl.n_sampled, MP_NUMA_MAX_SAMPLES);
	cr_assert_eq(pl.n_unplaced, 0);
	cr_assert_eq(placed(&pl), MP_NUMA_MAX_SAMPLES);
	for (size_t i = 0; i < n; i++) {
		int node = policy_node(p + i * (size_t)pg());
		cr_assert(node >= 0 && node < 64);
		on_node[node]++;
	}
	for (uint32_t k = 0; k < pl.n_nodes; k++) {
		cr_assert(k == 0 || pl.nodes[k - 1].node < pl.nodes[k].node, "sorted by node");
		cr_assert_gt(on_node[pl.nodes[k].node], 0, "node %d holds none of it",
		             pl.nodes[k].node);
		/* The sampled share is the node's share, within one sample's width. */
		double share = (double)pl.nodes[k].pages / MP_NUMA_MAX_SAMPLES;
		double truth = (double)on_node[pl.nodes[k].node] / (double)n;
		cr_assert(share > truth - 0.05 && share < truth + 0.05, "node %d: %f vs %f",
		          pl.nodes[k].node, share, truth);
	}
	munmap(p, n * (size_t)pg());
}

Test(numa_query, an_unaligned_buffer_counts_the_pages_it_touches)
{
	char *p = map_pages(4);
	struct mp_numa_placement pl;

	memset(p, 1, 4 * (size_t)pg());
	/* From 100 bytes before the end of page 0 to 100 bytes into page 2: 3 pages. */
	int rc = mp_numa_query(p + pg() - 100, (uint64_t)pg() + 200, &pl);
	if (rc == -ENOSYS)
		cr_skip_test("move_pages: this kernel has no NUMA support");
	cr_assert_eq(rc, 0);
	cr_assert_eq(pl.n_sampled, 3);
	cr_assert_eq(placed(&pl), 3);
	cr_assert_eq(pages_on(&pl, policy_node(p)), 3);
	cr_assert_eq(mp_numa_query(NULL, 10, &pl), -EINVAL);
	cr_assert_eq(mp_numa_query(p, 0, &pl), -EINVAL);
	munmap(p, 4 * (size_t)pg());
}

Test(numa_query, share_bytes)
{
	cr_assert_eq(mp_numa_share_bytes(1000, 16, 64), 250);
	cr_assert_eq(mp_numa_share_bytes(1000, 64, 64), 1000);
	cr_assert_eq(mp_numa_share_bytes(1000, 0, 64), 0);
	cr_assert_eq(mp_numa_share_bytes(1000, 1, 0), 0);
	cr_assert_eq(mp_numa_share_bytes(UINT64_MAX, 32, 64), UINT64_MAX / 2);
	cr_assert_eq(mp_numa_share_bytes(10, 1, 3), 3);
}

Test(numa_query, current_node_is_a_node_of_this_machine)
{
	int node = mp_numa_current_node();
	char path[64];
	struct stat st;

	cr_assert_geq(node, 0);
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", node);
	if (stat("/sys/devices/system/node", &st) == 0)
		cr_assert_eq(stat(path, &st), 0, "%s", path);
}

/* --- sysfs readers on a fake tree --------------------------------------------------- */

static char root[256];

static void put(const char *rel, const char *text)
{
	char path[512], cmd[600], *slash;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	slash = strrchr(path, '/');
	*slash = 0;
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	*slash = '/';
	cr_assert_eq(system(cmd), 0);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void make_root(void)
{
	snprintf(root, sizeof(root), "/tmp/memprof-numa-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void drop_root(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(numa_sysfs, .init = make_root, .fini = drop_root);

Test(numa_sysfs, gpu_node_from_its_pci_device)
{
	put("bus/pci/devices/0000:3b:00.0/numa_node", "1\n");
	put("bus/pci/devices/0000:af:00.0/numa_node", "-1\n");
	put("bus/pci/devices/0001:02:03.1/numa_node", "3\n");
	put("bus/pci/devices/0000:5e:00.0/numa_node", "x\n");
	cr_assert_eq(mp_numa_pci_node(root, "0000:3B:00.0"), 1, "the driver's capitals");
	cr_assert_eq(mp_numa_pci_node(root, "00000000:3b:00.0"), 1, "an 8-digit domain");
	cr_assert_eq(mp_numa_pci_node(root, "0001:02:03.1"), 3);
	cr_assert_eq(mp_numa_pci_node(root, "0000:AF:00.0"), -1, "-1 is unknown");
	cr_assert_eq(mp_numa_pci_node(root, "0000:5e:00.0"), -1, "not a number");
	cr_assert_eq(mp_numa_pci_node(root, "0000:18:00.0"), -1, "no such device");
	cr_assert_eq(mp_numa_pci_node(root, "GPU-1234"), -1, "not a bus id");
	cr_assert_eq(mp_numa_pci_node(root, "0000:3b:00.0 "), -1, "trailing garbage");
}

Test(numa_sysfs, distances_of_several_nodes_with_a_gap)
{
	char buf[256];
	put("devices/system/node/node0/distance", "10 21 31\n");
	put("devices/system/node/node1/distance", "21 10 21\n");
	put("devices/system/node/node3/distance", "31 21 10\n");
	put("devices/system/node/possible", "0-3\n");
	put("devices/system/node/nodefoo/distance", "1\n");
	cr_assert_eq(mp_numa_read_distances(root, buf, sizeof(buf)), 3);
	cr_assert_str_eq(buf, "0:10,21,31;1:21,10,21;3:31,21,10");
	cr_assert_eq(mp_numa_read_distances(root, buf, 10), -1, "too small");
	cr_assert_str_eq(buf, "");
}

Test(numa_sysfs, ten_nodes_sort_by_number_and_a_missing_row_is_empty)
{
	char buf[512], rel[512];
	for (int i = 0; i <= 10; i++) {
		if (i == 7)
			continue;
		snprintf(rel, sizeof(rel), "devices/system/node/node%d/distance", i);
		put(rel, i == 2 ? "" : "10 20\n");
	}
	snprintf(rel, sizeof(rel), "%s/devices/system/node/node7", root);
	cr_assert_eq(mkdir(rel, 0700), 0);
	cr_assert_eq(mp_numa_read_distances(root, buf, sizeof(buf)), 11);
	cr_assert_str_eq(buf, "0:10,20;1:10,20;2:;3:10,20;4:10,20;5:10,20;6:10,20;7:;8:10,20;"
	                      "9:10,20;10:10,20");
}

Test(numa_sysfs, no_node_directory_is_no_table)
{
	char buf[64] = "junk";
	cr_assert_eq(mp_numa_read_distances(root, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "");
}

/* --- the table as analyze reads it back (analysis/numa.c) ----------------------------- */

Test(numa_sysfs, the_spool_value_parses_back_into_the_table)
{
	char buf[256];
	struct mp_numa n = {0};

	put("devices/system/node/node0/distance", "10 21 31\n");
	put("devices/system/node/node1/distance", "21 10 21\n");
	put("devices/system/node/node3/distance", "31 21 10\n");
	cr_assert_eq(mp_numa_read_distances(root, buf, sizeof(buf)), 3);
	cr_assert_eq(mp_numa_parse_distances(&n, buf), 0);
	cr_assert_eq(n.n_nodes, 3);
	cr_assert_eq(mp_numa_distance(&n, 0, 3), 31);
	cr_assert_eq(mp_numa_distance(&n, 3, 1), 21);
	cr_assert_eq(mp_numa_distance(&n, 1, 1), 10);
	cr_assert_eq(mp_numa_distance(&n, 2, 1), -1, "no node 2");
	mp_numa_free(&n);
}

Test(numa_sysfs, a_malformed_table_is_unknown)
{
	static const char *const bad[] = {
	        "",     "0:10,21", "0:10;1:10",        "0:10,21;1:21",     "0:10,21;1:21,10;",
	        "0 10", "x:10",    "0:10,21;1:21,10x", "0:10,,21;1:21,10", "2:;3:",
	};
	struct mp_numa n = {0};

	cr_assert_eq(mp_numa_parse_distances(&n, "0:10"), 0);
	cr_assert_eq(mp_numa_distance(&n, 0, 0), 10);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(mp_numa_parse_distances(&n, bad[i]), MP_EFORMAT, "'%s'", bad[i]);
		cr_assert_eq(n.n_nodes, 0, "'%s'", bad[i]);
		cr_assert_eq(mp_numa_distance(&n, 0, 0), -1, "'%s'", bad[i]);
	}
	mp_numa_free(&n);
}

/* This machine's own table, against the files read here by other means
 * (glob and one fscanf per number): whatever the topology is. */
Test(numa_sysfs, this_machines_distances)
{
	char buf[4096], want[4096] = "";
	size_t len = 0;
	glob_t g;
	int n_nodes = 0;

	if (glob("/sys/devices/system/node/node[0-9]*/distance", 0, NULL, &g) != 0)
		cr_skip_test("no NUMA nodes in /sys on this machine");
	/* glob sorts by name: node10 before node2, so order by number first */
	for (int node = 0; node < 4096 && (size_t)n_nodes < g.gl_pathc; node++) {
		char path[96];
		FILE *f;
		int d, k = 0;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/distance", node);
		if (!(f = fopen(path, "r")))
			continue;
		len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%d:", n_nodes ? ";" : "",
		                        node);
		while (fscanf(f, "%d", &d) == 1)
			len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%d",
			                        k++ ? "," : "", d);
		fclose(f);
		n_nodes++;
	}
	globfree(&g);
	cr_assert_eq(mp_numa_read_distances("/sys", buf, sizeof(buf)), n_nodes);
	cr_assert_str_eq(buf, want);
	cr_log_info("this machine: %d node(s), distances %s", n_nodes, buf);
}
