/*
 * cmd/record_live.c - the live side of 'memprof record': the command's log,
 * the metrics socket, and what the follower thread of live/feed.c shows
 * (the view or a summary line every second; the 'q' key).  The threads,
 * the figures, their text and the terminal's sequences are src/live's;
 * this file owns the messages and what goes to stderr.
 */
#include "cmd/cmd.h"
#include "cmd/record_live.h"
#include "live/feed.h"
#include "live/http.h"
#include "live/term.h"
#include "live/view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

struct mp_record_live {
	int view, lines;     /* draw the view / print a line per interval */
	int log_fd, null_fd; /* the command's output and input, -1 none */
	char *log_path;
	struct mp_live_term term; /* the view's screen and keys */
	struct mp_live_http *http;
	struct mp_live_feed feed; /* the state, the follower and metrics threads */
	int finished;             /* mp_record_live_finish ran */
	struct mp_live_text text;
};

/* --- before the command ------------------------------------------------------------------- */

/* trace.db -> trace.log; other names get ".log" added. */
static char *default_log(const char *output)
{
	size_t len = strlen(output);
	char *out = NULL;

	if (len > 3 && !strcmp(output + len - 3, ".db"))
		len -= 3;
	return asprintf(&out, "%.*s.log", (int)len, output) < 0 ? NULL : out;
}

