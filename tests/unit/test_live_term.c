/*
 * tests/unit/test_live_term.c - what 'memprof record --live' draws and
 * parses, now in src/live: a frame of the view's lines (live/term.c: home,
 * each line then clear-to-end-of-line, no newline after the last, clear
 * below), the last lines of the command's log, and --metrics' [ADDR:]PORT
 * (mp_live_http_parse_addr: a bracketed IPv6 address, ports 0 to 65535).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live/http.h"
#include "live/term.h"

Test(live_term, frame_of_two_lines)
{
	struct mp_live_text text = {0}, frame = {0};

	mp_live_append(&text, "one\ntwo\n", 8);
	mp_live_term_frame(&text, &frame);
	cr_assert(!frame.failed);
	cr_assert_str_eq(frame.p, "\033[Hone\033[K\r\ntwo\033[K\033[J");
	mp_live_text_free(&text);
	mp_live_text_free(&frame);
}

Test(live_term, log_tail_keeps_the_last_lines)
{
	char path[] = "/tmp/memprof-test-live-term-XXXXXX";
	char buf[MP_LIVE_LOG_TAIL + 1];
	const char *lines[2];
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	unlink(path);
	cr_assert_eq(write(fd, "a\nb\nc\n", 6), 6);
	cr_assert_eq(mp_live_log_tail(fd, buf, lines, 2), 2);
	cr_assert_str_eq(lines[0], "b");
	cr_assert_str_eq(lines[1], "c");
	cr_assert_eq(mp_live_log_tail(-1, buf, lines, 2), 0);
	close(fd);
}

Test(live_http, parse_addr)
{
	char *addr = NULL;
	int port = -1;

	cr_assert_eq(mp_live_http_parse_addr("9400", &addr, &port), 0);
	cr_assert_null(addr);
	cr_assert_eq(port, 9400);
	cr_assert_eq(mp_live_http_parse_addr("0.0.0.0:0", &addr, &port), 0);
	cr_assert_str_eq(addr, "0.0.0.0");
	cr_assert_eq(port, 0);
	free(addr);
	cr_assert_eq(mp_live_http_parse_addr("[::1]:8080", &addr, &port), 0);
	cr_assert_str_eq(addr, "::1");
	free(addr);
	cr_assert_eq(mp_live_http_parse_addr("65536", &addr, &port), -1);
	free(addr);
	cr_assert_eq(mp_live_http_parse_addr(":80", &addr, &port), -1);
	free(addr);
	cr_assert_eq(mp_live_http_parse_addr("host:", &addr, &port), -1);
	free(addr);
	cr_assert_eq(mp_live_http_parse_addr("abc", &addr, &port), -1);
	free(addr);
}
