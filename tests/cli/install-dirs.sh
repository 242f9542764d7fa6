#!/bin/sh
# tests/cli/install-dirs.sh - a new prefix rebuilds what embeds it: the install
# directories memprof compiles in (where it looks for its pools and its injected
# library) come from src/util/install_dirs.h, generated from the configured
# directories, and the objects that embed them depend on it (issue 22 item 19: after a
# first build, './bootstrap --prefix=P && make install' kept /usr/local).  Checks that the
# header holds the Makefile's pkglibdir, that make would rebuild memprof's loader and
# record objects if it changed (make -n -W), and that it is rewritten only when its text
# changes.  Skips (77) without GNU make's dependency files (--disable-dependency-tracking).
top_builddir=${top_builddir:-.}
b=$top_builddir
h=$b/src/util/install_dirs.h
fail=0
[ -f "$h" ] || { echo "not ok - no $h"; exit 1; }
ls "$b"/src/replay/.deps/*loader* >/dev/null 2>&1 ||
	{ echo "install-dirs: SKIP: no dependency files (built with --disable-dependency-tracking)"; exit 77; }
want=$(make -s -C "$b" --no-print-directory -f Makefile -f - print-pkglibdir <<'MK'
print-pkglibdir:
	@echo $(pkglibdir)
MK
)
if grep -qF "#define MEMPROF_PLUGIN_DIR \"$want\"" "$h" && grep -qF "#define MEMPROF_PKGLIBDIR \"$want\"" "$h"; then
	echo "ok - the header holds pkglibdir ($want)"
else
	echo "not ok - the header does not hold pkglibdir '$want':"; sed 's/^/# /' "$h"; fail=1
fi
plan=$(make -n -C "$b" -W src/util/install_dirs.h memprof 2>&1)
for o in loader record_setup; do
	if printf '%s\n' "$plan" | grep -q "$o\.\(l\)*o\b\|$o\.c"; then
		echo "ok - a changed header rebuilds $o"
	else
		echo "not ok - a changed header would not rebuild $o"; fail=1
	fi
done
before=$(stat -c %Y "$h")
sleep 1
touch "$b/Makefile"
make -s -C "$b" src/util/install_dirs.h >/dev/null 2>&1
if [ "$(stat -c %Y "$h")" = "$before" ]; then
	echo "ok - regenerating with the same directories leaves the header (and every object) alone"
else
	echo "not ok - the header was rewritten with the same text"; fail=1
fi
exit $fail
