/*
 * tests/fuzz/fuzz_csv.c - fuzz target for the memprof CSV reader and the
 * stack text grammar: any bytes must give rows or a clean error, never a
 * crash, a hang or a leak.  Built with libFuzzer by 'make fuzz'; replayed
 * over the corpus by 'make check' (replay_main.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/csv.h"
#include "util/stack_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mp_frame_list frames;
	struct mp_csv_reader *r;
	struct mp_csv_row row;
	struct mp_error err;
	FILE *f;
	int rc;

	if (size == 0)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	mp_frame_list_init(&frames);
	mp_csv_probe((const char *)data, size);
	if (mp_csv_open(&r, f, "fuzz.csv", &err) == 0) {
		while ((rc = mp_csv_next(r, &row, &err)) == 1) {
			if (row.stack &&
			    mp_stack_text_parse(row.stack, row.stack_len, &frames, &err) == 0) {
				struct memprof_stack s = {(uint32_t)frames.n, frames.frames};
				char *text = mp_stack_text_format(&s, NULL);

				free(text);
			}
		}
		if (rc < 0 && err.msg[0] == '\0')
			abort(); /* an error must always say what was wrong */
		mp_csv_close(r);
	} else if (err.msg[0] == '\0') {
		abort();
	}
	mp_frame_list_free(&frames);
	fclose(f);
	return 0;
}
