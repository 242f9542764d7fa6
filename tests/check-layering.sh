#!/bin/bash
# check-layering.sh - the layering rule of DESIGN.md section 1, checked on the
# '#include' lines of every .c and .h file under src/.
#
# usage: tests/check-layering.sh [SRCDIR]   (default: $top_srcdir/src, or the
# src/ beside this script's directory).  Exit 0 when clean, 1 with one line
# per violation, 99 when there is nothing to check.
#
# A file's layer is its first directory under src/ (util, store, import,
# analysis, replay, report, capture, live, cmd); files directly in src/ (main.c)
# are 'main'.  A layer may include its own headers and:
#   util      nothing else
#   store     util
#   import    store, util, and of capture only the spool (capture/spool_format.h,
#             capture/spool_reader.h, capture/spool_labels.h: a spool is a file
#             memprof imports)
#   analysis  util, and of store only the reader (store/reader.h, store/store.h)
#   replay    util, analysis, and of store only the reader
#   report    analysis, replay, util (never store: reports receive results)
#   capture   util (it runs inside the workload)
#   live      util, analysis, of capture only the spool (capture/spool_*.h),
#             of import only import/symbols.h (the live figures of record)
#   cmd       anything
#   main      cmd, util
# Nothing includes cmd/ but cmd/ and main; store/store_internal.h stays in
# store/; <sqlite3.h> only in store/; "memprof/..." public headers everywhere.
set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 0 ]; then
	src=$1
else
	src=${top_srcdir:-$here/..}/src
fi
src=${src%/}
if [ ! -d "$src" ]; then
	echo "check-layering: no source directory '$src'" >&2
	exit 99
fi

files=$(cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
if [ -z "$files" ]; then
	echo "check-layering: no .c or .h files under '$src'" >&2
	exit 99
fi
n_files=$(printf '%s\n' "$files" | grep -c '')

violations=$(cd "$src" && printf '%s\n' "$files" | sed 's|^\./||' | tr '\n' '\0' |
	xargs -0 awk '
function layer_known(l) {
	return l ~ /^(util|store|import|analysis|replay|report|capture|live|cmd|main)$/
}

# The layer of a path relative to src/.
function layer_of(path) {
	if (index(path, "/") == 0)
		return "main"
	return substr(path, 1, index(path, "/") - 1)
}

# Resolve a quoted include relative to the directory of the including file:
# "x.h", "./x.h", "../store/x.h".  Returns "" when it leaves src/.
function resolve(dir, hdr,    n, parts, out, i, k, res) {
	n = split((dir == "" ? "" : dir "/") hdr, parts, "/")
	k = 0
	for (i = 1; i <= n; i++) {
		if (parts[i] == "" || parts[i] == ".")
			continue
		if (parts[i] == "..") {
			if (k == 0)
				return ""
			k--
			continue
		}
		out[++k] = parts[i]
	}
	res = ""
	for (i = 1; i <= k; i++)
		res = res (i > 1 ? "/" : "") out[i]
	return res
}

function exists(path,    line, r) {
	r = (getline line < path)
	if (r >= 0)
		close(path)
	return r >= 0
}

function violation(shown, why) {
	printf "src/%s:%d: %s must not include %s (%s)\n", FILENAME, FNR, layer, shown, why
}

# The rule for layer including the project header at path (relative to src/).
function check(path, shown,    target, base) {
	target = layer_of(path)
	if (target == "main" && !exists(path))
		return # not a project header (config.h and the like)
	if (!layer_known(target))
		return
	if (path == "store/store_internal.h" && layer != "store")
		return violation(shown, "the store handle and SQL stay inside store/")
	if (target == "cmd" && layer != "cmd" && layer != "main")
		return violation(shown, "nothing includes cmd/ but cmd/ and main.c")
	if (target == layer || layer == "cmd")
		return
	if (layer == "main") {
		if (target != "util" && target != "cmd")
			violation(shown, "main.c dispatches to cmd/ and uses util/ only")
		return
	}
	if (layer == "util")
		return violation(shown, "util/ depends on no other layer")
	if (target == "util")
		return
	if (layer == "store")
		return violation(shown, "store/ depends on util/ only")
	if (layer == "import") {
		if (target == "capture") {
			if (path != "capture/spool_format.h" && path != "capture/spool_reader.h" &&
			    path != "capture/spool_labels.h")
				violation(shown, "import/ reads spools through capture/spool_reader.h, capture/spool_format.h and capture/spool_labels.h only")
			return
		}
		if (target != "store")
			violation(shown, "import/ writes through store/ and uses util/ only")
		return
	}
	if (layer == "analysis" || layer == "replay") {
		if (target == "store") {
			if (path != "store/reader.h" && path != "store/store.h")
				violation(shown, layer "/ reads the store through the reader only: store/reader.h, store/store.h")
			return
		}
		if (layer == "replay" && target == "analysis")
			return
		violation(shown, layer == "analysis" ? "analysis/ uses the reader and util/ only" \
			: "replay/ uses the reader, analysis/ and util/ only")
		return
	}
	if (layer == "report") {
		if (target == "store")
			violation(shown, "report/ receives results, never database handles")
		else if (target != "analysis" && target != "replay")
			violation(shown, "report/ uses analysis/, replay/ and util/ only")
		return
	}
	if (layer == "capture")
		return violation(shown, "capture/ runs inside the workload: util/ only")
	if (layer == "live") {
		if (target == "analysis" || (target == "capture" && path ~ /^capture\/spool_[a-z]+\.h$/) ||
		    path == "import/symbols.h")
			return
		violation(shown, "live/ uses util/, analysis/, capture/spool_*.h and import/symbols.h only")
		return
	}
}

FNR == 1 {
	layer = layer_of(FILENAME)
	dir = FILENAME
	if (!sub(/\/[^\/]*$/, "", dir))
		dir = ""
	if (!layer_known(layer))
		printf "src/%s:1: unknown layer '\''%s'\'': add it to the layering rule (DESIGN.md section 1, tests/check-layering.sh)\n", FILENAME, layer
}

/^[ \t]*#[ \t]*include[ \t]*[<"]/ {
	line = $0
	sub(/^[ \t]*#[ \t]*include[ \t]*/, "", line)
	open = substr(line, 1, 1)
	close_ch = open == "<" ? ">" : "\""
	hdr = substr(line, 2)
	end = index(hdr, close_ch)
	if (end == 0)
		next
	hdr = substr(hdr, 1, end - 1)
	shown = open hdr close_ch
	if (hdr == "sqlite3.h" || hdr ~ /\/sqlite3\.h$/) {
		if (layer != "store")
			violation(shown, "only store/ speaks SQL")
		next
	}
	if (open == "<" || hdr ~ /^memprof\//)
		next
	if (index(hdr, "/") == 0 || hdr ~ /^\.\.?\//)
		path = resolve(dir, hdr)
	else
		path = resolve("", hdr)
	if (path != "")
		check(path, shown)
}
')

if [ -n "$violations" ]; then
	printf '%s\n' "$violations"
	echo "check-layering: $(printf '%s\n' "$violations" | grep -c '') violation(s) of the layering rule (DESIGN.md section 1) in $n_files files" >&2
	exit 1
fi
echo "check-layering: $n_files files, no violations"
exit 0
