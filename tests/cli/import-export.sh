#!/bin/bash
# import-export.sh - CSV -> trace -> CSV: canonical fixtures come back byte for
# byte, non-canonical input comes back canonical (and stays so), and the
# output rules (-o, --force, the default name, standard input, --format).
set -u
. "$(dirname "$0")/lib.sh"

CANONICAL="small info pids header durations"
W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# --- canonical fixtures round-trip byte for byte --------------------------------
for f in $CANONICAL; do
	step "round trip of $f.csv"
	mp import -o "$W/$f.db" "$DATA/$f.csv"
	expect_status 0
	expect_stdout_contains "wrote '$W/$f.db': "
	expect_file_present "$W/$f.db"
	mp export "$W/$f.db"
	expect_status 0
	expect_stderr_empty
	cp "$OUT" "$W/$f.out.csv"
	expect_same_file "$DATA/$f.csv" "$W/$f.out.csv"
done

step "import counts of small.csv"
mp import -o "$W/small2.db" "$DATA/small.csv"
expect_status 0
expect_stdout_line "wrote '$W/small2.db': 14 events, 4 allocations"
expect_stderr_contains "memprof import: warning: 1 frees of unknown addresses kept as unmatched"

step "import --quiet prints only warnings"
mp import -q -o "$W/quiet.db" "$DATA/small.csv"
expect_status 0
expect_stdout_empty
expect_stderr_contains "warning: 1 frees of unknown addresses"
expect_file_present "$W/quiet.db"

# --- non-canonical input ------------------------------------------------------------
# noncanon.csv: columns in another order, comments, blank lines, spaces around
# numbers, an empty requested, decimal addresses, hex streams, a quoted number.
# minimal.csv: only the required columns.  Both export to known canonical text.
sed 's/$/\r/' "$DATA/noncanon.csv" >"$W/noncanon-crlf.csv"
if grep -q "$(printf '\r')" "$W/noncanon-crlf.csv"; then pass; else die "could not make a CRLF copy"; fi
for f in "$DATA/noncanon.csv" "$W/noncanon-crlf.csv" "$DATA/minimal.csv"; do
	base=$(basename "$f" .csv)
	expected=$DATA/${base%-crlf}.expected.csv
	step "non-canonical $base.csv"
	mp import -o "$W/$base.db" "$f"
	expect_status 0
	mp export -o "$W/$base.e1.csv" "$W/$base.db"
	expect_status 0
	expect_stdout_empty
	expect_same_file "$expected" "$W/$base.e1.csv"

	step "import(export(db)) of $base.csv is stable"
	mp import -o "$W/$base.2.db" "$W/$base.e1.csv"
	expect_status 0
	mp export -o "$W/$base.e2.csv" "$W/$base.2.db"
	expect_status 0
	expect_same_file "$W/$base.e1.csv" "$W/$base.e2.csv"
done

# --- export -o ----------------------------------------------------------------------------
step "export -o writes the file"
mp export -o "$W/out.csv" "$W/small.db"
expect_status 0
expect_stdout_empty
expect_stderr_empty
expect_same_file "$DATA/small.csv" "$W/out.csv"
expect_no_temp_files "$W"

step "export -o refuses an existing file"
printf 'precious\n' >"$W/precious.csv"
cp "$W/precious.csv" "$W/precious.orig"
mp export -o "$W/precious.csv" "$W/small.db"
expect_status 1
expect_stderr_contains "'$W/precious.csv'"
expect_stderr_contains "--force"
expect_stdout_empty
expect_same_file "$W/precious.orig" "$W/precious.csv"
expect_no_temp_files "$W"

step "export --output=FILE --force replaces it"
mp export --force --output="$W/precious.csv" "$W/small.db"
expect_status 0
expect_same_file "$DATA/small.csv" "$W/precious.csv"
expect_no_temp_files "$W"

step "export -f -o (short options)"
mp export -f -o "$W/precious.csv" "$W/info.db"
expect_status 0
expect_same_file "$DATA/info.csv" "$W/precious.csv"