static int open_log(struct mp_record_live *lv, const struct mp_record_opts *o)
{
	struct stat st;

	if (!(lv->log_path = o->live_log ? strdup(o->live_log) : default_log(o->output)))
		return mp_cmd_error(&mp_cmd_record, "out of memory");
	if (!o->force && lstat(lv->log_path, &st) == 0) {
		mp_cmd_error(&mp_cmd_record, "the command's log '%s' exists", lv->log_path);
		fprintf(stderr, "hint: --force replaces it; --live-log=FILE names another\n");
		return MP_EXIT_ERROR;
	}
	lv->log_fd = open(lv->log_path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (lv->log_fd < 0)
		return mp_cmd_error(&mp_cmd_record, "cannot write the command's log '%s': %s",
		                    lv->log_path, strerror(errno));
	if (isatty(STDIN_FILENO) && (lv->null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		return mp_cmd_error(&mp_cmd_record, "cannot open '/dev/null': %s", strerror(errno));
	return 0;
}

static int open_metrics(struct mp_record_live *lv, const struct mp_record_opts *o)
{
	struct mp_error err = {0};
	char *addr = NULL;
	int port = 0;
	const char *a;

	if (mp_live_http_parse_addr(o->metrics, &addr, &port) < 0) {
		free(addr);
		return mp_cmd_usage(&mp_cmd_record,
		                    "bad --metrics '%s': [ADDR:]PORT, PORT from 0 to 65535",
		                    o->metrics);
	}
	if (mp_live_http_open(&lv->http, addr, port, &err) < 0) {
		free(addr);
		mp_cmd_fail(&mp_cmd_record, &err);
		fprintf(stderr, "hint: --metrics=0 takes a free port and prints it\n");
		return MP_EXIT_ERROR;
	}
	free(addr);
	a = mp_live_http_addr(lv->http);
	fprintf(stderr, "memprof record: metrics at http://%s%s%s:%d/metrics\n",
	        strchr(a, ':') ? "[" : "", a, strchr(a, ':') ? "]" : "",
	        mp_live_http_port(lv->http));
	return 0;
}

int mp_record_live_prepare(struct mp_record_live **out, const struct mp_record_opts *o,
                           const struct mp_record_spools *sp)
{
	struct mp_record_live *lv;
	int rc;

	*out = NULL;
	if (!o->live && !o->metrics)
		return o->live_log ? mp_cmd_usage(&mp_cmd_record, "--live-log needs --live") : 0;
	if (!(lv = calloc(1, sizeof(*lv))))
		return mp_cmd_error(&mp_cmd_record, "out of memory");
	lv->log_fd = lv->null_fd = lv->term.tty_fd = -1;
	mp_live_feed_init(&lv->feed);
	lv->view = o->live && isatty(STDERR_FILENO);
	lv->lines = o->live && !lv->view;
	*out = lv;
	if (o->metrics && (rc = open_metrics(lv, o)) != 0)
		return rc;
	if ((lv->view || o->live_log) && (rc = open_log(lv, o)) != 0)
		return rc;
	if (mp_live_feed_follow(&lv->feed, sp->dir, sp->before, sp->n_before) < 0)
		return mp_cmd_error(&mp_cmd_record, "cannot follow the spools: %s",
		                    strerror(errno ? errno : ENOMEM));
	return 0;
}

/* --- the terminal ------------------------------------------------------------------------- */

/* One frame of the view, its log's tail below the figures. */
static void draw(struct mp_record_live *lv)
{
	static char buf[MP_LIVE_LOG_TAIL + 1];
	const char *lines[128];
	struct winsize ws = {0};
	struct mp_live_view_opts o = {0};
	struct mp_live_text frame = {0};

	ioctl(STDERR_FILENO, TIOCGWINSZ, &ws);
	o.width = ws.ws_col ? ws.ws_col : 80;
	o.height = ws.ws_row ? ws.ws_row : 24;
	o.log_path = lv->log_path;
	o.log_lines = lines;
	o.n_log_lines =
	        mp_live_log_tail(lv->log_fd, buf, lines, o.height < 128 ? (size_t)o.height : 128);
	mp_live_text_clear(&lv->text);
	if (mp_live_render_view(&lv->feed.st, &o, &lv->text) < 0)
		return;
	mp_live_term_frame(&lv->text, &frame);
	if (!frame.failed)
		mp_live_write_all(STDERR_FILENO, frame.p, frame.n);
	mp_live_text_free(&frame);
}

/* --- on the follower thread (live/feed.c) ------------------------------------------------ */

static void show(void *arg, struct mp_live_feed *f, int64_t t)
{
	struct mp_record_live *lv = arg;

	/* Labelling may read large binaries with libdw: outside the lock, which
	 * the metrics thread takes (it reads no site; only this thread writes). */
	if (lv->term.open)
		mp_live_state_label_sites(&f->st, MP_LIVE_TOP_SITES);
	mp_live_feed_lock(f);
	mp_live_state_tick(&f->st, t);
	if (lv->term.open) {
		draw(lv);
	} else if (lv->lines) {
		mp_live_text_clear(&lv->text);
		if (mp_live_render_line(&f->st, &lv->text) == 0) {
			mp_live_append(&lv->text, "\n", 1);
			mp_live_write_all(STDERR_FILENO, lv->text.p, lv->text.n);
		}
	}
	mp_live_feed_unlock(f);
}

static void open_view(void *arg)
{
	struct mp_record_live *lv = arg;

	if (lv->view)
		mp_live_term_open(&lv->term, STDERR_FILENO);
}

static void close_view(void *arg)
{
	mp_live_term_close(&((struct mp_record_live *)arg)->term);
}

static int key_fd(void *arg)
{
	struct mp_record_live *lv = arg;

	return lv->term.open ? lv->term.tty_fd : -1;
}

/* A key on the terminal: 'q' closes the view. */
static void key(void *arg)
{
	struct mp_record_live *lv = arg;

	if (mp_live_term_quit_key(&lv->term)) {
		mp_live_term_close(&lv->term);
		fprintf(stderr,
		        "memprof record: live view closed; recording goes on (the "
		        "command's output is in '%s')\n",
		        lv->log_path);
	}
}

/* Once the command runs: the threads. */
static void start(void *arg)
{
	struct mp_record_live *lv = arg;

	lv->feed.http = lv->http;
	lv->feed.ctx = lv;
	lv->feed.ops = (struct mp_live_feed_ops){.begin = open_view,
	                                         .key_fd = key_fd,
	                                         .key = key,
	                                         .show = show,
	                                         .end = close_view,
	                                         .show_at_once = lv->view};
	if (mp_live_feed_start(&lv->feed) < 0)
		fprintf(stderr, "memprof record: warning: no live figures: cannot start a "
		                "thread\n");
}

void mp_record_live_hooks(struct mp_record_live *lv, struct mp_launch_hooks *hooks)
{
	hooks->stdin_fd = lv->log_fd >= 0 ? lv->null_fd : -1;
	hooks->stdout_fd = hooks->stderr_fd = lv->log_fd;
	hooks->started = start;
	hooks->arg = lv;
}

/* --- after the command --------------------------------------------------------------------- */

void mp_record_live_finish(struct mp_record_live *lv, int ran)
{
	if (!lv || lv->finished)
		return;
	lv->finished = 1;
	mp_live_feed_stop(&lv->feed);
	if (lv->lines && ran) {
		mp_live_text_clear(&lv->text);
		if (mp_live_render_line(&lv->feed.st, &lv->text) == 0)
			fprintf(stderr, "%s\n", lv->text.p);
	}
	if (lv->log_path && ran)
		fprintf(stderr, "memprof record: the command's output is in '%s'\n", lv->log_path);
	else if (lv->log_fd >= 0) /* made for a command that never ran */
		unlink(lv->log_path);
}

void mp_record_live_free(struct mp_record_live *lv)
{
	if (!lv)
		return;
	mp_record_live_finish(lv, 0);
	mp_live_feed_free(&lv->feed);
	mp_live_http_close(lv->http);
	mp_live_text_free(&lv->text);
	if (lv->log_fd >= 0)
		close(lv->log_fd);
	if (lv->null_fd >= 0)
		close(lv->null_fd);
	free(lv->log_path);
	free(lv);
}
