#!/bin/bash
# hostile-text.sh - strings of a trace that are not clean text (issue 23
# items 6 and 7), from tests/tools/make_hostile_text.py: bytes that are not
# UTF-8, terminal escapes, CR, BEL, DEL, '@'.  Every JSON output is valid
# UTF-8 (each byte of an invalid sequence as U+FFFD, the rest kept); the
# text outputs show control characters as visible escapes, never raw; the
# Markdown of check and diff escapes '@'.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
# The CSV's own name is hostile too: it is the trace's meta source_file.
CSV=$(printf 'h\033]0;title\007\377.csv')
python3 "$top_srcdir/tests/tools/make_hostile_text.py" "$CSV" || die "make_hostile_text.py"
"$MEMPROF" import -q -o h.db "$CSV" 2>/dev/null || die "cannot import the hostile CSV"
"$MEMPROF" import -q -o clean.db "$DATA/small.csv" 2>/dev/null || die "cannot import small.csv"

# json_ok FILE WHAT: FILE is strict UTF-8 JSON, and the hostile strings came
# through repaired, not dropped: U+FFFD where the bytes were, the rest kept.
json_ok() {
	if msg=$(python3 - "$1" <<'PY' 2>&1
import json, sys
raw = open(sys.argv[1], "rb").read()
text = raw.decode("utf-8")  # strict: raises on any invalid byte
json.loads(text)
strings = []
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items(): walk(k); walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
    elif isinstance(v, str):
        strings.append(v)
walk(json.loads(text))
assert any("\ufffd" in s for s in strings), "no U+FFFD: the hostile strings are missing"
assert not any("\udcff" in s for s in strings), "a lone surrogate"
PY
); then pass; else fail "$2: $(printf '%s' "$msg" | tail -2)"; fi
}

step "analyze --json"
mp analyze --json h.db
expect_status 0
json_ok "$OUT" "analyze --json"
if python3 -c '
import json, sys
j = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
s = json.dumps(j, ensure_ascii=False)
assert "ph\ufffd\ufffd(\\u001b[2J" in s, "the phase name was not kept around the repair"
assert "f\ufffd\ufffd\ufffdx" in s, "the frame name was not kept around the repair"
' "$OUT" 2>"$W/py.err"; then pass; else fail "analyze --json content: $(tail -1 "$W/py.err")"; fi

step "check --format=json and --json=FILE"
mp check --format=json --json=check.json h.db
expect_status 0
json_ok "$OUT" "check --format=json"
json_ok check.json "check --json=FILE"

step "diff --format=json"
mp diff --format=json clean.db h.db
expect_status 0
json_ok "$OUT" "diff --format=json"

step "info --json"
mp info --json h.db
expect_status 0
json_ok "$OUT" "info --json"

step "export --format=perfetto"
mp export --format=perfetto h.db
expect_status 0
json_ok "$OUT" "export --format=perfetto"

# text_ok FILE WHAT: no byte a terminal obeys (C0 but newline and tab, DEL,
# C1 as UTF-8, bytes that are not UTF-8), and the hostile strings are there,
# made visible.
text_ok() {
	if msg=$(python3 - "$1" "$3" <<'PY' 2>&1
import re, sys
raw = open(sys.argv[1], "rb").read()
bad = re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", raw)
assert not bad, "a raw control byte 0x%02x at %d" % (raw[bad.start()], bad.start())
text = raw.decode("utf-8")  # strict: every byte is UTF-8
c1 = re.search("[\x80-\x9f\u202a-\u202e\u2066-\u2069]", text)
assert not c1, "a raw C1 or bidi control at %d" % c1.start()
want = sys.argv[2]
assert want in text, "'%s' is not shown" % want
PY
); then pass; else fail "$2: $(printf '%s' "$msg" | tail -1)"; fi
}

FRAME_SHOWN='f\xed\xa0\x80x\x1b]8;;http://e.example'
PHASE_SHOWN='ph\xff\xc3(\x1b[2J\x1b]0;pwned\x07\x0dend @team'

step "analyze (text)"
mp analyze --by=all h.db
expect_status 0
text_ok "$OUT" "analyze" "$FRAME_SHOWN"
text_ok "$OUT" "analyze phases" "$PHASE_SHOWN"

step "check and diff (text and Markdown)"
mp check --md=check.md --text=check.txt h.db
expect_status 0
text_ok "$OUT" "check" "$FRAME_SHOWN"
text_ok check.txt "check --text=FILE" "$FRAME_SHOWN"
text_ok check.md "check --md=FILE" "\\xc2\\x9b \\@team"
mp diff --format=md clean.db h.db
expect_status 0
text_ok "$OUT" "diff --format=md" "\\xc2\\x9b \\@team"
if grep -q '[^\]@team' "$OUT"; then fail "diff --format=md: '@team' is not escaped"; else pass; fi
mp diff clean.db h.db
expect_status 0
text_ok "$OUT" "diff" "$FRAME_SHOWN"

step "report --format=md"
mp report --format=md h.db
expect_status 0
text_ok "$OUT" "report --format=md" "\\xc2\\x9b \\@team"

step "info (text)"
mp info h.db
expect_status 0
text_ok "$OUT" "info" 'h\x1b]0;title\x07\xff.csv'

step "an error message naming a hostile file"
mp analyze "nothere$CSV"
expect_status 1
text_ok "$ERR" "the message" 'nothereh\x1b]0;title\x07\xff.csv'

finish
