/*
 * util/pipe_tee.h - a stream that cannot seek (a pipe, standard input) read
 * twice: a first reader's bytes are kept in an unlinked temporary file as it
 * reads them, and a second reader gets them all again from the start, then
 * the rest of the stream.  For the pickle's fetch count
 * (import/pickle_fetches.c), which must see the opcodes before the machine
 * runs them.  Only what the first reader read is kept, so a stream refused
 * at its first bytes costs no more than those.  The file is in $TMPDIR
 * (else /tmp), never in a tmpfs, and goes away when the second reader is
 * closed.
 */
#ifndef MP_UTIL_PIPE_TEE_H
#define MP_UTIL_PIPE_TEE_H

#include <stdint.h>
#include <stdio.h>

struct mp_pipe_tee;

/*
 * Start keeping what is read of in.  NULL (errno set) when no temporary
 * file could be made, when $TMPDIR is a tmpfs or ramfs (EXDEV: the copy
 * would be memory), or no memory was left; nothing of in was read then.
 * Everything the tee needs is allocated here: nothing after can fail for
 * want of memory.
 */
struct mp_pipe_tee *mp_pipe_tee_open(FILE *in);
/*
 * The same, the copy stopping (as at a full disk, below) before it leaves
 * fewer than reserve bytes free on its file system, or 5% of it
 * (mp_pipe_tee_open: 1 GiB), looked at every 64 MiB: a pipe's copy never
 * fills the disk that others write to.
 */
struct mp_pipe_tee *mp_pipe_tee_open_leaving(FILE *in, uint64_t reserve);

/*
 * The first reader's stream: in's bytes, each kept as it is read.  A byte
 * that could not be kept (a full disk, or one near its reserve) ends this
 * stream with a read error; the second reader still gets it.
 */
FILE *mp_pipe_tee_first(struct mp_pipe_tee *t);

/*
 * Close the first reader and return the second: every byte of in from where
 * the tee was opened, those kept first.  A read error of in is met again at
 * the same byte.  The caller closes it (which frees t); in stays open.
 */
FILE *mp_pipe_tee_again(struct mp_pipe_tee *t);

#endif
