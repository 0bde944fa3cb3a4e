#!/usr/bin/env bash
# test-times.sh says where the test suite's time goes: it runs go test -json
# over both modules (with the flags given, e.g. -race or -short) and prints,
# as Markdown, the wall time of each package's test binary, slowest first,
# and the slowest tests (top level, subtests folded in), with the machine's
# load before and after. Time is elapsed, not CPU: a package's tests that
# run in parallel overlap, and packages run side by side (go test -p).
#
# Usage: scripts/test-times.sh [GO TEST FLAGS...]   (env: TOP=20 tests listed)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=${TOP:-20}
command -v jq >/dev/null || { echo "test-times: needs jq (apt-get install jq)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)
rc=0
go test -json -count=1 "$@" ./... >"$tmp/main.json" || rc=$?
mid=$(date +%s)
(cd collector && go test -json -count=1 "$@" ./...) >"$tmp/collector.json" || rc=$?
end=$(date +%s)
wall=$(( end - start ))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
cat "$tmp/main.json" "$tmp/collector.json" >"$tmp/all.json"

echo "go test $* ./... (both modules) on $(nproc) CPUs, $(go version | cut -d' ' -f3): ${wall} s wall in all ($(( mid - start )) s the main module, the README's command; $(( end - mid )) s collector/), exit $rc; load average $load_before before, $load_after after."
echo
echo "| package | wall s | result |"
echo "|---|---:|---|"
jq -r 'select(.Test == null and (.Action == "pass" or .Action == "fail" or .Action == "skip") and .Elapsed != null)
	| [(.Package | sub("^github.com/mcptrace/mcptrace/?"; "") | if . == "" then "." else . end), .Elapsed, .Action] | @tsv' "$tmp/all.json" |
	sort -t$'\t' -k2,2gr | awk -F'\t' '$2 >= 1 { printf "| %s | %.1f | %s |\n", $1, $2, $3 } $2 < 1 { fast++ } END { if (fast) printf "| %d more under 1 s | | |\n", fast }'
echo
echo "The $TOP slowest tests (top level; subtests included in their parent):"
echo
echo "| test | package | wall s |"
echo "|---|---|---:|"
jq -r 'select(.Test != null and (.Test | contains("/") | not) and (.Action == "pass" or .Action == "fail") and .Elapsed != null)
	| [.Test, (.Package | sub("^github.com/mcptrace/mcptrace/?"; "")), .Elapsed] | @tsv' "$tmp/all.json" |
	sort -t$'\t' -k3,3gr | awk -F'\t' -v top="$TOP" 'NR <= top { printf "| %s | %s | %.1f |\n", $1, $2, $3 }'
exit "$rc"
