#!/usr/bin/env bash
# bench-scaling.sh measures how `mcptrace check` scales: the CPU
# time per unit at a small and a large size of the same generated shape,
# in the same run, and fails when the large size costs more than BOUND
# times the small one per unit (a quadratic step shows as a ratio of about
# the size factor: 16x and more). Three shapes:
#   executions  5k -> 80k executions, each a trace on a session of its own
#               (the value table grows with them), the built-in rules;
#   spans       10k -> 1M spans (100-span traces), the built-in rules;
#   names       10 -> 100k distinct span names matched by a rule's regex.
# CPU time (user + system, the best of RUNS) rather than wall time, so a
# loaded machine changes the ratio little; the load average is printed
# with the figures. With OUT set, the figures go into OUT under
# "## Scaling".
#
# Usage: scripts/bench-scaling.sh   (env: RUNS=3 BOUND=2 OUT= SHAPES="executions spans names"
#        BIN= a built mcptrace to measure instead of building this tree)
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib/benchmarks.sh
RUNS=${RUNS:-3}
BOUND=${BOUND:-2}
OUT=${OUT:-}
SHAPES=${SHAPES:-executions spans names}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log() { printf 'bench-scaling: %s\n' "$*" >&2; }

if [ -n "${BIN:-}" ]; then
	cp "$BIN" "$tmp/mcptrace" # another build, e.g. an older commit's, to compare
else
	go build -o "$tmp/mcptrace" ./cmd/mcptrace
fi

# gen N SPANS_PER_TRACE NAMES: N traces of OTLP JSON lines, each a root
# and SPANS_PER_TRACE-1 tool calls on the trace's own session; the calls'
# names cycle through NAMES distinct names.
gen() {
	awk -v n="$1" -v k="$2" -v names="$3" 'BEGIN {
		for (i = 1; i <= n; i++) {
			t = sprintf("%032x", i); s = 1777539600000000000 + i * 1000000
			printf "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"w\"}}]},\"scopeSpans\":[{\"spans\":["
			printf "{\"traceId\":\"%s\",\"spanId\":\"%016x\",\"name\":\"executor.execute\",\"kind\":1,\"startTimeUnixNano\":\"%d\",\"endTimeUnixNano\":\"%d\"}", t, i * 1000, s, s + 900000
			for (j = 1; j < k; j++) {
				printf ",{\"traceId\":\"%s\",\"spanId\":\"%016x\",\"parentSpanId\":\"%016x\",\"name\":\"call.%d\",\"kind\":3,\"startTimeUnixNano\":\"%d\",\"endTimeUnixNano\":\"%d\",\"attributes\":[{\"key\":\"mcp.method.name\",\"value\":{\"stringValue\":\"tools/call\"}},{\"key\":\"mcp.session.id\",\"value\":{\"stringValue\":\"sess-%d\"}}]}", t, i * 1000 + j, i * 1000, ((i - 1) * (k - 1) + j) % names, s + j, s + 800000, i
			}
			printf "]}]}]}\n"
		}
	}'
}

cat >"$tmp/names.yaml" <<'YAML'
rules:
  - id: calls-by-name
    scope: trace
    select: {name_regex: '^call\.[0-9]+$'}
    expect: {of: count, op: "<=", than: 1000}
YAML

# cpu FILE [ARGS...]: the best CPU seconds (user + system) of RUNS checks.
cpu() {
	local file=$1 best="" t
	shift
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f '%U %S' -o "$tmp/time" "$tmp/mcptrace" check "$@" "$file" >/dev/null 2>"$tmp/err" || true
		grep -q 'panic\|fatal' "$tmp/err" && { cat "$tmp/err" >&2; exit 1; }
		t=$(tail -n 1 "$tmp/time" | awk '{ printf "%.3f", $1 + $2 }')
		if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
	done
	echo "$best"
}

