/*
 * tests/fuzz/replay_main.c - runs a fuzz target over files given on the
 * command line (the corpus), so 'make check' replays every input found so
 * far with the ordinary compiler and sanitizers of the build.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf;
		long n;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fseek(f, 0, SEEK_SET);
		buf = malloc((size_t)n + 1);
		if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
			fprintf(stderr, "%s: cannot read\n", argv[i]);
			return 1;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)n);
		free(buf);
	}
	printf("replayed %d inputs\n", argc - 1);
	return 0;
}