step "export --format=csv"
mp export --format=csv "$W/small.db"
expect_status 0
cp "$OUT" "$W/fmt.csv"
expect_same_file "$DATA/small.csv" "$W/fmt.csv"

step "export --format=nope is a usage error"
mp export --format=nope -o "$W/nope.csv" "$W/small.db"
expect_status 2
expect_stderr_contains "'nope'"
expect_file_absent "$W/nope.csv"

step "export of a missing trace with -o writes nothing"
mp export -o "$W/never.csv" "$W/missing.db"
expect_status 1
expect_file_absent "$W/never.csv"
expect_no_temp_files "$W"

# --- import from standard input -------------------------------------------------------------
step "import - -o TRACE (standard input)"
run_stdin "$DATA/small.csv" "$MEMPROF" import -o "$W/stdin.db" -
expect_status 0
expect_stdout_contains "wrote '$W/stdin.db': 14 events"
mp export "$W/stdin.db"
expect_status 0
cp "$OUT" "$W/stdin.csv"
expect_same_file "$DATA/small.csv" "$W/stdin.csv"

step "import --format=csv from a pipe"
LAST_CMD="cat small.csv | memprof import --format=csv -o pipe.db -"
cat "$DATA/small.csv" | "$MEMPROF" import --format=csv -o "$W/pipe.db" - >"$OUT" 2>"$ERR"
status=$?
expect_status 0
mp export "$W/pipe.db"
cp "$OUT" "$W/pipe.csv"
expect_same_file "$DATA/small.csv" "$W/pipe.csv"

step "import from a pipe without --format"
# Detection may need to seek: then the import must fail cleanly and say to
# name the format; if it succeeds, the trace must be right.
LAST_CMD="cat small.csv | memprof import -o pipe2.db -"
cat "$DATA/small.csv" | "$MEMPROF" import -o "$W/pipe2.db" - >"$OUT" 2>"$ERR"
status=$?
if [ "$status" -eq 0 ]; then
	mp export "$W/pipe2.db"
	cp "$OUT" "$W/pipe2.csv"
	expect_same_file "$DATA/small.csv" "$W/pipe2.csv"
else
	expect_status 1
	expect_one_message "memprof import: "
	expect_stderr_contains "--format"
	expect_file_absent "$W/pipe2.db"
	expect_no_temp_files "$W"
fi

# --- the default output name ---------------------------------------------------------------
step "import dir/x.csv writes ./x.db"
mkdir -p "$W/in/dir" "$W/cwd"
cp "$DATA/small.csv" "$W/in/dir/x.csv"
(cd "$W/cwd" && "$MEMPROF" import ../in/dir/x.csv) >"$OUT" 2>"$ERR"
status=$?
LAST_CMD="cd cwd && memprof import ../in/dir/x.csv"
expect_status 0
expect_stdout_contains "wrote 'x.db'"
expect_file_present "$W/cwd/x.db"
expect_file_absent "$W/in/dir/x.db"
expect_file_absent "$W/cwd/x.csv.db"
expect_no_temp_files "$W/cwd"

step "import refuses an existing default output"
cp "$W/cwd/x.db" "$W/x.db.orig"
cp "$DATA/info.csv" "$W/in/dir/x.csv"
(cd "$W/cwd" && "$MEMPROF" import ../in/dir/x.csv) >"$OUT" 2>"$ERR"
status=$?
LAST_CMD="cd cwd && memprof import ../in/dir/x.csv (x.db exists)"
expect_status 1
expect_stderr_contains "'x.db'"
expect_stderr_contains "--force"
expect_same_file "$W/x.db.orig" "$W/cwd/x.db"
expect_no_temp_files "$W/cwd"

