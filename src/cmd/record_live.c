/*
 * cmd/record_live.c - the live side of 'memprof record': the command's log,
 * the metrics socket, the follower thread (spools -> live state every
 * 250 ms; the view, drawn with plain ANSI sequences, or a summary line,
 * every second; the 'q' key) and the metrics thread.  The figures and their
 * text come from src/live; this file owns threads, the terminal and stderr.
 */
#include "cmd/cmd.h"
#include "cmd/record_live.h"
#include "live/expo.h"
#include "live/follow.h"
#include "live/http.h"
#include "live/state.h"
#include "live/view.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define ROUND_MS     250
#define INTERVAL_NS  1000000000LL
#define LOG_TAIL     8192
#define ENTER_SCREEN "\033[?1049h\033[?25l"
#define LEAVE_SCREEN "\033[?25h\033[?1049l"

struct mp_record_live {
	int view, lines;     /* draw the view / print a line per interval */
	int view_open;       /* the view is on the screen */
	int log_fd, null_fd; /* the command's output and input, -1 none */
	char *log_path;
	int tty_fd, tty_saved; /* keys: /dev/tty, its settings saved */
	struct termios saved;
	struct mp_live_http *http;
	struct mp_live_follow *follow;
	struct mp_live_state st;
	pthread_mutex_t lock; /* st and follow */
	pthread_t follower, server;
	int threads;  /* started */
	int finished; /* mp_record_live_finish ran */
	int wake[2];  /* the follower's stop pipe */
	struct mp_live_text text;
};

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Write all of p to fd (stderr: the view), ignoring errors. */
static void put(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		p += k;
		n -= (size_t)k;
	}
}

/* --- before the command ------------------------------------------------------------------- */

/* "[ADDR:]PORT" -> addr (malloc'd, NULL: default) and port; -1 when bad. */
static int parse_metrics(const char *s, char **addr, int *port)
{
	const char *colon = strrchr(s, ':'), *p = colon ? colon + 1 : s;
	char *end;
	long v;

	*addr = NULL;
	errno = 0;
	v = strtol(p, &end, 10);
	if (!*p || *end || errno || v < 0 || v > 65535)
		return -1;
	*port = (int)v;
	if (!colon)
		return 0;
	if (colon == s)
		return -1;
	if (s[0] == '[' && colon[-1] == ']')
		*addr = strndup(s + 1, (size_t)(colon - s - 2));
	else
		*addr = strndup(s, (size_t)(colon - s));
	return *addr && **addr ? 0 : -1;
}

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

	if (parse_metrics(o->metrics, &addr, &port) < 0) {
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
	lv->log_fd = lv->null_fd = lv->tty_fd = lv->wake[0] = lv->wake[1] = -1;
	pthread_mutex_init(&lv->lock, NULL);
	mp_live_state_init(&lv->st, now_ns());
	lv->view = o->live && isatty(STDERR_FILENO);
	lv->lines = o->live && !lv->view;
	*out = lv;
	if (o->metrics && (rc = open_metrics(lv, o)) != 0)
		return rc;
	if ((lv->view || o->live_log) && (rc = open_log(lv, o)) != 0)
		return rc;
	if (pipe2(lv->wake, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    !(lv->follow = mp_live_follow_new(sp->dir, sp->before, sp->n_before)))
		return mp_cmd_error(&mp_cmd_record, "cannot follow the spools: %s",
		                    strerror(errno ? errno : ENOMEM));
	return 0;
}

/* --- the terminal ------------------------------------------------------------------------- */

static void open_view(struct mp_record_live *lv)
{
	struct termios t;

	lv->tty_fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (lv->tty_fd >= 0 && tcgetattr(lv->tty_fd, &lv->saved) == 0) {
		t = lv->saved;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO); /* keys one by one; ISIG stays: Ctrl-C */
		t.c_cc[VMIN] = 1;
		t.c_cc[VTIME] = 0;
		lv->tty_saved = tcsetattr(lv->tty_fd, TCSANOW, &t) == 0;
	}
	put(STDERR_FILENO, ENTER_SCREEN, strlen(ENTER_SCREEN));
	lv->view_open = 1;
}

