#!/bin/sh
# criterion-tap.sh - run a Criterion suite so that it reports in TAP, one
# line per test case, for Automake's tap-driver.
exec "$@" --tap=- --jobs=1
