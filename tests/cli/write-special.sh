#!/bin/bash
# write-special.sh - outputs that exist and are not regular files (/dev/null,
# a FIFO) are written to as they are, never replaced: the temporary-file-and-
# rename rule of util/outfile would otherwise put a plain file in place of the
# device node or the pipe (as root, even /dev/null).
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
"$MEMPROF" import -q -o "$W/small.db" "$DATA/small.csv" || die "cannot import small.csv"

step "export -o /dev/null writes nothing anywhere and leaves /dev/null a device"
mp export -o /dev/null "$W/small.db"
expect_status 0
expect_stderr_empty
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
expect_no_temp_files /dev

step "export into a FIFO: the reader gets the CSV, the FIFO stays a FIFO"
mkfifo "$W/pipe" || die "mkfifo"
cat "$W/pipe" >"$W/from-pipe.csv" &
reader=$!
mp export -o "$W/pipe" "$W/small.db"
expect_status 0
wait "$reader"
[ -p "$W/pipe" ] || fail "the FIFO was replaced"
mp export "$W/small.db"
cp "$OUT" "$W/direct.csv"
expect_same_file "$W/direct.csv" "$W/from-pipe.csv"

step "a directory as the output is refused, naming it"
mkdir "$W/adir"
mp export -o "$W/adir" "$W/small.db"
expect_status 1
expect_stderr_contains "cannot write '$W/adir': it is a directory"
expect_dir_empty "$W/adir"

finish
