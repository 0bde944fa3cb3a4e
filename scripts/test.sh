#!/usr/bin/env bash
# The whole suite: go test over every package of the module (the flags
# given replace the default -race), then, where a test had to skip for
# want of a real part (Chromium, Prometheus, npm and the MCP peers), one
# line naming each and the command that installs it. The exit code is
# go test's. The collector is a module of its own: cd collector && go test ./...
#
#   scripts/test.sh            # go test -race ./...
#   scripts/test.sh -short     # go test -short ./...
set -uo pipefail
cd "$(dirname "$0")/.."

# A new directory each run: a test that misses a part reads its name, so
# go test runs it again rather than take its result (and lose its mark)
# from the cache (internal/realpart).
marks=$(mktemp -d "${TMPDIR:-/tmp}/mcptrace-parts.XXXXXX") || exit 2
trap 'rm -rf "$marks"' EXIT
if [ $# -eq 0 ]; then set -- -race; fi
MCPTRACE_MISSING_PARTS="$marks" go test "$@" ./...
rc=$?

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
