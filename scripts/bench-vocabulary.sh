#!/usr/bin/env bash
# bench-vocabulary.sh measures what the event model and vocabulary detection
# cost the analyzer, as ratios against baselines measured in the same run, and
# writes them into BENCHMARKS.md under "## Vocabulary stage and detection",
# leaving the other sections as they are:
#   - the vocabulary stage: analyze.Analyze over one loaded index of the
#     benchmark dump (BenchmarkMeasuresOverAnIndex), this tree against BASE
#     (default b658693, a tree without the event model), the benchmark file
#     copied into BASE's tree; both test binaries built first, then run in
#     interleaved rounds (base, head, base, head, ...) so each pair sees the
#     same load; per round the head/base ratio, reported as median (min – max);
#   - detection: BenchmarkAnalyzeAutoAgainstDefault, which alternates profile
#     auto and the default profile in each iteration and reports auto's time
#     over default's (x-default) and the detection pass's share of a whole
#     analysis (detect-share).
#
# Usage: scripts/bench-vocabulary.sh   (env: SPANS=300000 ROUNDS=5 BASE=b658693 OUT=BENCHMARKS.md)
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib/benchmarks.sh
SPANS=${SPANS:-300000}
ROUNDS=${ROUNDS:-5}
BASE=${BASE:-b658693}
OUT=${OUT:-BENCHMARKS.md}
root=$(pwd)

tmp=$(mktemp -d)
cleanup() {
	git -C "$root" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

log() { printf 'bench-vocabulary: %s\n' "$*" >&2; }

log "building the baseline ($BASE) and this tree's analyze test binaries"
git -C "$root" worktree add -q --detach "$tmp/base" "$BASE"
# The baseline may predate the engine's own package: its tests sat in analyze/.
base_pkg=analyze/internal/engine
[ -d "$tmp/base/$base_pkg" ] || base_pkg=analyze
cp analyze/internal/engine/bench_measures_test.go "$tmp/base/$base_pkg/"
sed -i "1s/^package .*/package $(basename "$base_pkg")/" "$tmp/base/$base_pkg/bench_measures_test.go"
(cd "$tmp/base" && go test -c -o "$tmp/base.test" "./$base_pkg")
go test -c -o "$tmp/head.test" ./analyze/internal/engine

# nsop SIDE prints the ns/op of one run of BenchmarkMeasuresOverAnIndex.
nsop() {
	(cd analyze/internal/engine && MCPTRACE_BENCH_SPANS=$SPANS "$tmp/$1.test" -test.run '^$' \
		-test.bench '^BenchmarkMeasuresOverAnIndex$' -test.benchtime 5x) |
		awk '/^BenchmarkMeasuresOverAnIndex/ { for (i = 1; i <= NF; i++) if ($(i+1) == "ns/op") print $i }'
}

: >"$tmp/stage"
for r in $(seq "$ROUNDS"); do
	log "stage round $r/$ROUNDS"
	b=$(nsop base)
	h=$(nsop head)
	echo "$b $h" >>"$tmp/stage"
done

: >"$tmp/detect"
for r in $(seq "$ROUNDS"); do
	log "detection round $r/$ROUNDS"
	(cd analyze/internal/engine && MCPTRACE_BENCH_SPANS=$SPANS "$tmp/head.test" -test.run '^$' \
		-test.bench '^BenchmarkAnalyzeAutoAgainstDefault$' -test.benchtime 3x) |
		awk '/^BenchmarkAnalyzeAutoAgainstDefault/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "x-default") x = $i; if ($(i+1) == "detect-share") d = $i } print x, d }' >>"$tmp/detect"
done

# stats COLUMN FILE prints "median (min – max)" of a column.
stats() {
	sort -g -k"$1","$1" "$2" | awk -v c="$1" '{ v[NR] = $c } END { printf "%.3f (%.3f – %.3f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
awk '{ print $1 / 1e6, $2 / 1e6, $2 / $1 }' "$tmp/stage" >"$tmp/stage.ms"

section=$tmp/section.md
{
	echo "## Vocabulary stage and detection"
	echo
	echo "What the event model and vocabulary detection cost the analyzer:"
	echo "\`analyze.Analyze\` over one loaded index of the benchmark dump ($SPANS spans,"
	echo "our vocabulary), this tree against $BASE (a tree without the event model) with"
	echo "the same benchmark file, in $ROUNDS interleaved rounds of 5 analyses each;"
	echo "and detection (\`--profile auto\`, the default) against the default profile,"
	echo "alternated in each iteration of one benchmark."
	echo
	echo "- Machine: $(nproc) CPUs, $(go env GOOS)/$(go env GOARCH), $(go env GOVERSION), GOMAXPROCS $(nproc); $(date -u '+%Y-%m-%d %H:%M') UTC; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
	echo "- Reproduce: \`scripts/bench-vocabulary.sh\` (env SPANS, ROUNDS, BASE)."
	echo
	echo "| measure | median (min – max) |"
	echo "| --- | --- |"
	echo "| baseline ms per analysis | $(stats 1 "$tmp/stage.ms") |"
	echo "| event model ms per analysis | $(stats 2 "$tmp/stage.ms") |"
	echo "| event model / baseline, per round | $(stats 3 "$tmp/stage.ms") |"
	echo "| auto / default (x-default) | $(stats 1 "$tmp/detect") |"
	echo "| detection pass / whole analysis (detect-share) | $(stats 2 "$tmp/detect") |"
} >"$section"
write_section "$OUT" "Vocabulary stage and detection" "$section"
cat "$section"