rows=()
failed=0
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# The process's fixed cost (start, rules, output), subtracted from every
# figure: a one-trace dump.
gen 1 2 1 >"$tmp/base.jsonl"
base=$(cpu "$tmp/base.jsonl")
base_names=$(cpu "$tmp/base.jsonl" --config "$tmp/names.yaml")
log "fixed cost: ${base} s CPU (${base_names} s with the names rule)"

# measure NAME UNIT SPANS_PER_TRACE NAMES SIZES [ARGS...]: per-unit CPU at
# each of SIZES (units: executions, spans or names; NAMES "all" gives every
# call its own name), the ratio taken between the last two sizes (the
# smallest is too quick for a 10 ms clock: shown for reference).
measure() {
	local name=$1 unit=$2 k=$3 names=$4 sizes=$5
	shift 5
	local fixed=$base
	[ "$name" = names ] && fixed=$base_names
	local per=() size traces nn file secs cells=""
	for size in $sizes; do
		traces=$((size / k))
		nn=$names
		[ "$names" = all ] && nn=$size
		file="$tmp/$name-$size.jsonl"
		if [ "$name" = names ]; then gen "$size" 2 "$nn" >"$file"; else gen "$traces" "$k" "$nn" >"$file"; fi
		secs=$(cpu "$file" "$@")
		# Unrounded: the check judges the ratio of these, never of a print.
		per+=("$(with_verdict 'BEGIN { if (!isfigure(s) || !isfigure(f)) { print "n/a"; exit } d = s - f; if (d < 0) d = 0; printf "%.17g", d / n * 1e6 }' \
			-v s="$secs" -v f="$fixed" -v n="$size")")
		cells="$cells $size: $(figure "${per[-1]}" '%.3f') µs ($secs s);"
		log "$name: $size $unit: ${secs} s CPU"
		rm -f "$file"
	done
	# The last size's time per unit over the one before: n/a when either
	# is not known or the smaller is 0 (below what the CPU clock tells),
	# which fails the check as surely as a ratio over the bound does.
	local n=${#per[@]} ratio verdict=ok
	ratio=$(with_verdict 'BEGIN { if (!isfigure(a) || !isfigure(b) || a <= 0) print "n/a"; else printf "%.17g", b / a }' -v a="${per[n-2]}" -v b="${per[n-1]}")
	case $(goal_verdict "$ratio" '<=' "$BOUND") in
	met) ;;
	"NOT met") verdict="FAIL (over ${BOUND}x)" failed=1 ;;
	*) verdict="FAIL (no figure)" failed=1 ;;
	esac
	rows+=("| $name | ${cells# } | $(judged "$ratio" '%.2f' '<=' "$BOUND" x) | $verdict |")
}

for s in $SHAPES; do
	case $s in
	executions) measure executions executions 2 1 "5000 20000 80000" ;;
	spans) measure spans spans 100 50 "10000 62500 1000000" ;;
	names) measure names names 1 all "10 6250 100000" --config "$tmp/names.yaml" ;;
	*) log "unknown shape $s"; exit 2 ;;
	esac
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

{
	echo "## Scaling"
	echo
	echo "\`scripts/bench-scaling.sh\` on $(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD) on $(nproc) CPUs, load average $load_before before and $load_after after. CPU time (user + system) of \`mcptrace check\`, the best of $RUNS runs, less the fixed cost of checking a one-trace dump ($base s; $base_names s with the names rule), per unit, at each size (CPU seconds in brackets); the ratio is the per-unit cost at the largest size over the next size (4x or 16x smaller), and the run fails past ${BOUND}x (a quadratic step gives the size factor)."
	echo
	echo "| shape | per unit at each size | ratio | verdict |"
	echo "|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
} >"$tmp/section.md"
cat "$tmp/section.md"
if [ -n "$OUT" ]; then
	write_section "$OUT" "Scaling" "$tmp/section.md"
fi
exit "$failed"
