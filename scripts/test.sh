#!/usr/bin/env bash
# The whole suite: go test over every package of the module (the flags
# given replace the default -race), then, where a test had to skip for
# want of a real part (Chromium, Prometheus, npm and the MCP peers), one
# line naming each and the command that installs it. Under the default
# -race, the tests that skip themselves under the race detector (too slow,
# or bounds of memory its shadow breaks) then run without it. The exit
# code is go test's, the first that failed. The collector is a module of
# its own: cd collector && go test ./...
#
#   scripts/test.sh            # go test -race ./..., then without -race the packages that skip tests under it
#   scripts/test.sh -short     # go test -short ./...
set -uo pipefail
cd "$(dirname "$0")/.."

# A new directory each run: a test that misses a part reads its name, so
# go test runs it again rather than take its result (and lose its mark)
# from the cache (internal/realpart).
marks=$(mktemp -d "${TMPDIR:-/tmp}/mcptrace-parts.XXXXXX") || exit 2
trap 'rm -rf "$marks"' EXIT
default=0
if [ $# -eq 0 ]; then default=1; set -- -race; fi
MCPTRACE_MISSING_PARTS="$marks" go test "$@" ./...
rc=$?
if [ "$default" = 1 ]; then
  # The packages with tests that skip under the race detector (too slow
  # there, or bounds of memory its shadow breaks) say so with a
  # race_on_test.go setting raceEnabled; run them again without it.
  pkgs=$(git ls-files '*race_on_test.go' | xargs -r -n1 dirname | sed 's|^|./|' | sort -u)
  if [ -n "$pkgs" ]; then
    echo "== without -race, the packages whose tests skip some under it: $(echo $pkgs)"
    # shellcheck disable=SC2086
    MCPTRACE_MISSING_PARTS="$marks" go test $pkgs
    r=$?
    if [ $rc -eq 0 ]; then rc=$r; fi
  fi
fi

shopt -s nullglob
parts=()
for f in "$marks"/[a-z0-9]*; do
  parts+=("$(head -c 300 "$f" | head -n 1)")
done
if [ ${#parts[@]} -gt 0 ]; then
  line=$(printf '%s; ' "${parts[@]}")
  echo "skipped for want of a real part: ${line%; }"
fi
exit $rc
