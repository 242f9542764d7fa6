#!/bin/sh
# man-lint.sh - every manual page under man/ passes 'mandoc -Tlint -W warning'
# with no output.  Automake test protocol: 0 pass, 1 fail, 77 skip (no mandoc).

: "${top_srcdir:=$(dirname "$0")/..}"

if ! command -v mandoc >/dev/null 2>&1; then
	echo "SKIP: mandoc not found"
	exit 77
fi

status=0
n=0
for page in "$top_srcdir"/man/*.[1-9]; do
	[ -f "$page" ] || continue
	n=$((n + 1))
	out=$(mandoc -Tlint -W warning "$page" 2>&1)
	rc=$?
	if [ -n "$out" ] || [ "$rc" -ne 0 ]; then
		printf '%s\n' "$out"
		echo "FAIL: $page (mandoc exit $rc)"
		status=1
	fi
done

if [ "$n" -eq 0 ]; then
	echo "FAIL: no manual pages in '$top_srcdir/man'"
	exit 1
fi
[ "$status" -eq 0 ] && echo "PASS: $n manual pages"
exit "$status"
