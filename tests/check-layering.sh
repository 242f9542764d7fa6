#!/bin/bash
# check-layering.sh - the layering rule of DESIGN.md section 1, checked on the
# '#include' lines of every .c and .h file under src/.
#
# usage: tests/check-layering.sh [SRCDIR]   (default: $top_srcdir/src, or the
# src/ beside this script's directory).  Exit 0 when clean, 1 with one line
# per violation, 99 when there is nothing to check.
#
# A file's layer is its first directory under src/ (util, store, spool, sys,
# import, analysis, replay, report, load, capture, live, cmd); files directly in src/
# (main.c) are 'main'.  A layer may include its own headers, util/'s and:
#   util      nothing else
#   store     nothing else
#   spool     nothing else (the spool file and the control socket: a format)
#   sys       nothing else (record's launch and its preparation, /proc, NVML)
#   capture   spool (it runs inside the workload)
#   import    store, spool
#   analysis  of store only the reader (store/reader.h, store/store.h) and the
#             spill of lifetime's evicted groups (store/group_spill.h)
#   replay    analysis, and of store only the reader
#   report    analysis, replay (never store: reports receive results)
#   load      analysis, report, and of store only the reader and the results
#   live      analysis, spool, and of import only import/symbols.h
#   cmd       anything
#   main      cmd
# One table (may[], only[] below) says all of it.  Nothing includes cmd/ but
# cmd/ and main; store/store_internal.h stays in store/; <sqlite3.h> only in
# store/; "memprof/..." public headers everywhere.
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
BEGIN {
	# may[L]: the layers L may include besides its own and util/.
	may["util"] = ""
	may["store"] = ""
	may["spool"] = ""
	may["sys"] = ""
	may["capture"] = "spool"
	may["import"] = "store spool"
	may["analysis"] = "store"
	may["replay"] = "store analysis"
	may["report"] = "analysis replay"
	may["load"] = "store analysis report"
	may["live"] = "analysis spool import"
	may["main"] = "cmd"
	# only[L, T]: of layer T, L may include these headers alone.
	only["analysis", "store"] = "store/reader.h store/store.h store/group_spill.h"
	only["replay", "store"] = "store/reader.h store/store.h"
	only["load", "store"] = "store/reader.h store/store.h store/results.h"
	only["live", "import"] = "import/symbols.h"
	# why[L]: what L is allowed, said in a violation.
	why["util"] = "util/ depends on no other layer"
	why["store"] = "store/ depends on util/ only"
	why["spool"] = "spool/ is a file format: util/ only"
	why["sys"] = "sys/ runs the system (a launched command, /proc, NVML): util/ only"
	why["capture"] = "capture/ runs inside the workload: spool/ and util/ only"
	why["import"] = "import/ writes through store/, reads spools through spool/, uses util/"
	why["analysis"] = "analysis/ reads the store through the reader only (store/reader.h, store/store.h), spills through store/group_spill.h, and uses util/"
	why["replay"] = "replay/ uses the reader, analysis/ and util/ only"
	why["report"] = "report/ receives results: analysis/, replay/ and util/ only, never database handles"
	why["load"] = "load/ reads a trace for the writers: the reader, store/results.h, analysis/, report/ and util/ only"
	why["live"] = "live/ uses util/, analysis/, spool/ and import/symbols.h only"
	why["main"] = "main.c dispatches to cmd/ and uses util/ only"
}

function layer_known(l) {
	return l == "cmd" || l in may
}

# Is the word w in the space-separated list?
function listed(w, list) {
	return index(" " list " ", " " w " ") > 0
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
function check(path, shown,    target) {
	target = layer_of(path)
	if (target == "main" && !exists(path))
		return # not a project header (config.h and the like)
	if (!layer_known(target))
		return
	if (path == "store/store_internal.h" && layer != "store")
		return violation(shown, "the store handle and SQL stay inside store/")
	if (target == "cmd" && layer != "cmd" && layer != "main")
		return violation(shown, "nothing includes cmd/ but cmd/ and main.c")
	if (target == layer || layer == "cmd" || target == "util")
		return
	if (!listed(target, may[layer]))
		return violation(shown, why[layer])
	if ((layer, target) in only && !listed(path, only[layer, target]))
		violation(shown, why[layer])
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

# docs/ARCHITECTURE.md says the same: each folder of src/ has a row in its
# table of parts, and each row names a folder that is there.
arch=$(dirname "$src")/docs/ARCHITECTURE.md
if [ -f "$arch" ]; then
	rows=$(sed -n 's/^| `src\/\([a-z]*\)\/` |.*/\1/p' "$arch" | LC_ALL=C sort -u)
	dirs=$(cd "$src" && find . -mindepth 1 -maxdepth 1 -type d ! -name '.*' | sed 's|^\./||' | LC_ALL=C sort -u)
	for d in $dirs; do
		printf '%s\n' "$rows" | grep -qx "$d" ||
			violations="$violations${violations:+
}docs/ARCHITECTURE.md: no row for src/$d/ in its table of parts (say what it owns and may include)"
	done
	for d in $rows; do
		[ -d "$src/$d" ] ||
			violations="$violations${violations:+
}docs/ARCHITECTURE.md: a row for src/$d/, which does not exist"
	done
fi

if [ -n "$violations" ]; then
	printf '%s\n' "$violations"
	echo "check-layering: $(printf '%s\n' "$violations" | grep -c '') violation(s) of the layering rule (DESIGN.md section 1) in $n_files files" >&2
	exit 1
fi
echo "check-layering: $n_files files, no violations"
exit 0
