/*
 * live/term.c - the terminal of the live view (live/term.h): the alternate
 * screen and raw keys, frames in plain ANSI sequences, the log's tail.
 * Writes only to the descriptors it is given.
 */
#include "live/term.h"
#include "live/view.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENTER_SCREEN "\033[?1049h\033[?25l"
#define LEAVE_SCREEN "\033[?25h\033[?1049l"

void mp_live_write_all(int fd, const char *p, size_t n)
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

void mp_live_term_open(struct mp_live_term *t, int out_fd)
{
	struct termios raw;

	t->out_fd = out_fd;
	t->tty_fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (t->tty_fd >= 0 && tcgetattr(t->tty_fd, &t->saved) == 0) {
		raw = t->saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO); /* keys one by one; ISIG stays: Ctrl-C */
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		t->tty_saved = tcsetattr(t->tty_fd, TCSANOW, &raw) == 0;
	}
	mp_live_write_all(out_fd, ENTER_SCREEN, strlen(ENTER_SCREEN));
	t->open = 1;
}

void mp_live_term_close(struct mp_live_term *t)
{
	if (!t->open)
		return;
	mp_live_write_all(t->out_fd, LEAVE_SCREEN, strlen(LEAVE_SCREEN));
	if (t->tty_saved)
		tcsetattr(t->tty_fd, TCSANOW, &t->saved);
	if (t->tty_fd >= 0)
		close(t->tty_fd);
	t->tty_fd = -1;
	t->tty_saved = t->open = 0;
}

int mp_live_term_quit_key(struct mp_live_term *t)
{
	char c[16];
	ssize_t k = read(t->tty_fd, c, sizeof(c));

	return k > 0 && (memchr(c, 'q', (size_t)k) || memchr(c, 'Q', (size_t)k));
}

void mp_live_term_frame(const struct mp_live_text *text, struct mp_live_text *frame)
{
	size_t i, k = 0;

	mp_live_append(frame, "\033[H", 3);
	for (i = 0; i < text->n; i++) {
		if (text->p[i] != '\n')
			continue;
		mp_live_append(frame, text->p + k, i - k);
		mp_live_append(frame, i + 1 < text->n ? "\033[K\r\n" : "\033[K",
		               i + 1 < text->n ? 5 : 3);
		k = i + 1;
	}
	mp_live_append(frame, "\033[J", 3);
}

size_t mp_live_log_tail(int fd, char *buf, const char **lines, size_t n)
{
	struct stat st;
	off_t from;
	ssize_t k;

	if (fd < 0 || fstat(fd, &st) < 0)
		return 0;
	from = st.st_size > MP_LIVE_LOG_TAIL ? st.st_size - MP_LIVE_LOG_TAIL : 0;
	k = pread(fd, buf, MP_LIVE_LOG_TAIL, from);
	return k > 0 ? mp_live_log_lines(buf, (size_t)k, from == 0, lines, n) : 0;
}
