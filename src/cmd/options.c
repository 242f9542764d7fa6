/*
 * cmd/options.c - a command's option table (cmd/options.h) made into
 * getopt_long's strings and into the options part of its --help.
 */
#include "cmd/options.h"

#include <string.h>

static int has_short(int val)
{
	return val > ' ' && val < 127;
}

void mp_cmd_getopt_init(struct mp_cmd_getopt *g, const struct mp_cmd_opt *t)
{
	size_t i, k = 0;

	memset(g, 0, sizeof(*g));
	g->shortopts[k++] = ':';
	for (i = 0; t[i].name && i < MP_CMD_MAX_OPTS; i++) {
		g->longopts[i] = (struct option){
		        t[i].name, t[i].arg ? required_argument : no_argument, NULL, t[i].val};
		if (!has_short(t[i].val))
			continue;
		g->shortopts[k++] = (char)t[i].val;
		if (t[i].arg)
			g->shortopts[k++] = ':';
	}
}

/* "-o, --output=JOB" or "    --json" into buf; returns its length. */
static int left(char *buf, size_t n, const struct mp_cmd_opt *o)
{
	char s[8] = "    ";

	if (has_short(o->val))
		snprintf(s, sizeof(s), "-%c, ", o->val);
	return snprintf(buf, n, "%s--%s%s%s", s, o->name, o->arg ? "=" : "", o->arg ? o->arg : "");
}

void mp_cmd_opts_help(FILE *out, const struct mp_cmd_opt *t)
{
	char buf[96];
	int width = 0, len;
	size_t i;

	for (i = 0; t[i].name; i++)
		if ((len = left(buf, sizeof(buf), &t[i])) > width)
			width = len;
	for (i = 0; t[i].name; i++) {
		const char *h = t[i].help;

		left(buf, sizeof(buf), &t[i]);
		fprintf(out, "  %-*s  ", width, buf);
		for (;;) {
			size_t line = strcspn(h, "\n");

			fprintf(out, "%.*s\n", (int)line, h);
			if (!h[line])
				break;
			h += line + 1;
			fprintf(out, "  %-*s  ", width, "");
		}
	}
}
