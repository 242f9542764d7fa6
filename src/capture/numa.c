/*
 * capture/numa.c - the NUMA page query and the sysfs readers of numa.h.
 * Pure Linux: system calls and small sysfs files, no CUDA, no allocation
 * beyond the stack, no output.  It never links libnuma (a GPU machine may
 * lack it): move_pages and getcpu go through syscall(2).
 */
#include "capture/numa.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t page_bytes(void)
{
	static uint64_t cached;
	if (!cached) {
		long p = sysconf(_SC_PAGESIZE);
		cached = p > 0 ? (uint64_t)p : 4096;
	}
	return cached;
}

/* Count status[i] into out: a node, or unplaced. */
static void tally(struct mp_numa_placement *out, int status)
{
	uint32_t k;
	if (status < 0) {
		out->n_unplaced++;
		return;
	}
	for (k = 0; k < out->n_nodes && out->nodes[k].node < status; k++)
		;
	if (k < out->n_nodes && out->nodes[k].node == status) {
		out->nodes[k].pages++;
		return;
	}
	memmove(&out->nodes[k + 1], &out->nodes[k], (out->n_nodes - k) * sizeof(out->nodes[0]));
	out->nodes[k] = (struct mp_numa_node_pages){status, 1};
	out->n_nodes++;
}

int mp_numa_query(const void *addr, uint64_t size_bytes, struct mp_numa_placement *out)
{
	void *pages[MP_NUMA_MAX_SAMPLES];
	int status[MP_NUMA_MAX_SAMPLES];
	uint64_t pg = page_bytes(), start, n_pages, i;
	uint32_t n;

	memset(out, 0, sizeof(*out));
	if (!addr || size_bytes == 0)
		return -EINVAL;
	start = (uint64_t)(uintptr_t)addr & ~(pg - 1);
	n_pages = ((uint64_t)(uintptr_t)addr + size_bytes - start + pg - 1) / pg;
	n = n_pages < MP_NUMA_MAX_SAMPLES ? (uint32_t)n_pages : MP_NUMA_MAX_SAMPLES;
	for (i = 0; i < n; i++) {
		/* Sample i stands for the middle of its n-th of the buffer. */
		uint64_t page = n == n_pages ? i : (2 * i + 1) * n_pages / (2 * (uint64_t)n);
		pages[i] = (void *)(uintptr_t)(start + page * pg);
		status[i] = -ENOENT;
	}
	if (syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, status, 0) < 0)
		return -errno;
	out->n_sampled = n;
	for (i = 0; i < n; i++)
		tally(out, status[i]);
	return 0;
}

uint64_t mp_numa_share_bytes(uint64_t size_bytes, uint32_t pages, uint32_t n_sampled)
{
	if (n_sampled == 0)
		return 0;
	if (pages >= n_sampled)
		return size_bytes;
	/* size * pages / n without overflow: n_sampled is small. */
	return size_bytes / n_sampled * pages + size_bytes % n_sampled * pages / n_sampled;
}

int mp_numa_current_node(void)
{
	unsigned cpu = 0, node = 0;
	if (syscall(SYS_getcpu, &cpu, &node, NULL) != 0)
		return -1;
	return (int)node;
}

int mp_numa_pci_name(const char *bus_id, char *buf, size_t n)
{
	unsigned domain, bus, dev, fn;
	char end;
	if (!bus_id || sscanf(bus_id, "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &end) != 4)
		return -1;
	int k = snprintf(buf, n, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
	return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* The first line of path into buf (newline dropped); 0, or -1 when unreadable. */
static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	int ok;
	if (!f)
		return -1;
	ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int mp_numa_pci_node(const char *root, const char *bus_id)
{
	char name[32], path[4096], line[64], *end;
	long node;
	if (mp_numa_pci_name(bus_id, name, sizeof(name)) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/numa_node", root, name);
	if (read_line(path, line, sizeof(line)) < 0)
		return -1;
	errno = 0;
	node = strtol(line, &end, 10);
	if (errno || end == line || *end || node < 0 || node > 65535)
		return -1;
	return (int)node;
}

static int by_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The node numbers under ROOT/devices/system/node, sorted; how many (at most max). */
static int list_nodes(const char *root, int *nodes, int max)
{
	char path[4096];
	struct dirent *de;
	int n = 0;
	snprintf(path, sizeof(path), "%s/devices/system/node", root);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		const char *s = de->d_name;
		char *end;
		if (strncmp(s, "node", 4) != 0 || !isdigit((unsigned char)s[4]))
			continue;
		long v = strtol(s + 4, &end, 10);
		if (*end == 0 && v >= 0 && v <= 65535)
			nodes[n++] = (int)v;
	}
	closedir(d);
	qsort(nodes, (size_t)n, sizeof(nodes[0]), by_int);
	return n;
}

/* Append "N:D,D,..." for node to buf at *used; -1 when it does not fit. */
static int append_row(const char *root, int node, int first, char *buf, size_t n, size_t *used)
{
	char path[4096], line[4096], *p = line, *end;
	int k = snprintf(buf + *used, n - *used, "%s%d:", first ? "" : ";", node), sep = 0;
	if (k < 0 || (size_t)k >= n - *used)
		return -1;
	*used += (size_t)k;
	snprintf(path, sizeof(path), "%s/devices/system/node/node%d/distance", root, node);
	if (read_line(path, line, sizeof(line)) < 0)
		return 0; /* a row of no distances: unknown */
	for (;;) {
		long d = strtol(p, &end, 10);
		if (end == p)
			break;
		k = snprintf(buf + *used, n - *used, "%s%ld", sep++ ? "," : "", d);
		if (k < 0 || (size_t)k >= n - *used)
			return -1;
		*used += (size_t)k;
		p = end;
	}
	return 0;
}

int mp_numa_read_distances(const char *root, char *buf, size_t n)
{
	int nodes[1024], n_nodes, i;
	size_t used = 0;
	if (n == 0)
		return -1;
	buf[0] = 0;
	n_nodes = list_nodes(root, nodes, (int)(sizeof(nodes) / sizeof(nodes[0])));
	for (i = 0; i < n_nodes; i++)
		if (append_row(root, nodes[i], i == 0, buf, n, &used) < 0) {
			buf[0] = 0;
			return -1;
		}
	return n_nodes;
}