step "import -o refuses an existing file"
printf 'not a trace\n' >"$W/keep.db"
cp "$W/keep.db" "$W/keep.orig"
mp import -o "$W/keep.db" "$DATA/small.csv"
expect_status 1
expect_stderr_contains "'$W/keep.db'"
expect_stderr_contains "--force"
expect_stdout_empty
expect_same_file "$W/keep.orig" "$W/keep.db"
expect_no_temp_files "$W"

step "import --force replaces it"
mp import --force -o "$W/keep.db" "$DATA/info.csv"
expect_status 0
mp export "$W/keep.db"
expect_status 0
cp "$OUT" "$W/keep.csv"
expect_same_file "$DATA/info.csv" "$W/keep.csv"
expect_no_temp_files "$W"

step "import -f replaces the default output"
(cd "$W/cwd" && "$MEMPROF" import -f ../in/dir/x.csv) >"$OUT" 2>"$ERR"
status=$?
LAST_CMD="cd cwd && memprof import -f ../in/dir/x.csv"
expect_status 0
mp export "$W/cwd/x.db"
cp "$OUT" "$W/x.csv"
expect_same_file "$DATA/info.csv" "$W/x.csv"

# --- --format ------------------------------------------------------------------------------------
step "import --format=csv"
mp import --format=csv -o "$W/fmt.db" "$DATA/small.csv"
expect_status 0
expect_file_present "$W/fmt.db"

step "import --format=nope is a usage error"
mp import --format=nope -o "$W/nope.db" "$DATA/small.csv"
expect_status 2
expect_stderr_contains "'nope'"
expect_stdout_empty
expect_file_absent "$W/nope.db"

# --- output files follow the umask like any new file -------------------------------------------
step "new files honour the umask"
(umask 022 && "$MEMPROF" import -q -o "$W/mode.db" "$DATA/small.csv" &&
	"$MEMPROF" export -o "$W/mode.csv" "$W/mode.db") >"$OUT" 2>"$ERR"
status=$?
LAST_CMD="umask 022; memprof import -o mode.db small.csv; memprof export -o mode.csv mode.db"
expect_status 0
for f in "$W/mode.db" "$W/mode.csv"; do
	mode=$(stat -c %a "$f" 2>/dev/null)
	expect_eq "$mode" 644 "mode of $(basename "$f") written under umask 022"
done

# --- what the database holds ----------------------------------------------------------------------
if have_sqlite3; then
	for f in $CANONICAL; do
		step "sqlite3 view of $f.db"
		expect_eq "$(sql "$W/$f.db" 'PRAGMA user_version;')" 3 "PRAGMA user_version"
		expect_eq "$(sql "$W/$f.db" "SELECT value FROM meta WHERE key = 'format';")" \
			memprof-trace "meta format"
		expect_eq "$(sql "$W/$f.db" "SELECT value FROM meta WHERE key = 'source';")" \
			csv "meta source"
		n=$(($(grep -c '' "$DATA/$f.csv") - 1))
		[ "$f" = small ] && n=14 # one record of small.csv spans two lines
		expect_eq "$(sql "$W/$f.db" 'SELECT count(*) FROM events;')" "$n" "event count"
	done
	step "sqlite3 view of small.db"
	expect_eq "$(sql "$W/small.db" 'SELECT count(*) FROM processes;')" 2 "processes"
	expect_eq "$(sql "$W/small.db" "SELECT count(*) FROM events WHERE op = 8 AND device_free IS NOT NULL;")" \
		2 "oom events with device_free"
	expect_eq "$(sql "$W/small.db" "SELECT name FROM phases WHERE name LIKE 'say%';")" \
		'say "hi"' "phase with doubled quotes"
	expect_eq "$(sql "$W/small.db" "SELECT name || '|' || file || '|' || line FROM frames WHERE line = 7;")" \
		'a;b@c\d|dir:x.py|7' "escaped stack frame"
	expect_eq "$(sql "$W/small.db" "SELECT count(*) FROM sqlite_master WHERE name LIKE '%tmp%';")" \
		0 "no stray tables"
else
	say "SQLITE3_SHELL is empty: database checks skipped"
fi

finish
