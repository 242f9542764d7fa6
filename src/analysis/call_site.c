/*
 * analysis/call_site.c - the call-site key of a stack (analysis/call_site.h),
 * shared by the gate (analysis/gate.c) and the cross-rank analysis
 * (analysis/ranks.c).
 */
#include "analysis/call_site.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/stack_text.h"

/* The last two components of a path ("dir/file.py"), or all of a shorter one. */
static const char *path_tail(const char *path)
{
	const char *last = strrchr(path, '/'), *p;

	if (!last)
		return path;
	if (last == path)
		return path + 1;
	for (p = last; p > path && p[-1] != '/'; p--)
		;
	return p;
}

int mp_call_site_has_file(const struct memprof_frame *f)
{
	return f->file && f->file[0] && strcmp(f->file, "??") != 0;
}

char *mp_call_site_key(const struct memprof_stack *s, const struct memprof_frame **frame)
{
	int i = s ? mp_stack_call_site(s) : -1;
	const struct memprof_frame *f;
	const char *name, *tail;
	char *key;
	size_t len;

	*frame = NULL;
	if (i < 0)
		return strdup(MP_CALL_SITE_NONE);
	*frame = f = &s->frames[i];
	name = f->name ? f->name : "";
	if (!mp_call_site_has_file(f))
		return strdup(name);
	tail = path_tail(f->file);
	len = strlen(name) + strlen(tail) + 2;
	if ((key = malloc(len)))
		snprintf(key, len, "%s@%s", name, tail);
	return key;
}

int mp_call_site_add_line(int64_t **lines, size_t *n, int64_t line)
{
	size_t i = 0;
	int64_t *grown;

	if (line <= 0)
		return 0;
	while (i < *n && (*lines)[i] < line)
		i++;
	if (i < *n && (*lines)[i] == line)
		return 0;
	if (!(grown = realloc(*lines, (*n + 1) * sizeof(*grown))))
		return MP_ENOMEM;
	memmove(grown + i + 1, grown + i, (*n - i) * sizeof(*grown));
	grown[i] = line;
	*lines = grown;
	(*n)++;
	return 0;
}

char *mp_call_site_lines_text(char *buf, size_t size, const int64_t *lines, size_t n, int64_t line)
{
	size_t i, len = 0;

	buf[0] = '\0';
	if (n == 0 && line > 0)
		snprintf(buf, size, "%lld", (long long)line);
	for (i = 0; i < n && len + 1 < size; i++) {
		int w = snprintf(buf + len, size - len, "%s%lld", i ? "," : "",
		                 (long long)lines[i]);

		if (w < 0)
			break;
		len += (size_t)w;
	}
	return buf;
}
