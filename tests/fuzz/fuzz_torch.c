/*
 * tests/fuzz/fuzz_torch.c - fuzz target for the pickle reader and the
 * PyTorch snapshot importer: any bytes go to mp_pickle_load_buffer, and
 * those it reads go end to end through mp_import_files (format torch) into
 * a scratch trace (under /dev/shm or $TMPDIR).  Either must succeed or
 * fail with a message; never crash, hang or leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/import.h"
#include "import/pickle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], in_path[96], out_path[96];

static void cleanup(void)
{
	unlink(in_path);
	unlink(out_path);
	rmdir(dir);
}

static int scratch(void)
{
	const char *tmp = getenv("TMPDIR");

	if (dir[0])
		return 0;
	if (!tmp || strlen(tmp) >= 40) /* memory, not disk: each import syncs its trace */
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof(dir), "%s/fuzz-torch.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		dir[0] = '\0';
		return -1;
	}
	snprintf(in_path, sizeof(in_path), "%s/in.pickle", dir);
	snprintf(out_path, sizeof(out_path), "%s/out.db", dir);
	atexit(cleanup);
	return 0;
}

/* The pickle reader alone: 1 when the bytes are a pickle it reads. */
static int parse_only(const uint8_t *data, size_t size)
{
	struct mp_pickle *p = NULL;
	struct mp_error err = {0};
	int64_t i;

	if (mp_pickle_load_buffer(&p, data, size, "fuzz.pickle", &err) < 0) {
		if (err.msg[0] == '\0' || p)
			abort(); /* an error must say what was wrong, and leave nothing */
		return 0;
	}
	mp_pk_int(mp_pk_get(mp_pickle_root(p), "size"), &i);
	mp_pickle_free(p);
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mp_import_opts o = {.format = "torch", .overwrite = 1, .tool_version = "fuzz"};
	struct mp_import_stats st;
	struct mp_error err = {0};
	FILE *f;

	/* The importer reads the same bytes with the same reader first: what
	 * the reader refuses would stop there, so only the rest goes on to the
	 * (slower, SQLite) import end to end. */
	if (!parse_only(data, size) || scratch() < 0 || !(f = fopen(in_path, "wb")))
		return 0;
	if (fwrite(data, 1, size, f) != size) {
		fclose(f);
		return 0;
	}
	fclose(f);
	memset(&st, 0, sizeof(st));
	if (mp_import_files((const char *const[]){in_path}, 1, out_path, &o, &st, &err) < 0 &&
	    err.msg[0] == '\0')
		abort();
	unlink(in_path);
	unlink(out_path);
	return 0;
}
