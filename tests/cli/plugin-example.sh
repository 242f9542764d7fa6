#!/bin/bash
# plugin-example.sh - the example pool of memprof-plugin(7) builds out of tree
# with the flags memprof-plugin.pc gives, the loader loads it by path and by
# name, and it allocates as its comment says; and the man page quotes
# tests/plugins/example_bump.c verbatim, so the example cannot rot.
set -u
. "$(dirname "$0")/lib.sh"

example=$top_srcdir/tests/plugins/example_bump.c
page=$top_srcdir/man/memprof-plugin.7
probe=$top_builddir/tests/plugins/loader_probe
[ -f "$example" ] || die "no example at '$example'"
[ -f "$page" ] || die "no manual page at '$page'"
[ -x "$probe" ] || die "no loader_probe at '$probe' (it is built by 'make check')"

step "the manual page quotes the example verbatim"
# The display between the markers, with mdoc's escapes undone: \e is a
# backslash and a leading \& protects a line starting with '.'.
sed -n '/^\.\\" BEGIN EXAMPLE tests\/plugins\/example_bump\.c$/,/^\.\\" END EXAMPLE$/p' "$page" |
	sed '1d;$d' | sed '/^\.Bd -literal$/d; /^\.Ed$/d' | sed 's/^\\&//; s/\\e/\\/g' >"$TMP/quoted.c"
if [ -s "$TMP/quoted.c" ]; then pass; else fail "no example between the markers in '$page'"; fi
LAST_CMD=""
expect_same_file "$example" "$TMP/quoted.c"

step "it builds out of tree with the flags of memprof-plugin.pc"
command -v pkg-config >/dev/null 2>&1 || skip "no pkg-config"
[ -f "$top_builddir/memprof-plugin.pc" ] || die "no memprof-plugin.pc in '$top_builddir'"
cflags=$(PKG_CONFIG_PATH=$top_builddir pkg-config --define-variable=includedir="$top_srcdir/include" \
	--cflags memprof-plugin) || die "pkg-config --cflags memprof-plugin failed"
# shellcheck disable=SC2086 # word splitting drops the trailing space
expect_eq "$(echo $cflags)" "-I$top_srcdir/include" "pkg-config --cflags memprof-plugin"
# shellcheck disable=SC2086 # cflags is a list of flags
run "${CC:-cc}" -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror \
	-shared -fPIC $cflags "$example" -o "$TMP/bump.so"
expect_status 0
expect_stderr_empty

step "the loader loads it by path, by name and in a listing"
run "$probe" open "$TMP/bump.so"
expect_status 0
expect_stdout_line "bump $TMP/bump.so"
mkdir "$TMP/dir" && cp "$TMP/bump.so" "$TMP/dir/bump.so" || die "cannot copy bump.so"
run "$probe" open bump "$TMP/dir"
expect_status 0
expect_stdout_line "bump $TMP/dir/bump.so"
run "$probe" list "$TMP/dir"
expect_status 0
expect_stdout_line "bump $TMP/dir/bump.so"

step "it bumps, runs out at the end of its arena, and resets when empty"
# A 4096-byte arena at the fake host's first address, 2^40.  1000 bytes take
# 1024 at +0; 1 takes 256 at +1024; 3000 (3072) no longer fits in the 2816
# left.  Both freed, the arena resets: 3000 takes 3072 at +0 and 0 bytes
# take 256 at +3072 (0xc00); freeing both resets it again.
cat >"$TMP/expected" <<END
bump $TMP/bump.so
create: ok
alloc 1000: 0x10000000000 1024
alloc 1: 0x10000000400 256
alloc 3000: ENOMEM
free 0: ok
free 1: ok
alloc 3000: 0x10000000000 3072
alloc 0: 0x10000000c00 256
free 2: ok
free 3: ok
stat arena_bytes 4096 bytes
stat resets 2 count
after destroy: reserved 0 peak 4096 reserve calls 1 release calls 1 live regions 0
END
run "$probe" run "$TMP/bump.so" arena-bytes=4096 -- a1000 a1 a3000 f0 f1 a3000 a0 f2 f3
expect_status 0
expect_same_file "$TMP/expected" "$OUT"

step "its default arena is 1 GiB"
run "$probe" run "$TMP/bump.so" -- a10
expect_status 0
expect_stdout_line "alloc 10: 0x10000000000 256"
expect_stdout_line "stat arena_bytes 1073741824 bytes"
expect_stdout_line "after destroy: reserved 0 peak 1073741824 reserve calls 1 release calls 1 live regions 0"

step "a bad option value is refused, naming the option and the value"
for v in lots -5 0 99999999999999999999 ""; do
	run "$probe" run "$TMP/bump.so" "arena-bytes=$v" --
	expect_status 1
	expect_stdout_line "create: EINVAL: invalid arena-bytes '$v': give a positive number of bytes"
done

finish
