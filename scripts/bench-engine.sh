#!/usr/bin/env bash
# bench-engine.sh measures the whole `mcptrace analyze` (the batch engine,
# its default) on generated dumps of OTLP JSON lines (internal/tracegen's
# benchmark workload) of each size in SIZES, against `cat FILE >/dev/null`
# (a page-cache read) in the same rounds, interleaved, at GOMAXPROCS=PROCS.
# It prints, per size, spans/s and ns per span (min/median/max over RUNS
# rounds of wall time) and the fraction of the page-cache read's speed the
# analysis reaches, with the machine's load before and after. It writes
# nothing but its temporary files.
#
# Usage: scripts/bench-engine.sh   (env: SIZES="250000 1000000 4000000" RUNS=3 PROCS=2 ARGS="")
# ARGS are extra `mcptrace analyze` flags, e.g. ARGS="--window 1m --max-open-traces 100000".
set -euo pipefail

cd "$(dirname "$0")/.."
SIZES=${SIZES:-"250000 1000000 4000000"}
RUNS=${RUNS:-3}
PROCS=${PROCS:-2}
ARGS=${ARGS:-}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log() { printf 'bench-engine: %s\n' "$*" >&2; }

go build -o "$tmp/mcptrace" ./cmd/mcptrace

# wall CMD...: the wall time of one run, in seconds.
wall() {
	local s e
	s=$(date +%s.%N)
	"$@" >/dev/null
	e=$(date +%s.%N)
	echo "$e - $s" | bc -l
}
# stats: min median max of the numbers on stdin.
stats() { sort -g | awk '{a[NR]=$1} END {printf "%s %s %s\n", a[1], a[int((NR+1)/2)], a[NR]}'; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); GOMAXPROCS=$PROCS; $RUNS interleaved rounds; args: ${ARGS:-none}"
echo
echo "| spans | MB | analyze s (min/med/max) | spans/s (median) | ns/span (median) | cat s (median) | fraction of cat |"
echo "|---|---|---|---|---|---|---|"
for n in $SIZES; do
	f="$tmp/bench-$n.jsonl"
	go run ./internal/tracegen/gen -bench "$n" -encoding otlp-jsonl -o "$f" 2>/dev/null
	spans=$(GOMAXPROCS=$PROCS "$tmp/mcptrace" analyze --format json $ARGS "$f" | sed -n 's/^  "spans": \([0-9]*\),$/\1/p')
	mb=$(du -m "$f" | cut -f1)
	cat "$f" >/dev/null # warm the page cache
	: >"$tmp/a"
	: >"$tmp/c"
	for _ in $(seq "$RUNS"); do
		wall env GOMAXPROCS="$PROCS" "$tmp/mcptrace" analyze --format json $ARGS "$f" >>"$tmp/a"
		wall cat "$f" >>"$tmp/c"
	done
	read -r amin amed amax < <(stats <"$tmp/a")
	read -r _ cmed _ < <(stats <"$tmp/c")
	printf '| %s | %s | %.2f / %.2f / %.2f | %.0f | %.0f | %.3f | %.3f |\n' "$spans" "$mb" "$amin" "$amed" "$amax" \
		"$(echo "$spans / $amed" | bc -l)" "$(echo "$amed * 1000000000 / $spans" | bc -l)" "$cmed" "$(echo "$cmed / $amed" | bc -l)"
	rm -f "$f"
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
