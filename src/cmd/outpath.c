/*
 * cmd/outpath.c - where 'report' and 'export --format=perfetto' write when
 * no -o is given: standard output, unless it is a terminal, where a page of
 * HTML or megabytes of JSON are of no use; then a file next to the trace.
 */
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *mp_cmd_output_beside(const char *trace, const char *ext)
{
	size_t len = strlen(trace);
	char *path;

	if (len > 3 && strcmp(trace + len - 3, ".db") == 0)
		len -= 3;
	if (!(path = malloc(len + strlen(ext) + 2)))
		return NULL;
	snprintf(path, len + strlen(ext) + 2, "%.*s.%s", (int)len, trace, ext);
	return path;
}

int mp_cmd_default_output(const char **output, const char *trace, const char *ext, char **owned)
{
	*owned = NULL;
	if (*output || !isatty(STDOUT_FILENO)) {
		if (!*output)
			*output = "-";
		return 0;
	}
	if (!(*owned = mp_cmd_output_beside(trace, ext)))
		return -1;
	*output = *owned;
	return 1;
}
