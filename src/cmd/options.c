/*
 * cmd/options.c - a command's option table (cmd/options.h) made into
 * getopt_long's strings and into the options part of its --help.
 */
#include "cmd/options.h"
#include "cmd/cmd.h"

#include <string.h>

static int has_short(int val)
{
	return val > ' ' && val < 127;
}

void mp_cmd_getopt_init(struct mp_cmd_getopt *g, const struct mp_cmd_opt *t)
{
	memset(g, 0, sizeof(*g));
	g->shortopts[0] = ':';
	mp_cmd_getopt_add(g, t);
}

void mp_cmd_getopt_add(struct mp_cmd_getopt *g, const struct mp_cmd_opt *t)
{
	size_t i, n = 0, k = strlen(g->shortopts);

	while (g->longopts[n].name)
		n++;
	for (i = 0; t[i].name && n < MP_CMD_MAX_OPTS; i++, n++) {
		g->longopts[n] = (struct option){
		        t[i].name, t[i].arg ? required_argument : no_argument, NULL, t[i].val};
		if (!has_short(t[i].val))
			continue;
		g->shortopts[k++] = (char)t[i].val;
		if (t[i].arg)
			g->shortopts[k++] = ':';
	}
}

const char *mp_cmd_getopt_abbreviated(char **argv, const struct option *longopts, int idx)
{
	const char *arg = argv[optind - 1], *name = longopts[idx].name;
	size_t len = strlen(name);

	if (strncmp(arg, "--", 2) != 0 && optind >= 2)
		arg = argv[optind - 2]; /* "--md FILE": the value was the next word */
	if (strncmp(arg, "--", 2) == 0 && strncmp(arg + 2, name, len) == 0 &&
	    (arg[2 + len] == '\0' || arg[2 + len] == '='))
		return NULL;
	return arg;
}

int mp_cmd_getopt_next(const struct mp_cmd *c, int argc, char **argv, const struct mp_cmd_getopt *g,
                       int *status)
{
	int ch;

	opterr = 0;
	ch = getopt_long(argc, argv, g->shortopts, g->longopts, NULL);
	if (ch == -1)
		return 0;
	if (ch == 'h') {
		c->help(stdout);
		*status = MP_EXIT_OK;
		return -1;
	}
	if (ch == '?' || ch == ':') {
		*status = mp_cmd_bad_option(c, argv, ch);
		return -1;
	}
	return ch;
}

int mp_cmd_parse(const struct mp_cmd *c, int argc, char **argv, const struct mp_cmd_opt *t,
                 int (*take)(void *ctx, int ch, const char *arg), void *ctx)
{
	struct mp_cmd_getopt g;
	int ch, rc, status = 0;

	mp_cmd_getopt_init(&g, t);
	while ((ch = mp_cmd_getopt_next(c, argc, argv, &g, &status)) > 0)
		if ((rc = take(ctx, ch, optarg)) != 0)
			return rc;
	return ch < 0 && status == MP_EXIT_OK ? -1 : status;
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
		if (t[i].help && (len = left(buf, sizeof(buf), &t[i])) > width)
			width = len;
	for (i = 0; t[i].name; i++) {
		const char *h = t[i].help;

		if (!h)
			continue; /* an alias: its option's help names it */
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