static void close_view(struct mp_record_live *lv)
{
	if (!lv->view_open)
		return;
	put(STDERR_FILENO, LEAVE_SCREEN, strlen(LEAVE_SCREEN));
	if (lv->tty_saved)
		tcsetattr(lv->tty_fd, TCSANOW, &lv->saved);
	if (lv->tty_fd >= 0)
		close(lv->tty_fd);
	lv->tty_fd = -1;
	lv->tty_saved = lv->view_open = 0;
}

/* The last lines of the command's log, into buf (pointers in lines). */
static size_t log_tail(struct mp_record_live *lv, char *buf, const char **lines, size_t n)
{
	struct stat st;
	off_t from;
	ssize_t k;

	if (lv->log_fd < 0 || fstat(lv->log_fd, &st) < 0)
		return 0;
	from = st.st_size > LOG_TAIL ? st.st_size - LOG_TAIL : 0;
	k = pread(lv->log_fd, buf, LOG_TAIL, from);
	return k > 0 ? mp_live_log_lines(buf, (size_t)k, from == 0, lines, n) : 0;
}

/* One frame: home, each line then clear-to-end-of-line (no newline after
 * the last: it would scroll), clear below. */
static void draw(struct mp_record_live *lv)
{
	static char buf[LOG_TAIL + 1];
	const char *lines[128];
	struct winsize ws = {0};
	struct mp_live_view_opts o = {0};
	struct mp_live_text frame = {0};
	size_t i, k = 0;

	ioctl(STDERR_FILENO, TIOCGWINSZ, &ws);
	o.width = ws.ws_col ? ws.ws_col : 80;
	o.height = ws.ws_row ? ws.ws_row : 24;
	o.log_path = lv->log_path;
	o.log_lines = lines;
	o.n_log_lines = log_tail(lv, buf, lines, o.height < 128 ? (size_t)o.height : 128);
	mp_live_text_clear(&lv->text);
	if (mp_live_render_view(&lv->st, &o, &lv->text) < 0)
		return;
	mp_live_append(&frame, "\033[H", 3);
	for (i = 0; i < lv->text.n; i++) {
		if (lv->text.p[i] != '\n')
			continue;
		mp_live_append(&frame, lv->text.p + k, i - k);
		mp_live_append(&frame, i + 1 < lv->text.n ? "\033[K\r\n" : "\033[K",
		               i + 1 < lv->text.n ? 5 : 3);
		k = i + 1;
	}
	mp_live_append(&frame, "\033[J", 3);
	if (!frame.failed)
		put(STDERR_FILENO, frame.p, frame.n);
	mp_live_text_free(&frame);
}

/* --- the threads -------------------------------------------------------------------------- */

static void block_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* they go to the thread that waits */
}

/* Read the spools until nothing new comes (rounds is a bound). */
static void read_spools(struct mp_record_live *lv, int rounds)
{
	pthread_mutex_lock(&lv->lock);
	while (rounds-- > 0 && mp_live_follow_poll(lv->follow, mp_live_state_item, &lv->st) > 0)
		;
	mp_live_state_notes(&lv->st, lv->follow);
	pthread_mutex_unlock(&lv->lock);
}

static void show(struct mp_record_live *lv, int64_t t)
{
	/* Labelling may read large binaries with libdw: outside the lock, which
	 * the metrics thread takes (it reads no site; only this thread writes). */
	if (lv->view_open)
		mp_live_state_label_sites(&lv->st, MP_LIVE_TOP_SITES);
	pthread_mutex_lock(&lv->lock);
	mp_live_state_tick(&lv->st, t);
	if (lv->view_open) {
		draw(lv);
	} else if (lv->lines) {
		mp_live_text_clear(&lv->text);
		if (mp_live_render_line(&lv->st, &lv->text) == 0) {
			mp_live_append(&lv->text, "\n", 1);
			put(STDERR_FILENO, lv->text.p, lv->text.n);
		}
	}
	pthread_mutex_unlock(&lv->lock);
}

/* A key on the terminal: 'q' closes the view. */
static void key(struct mp_record_live *lv)
{
	char c[16];
	ssize_t k = read(lv->tty_fd, c, sizeof(c));

	if (k > 0 && (memchr(c, 'q', (size_t)k) || memchr(c, 'Q', (size_t)k))) {
		close_view(lv);
		fprintf(stderr,
		        "memprof record: live view closed; recording goes on (the "
		        "command's output is in '%s')\n",
		        lv->log_path);
	}
}

static void *follower_main(void *arg)
{
	struct mp_record_live *lv = arg;
	int64_t next = now_ns() + (lv->view ? 0 : INTERVAL_NS); /* the view at once */

	block_signals();
	if (lv->view)
		open_view(lv);
	for (;;) {
		struct pollfd p[2] = {{lv->wake[0], POLLIN, 0}, {lv->tty_fd, POLLIN, 0}};
		int n = poll(p, lv->view_open && lv->tty_fd >= 0 ? 2 : 1, ROUND_MS);

		if (n > 0 && p[0].revents)
			break;
		if (n > 0 && lv->view_open && p[1].revents)
			key(lv);
		read_spools(lv, 1);
		if (now_ns() >= next) {
			show(lv, now_ns());
			next += INTERVAL_NS;
			if (next < now_ns())
				next = now_ns() + INTERVAL_NS;
		}
	}
	read_spools(lv, 64);
	pthread_mutex_lock(&lv->lock);
	mp_live_state_tick(&lv->st, now_ns());
	pthread_mutex_unlock(&lv->lock);
	close_view(lv);
	return NULL;
}

static int metrics_body(void *arg, struct mp_live_text *body)
{
	struct mp_record_live *lv = arg;
	int rc;

	pthread_mutex_lock(&lv->lock);
	rc = mp_live_render_metrics(&lv->st, body);
	pthread_mutex_unlock(&lv->lock);
	return rc;
}

static void *server_main(void *arg)
{
	struct mp_record_live *lv = arg;

	block_signals();
	mp_live_http_serve(lv->http, metrics_body, lv);
	return NULL;
}

static void start(void *arg)
{
	struct mp_record_live *lv = arg;

	if (pthread_create(&lv->follower, NULL, follower_main, lv) == 0)
		lv->threads |= 1;
	else
		fprintf(stderr, "memprof record: warning: no live figures: cannot start a "
		                "thread\n");
	if (lv->http && pthread_create(&lv->server, NULL, server_main, lv) == 0)
		lv->threads |= 2;
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
	if (lv->threads & 1) {
		put(lv->wake[1], "x", 1);
		pthread_join(lv->follower, NULL);
	}
	if (lv->threads & 2) {
		mp_live_http_stop(lv->http);
		pthread_join(lv->server, NULL);
	}
	lv->threads = 0;
	if (lv->lines && ran) {
		mp_live_text_clear(&lv->text);
		if (mp_live_render_line(&lv->st, &lv->text) == 0)
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
	mp_live_follow_free(lv->follow);
	mp_live_state_free(&lv->st);
	mp_live_http_close(lv->http);
	mp_live_text_free(&lv->text);
	if (lv->log_fd >= 0)
		close(lv->log_fd);
	if (lv->null_fd >= 0)
		close(lv->null_fd);
	if (lv->wake[0] >= 0) {
		close(lv->wake[0]);
		close(lv->wake[1]);
	}
	pthread_mutex_destroy(&lv->lock);
	free(lv->log_path);
	free(lv);
}
