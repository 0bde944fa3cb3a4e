#!/usr/bin/env bash
# bench-versus.sh measures `mcptrace analyze` against the tools a user would
# pick instead to get the pool's hit rate out of an exported trace dump, all
# on the same generated dump (internal/tracegen's benchmark workload of the
# pool's vocabulary), side by side:
#   - `mcptrace analyze --format json` of the OTLP JSON lines (the reference)
#     and of the length-prefixed protobuf of the same spans;
#   - DuckDB (internal/benchtools/duckhit, its own module so the main go.mod
#     stays free of it): read_json with DuckDB's defaults, unnest, count;
#   - jq computing the hit rate (JQ_HIT_RATE of scripts/lib/benchmarks.sh, as bench-analyze.sh);
#   - pdata's ptrace.JSONUnmarshaler decoding each line and counting, on one
#     goroutine (internal/benchtools/pdatacount);
#   - `cat FILE >/dev/null` from memory: the floor of reading the bytes at
#     all.
# The dumps live in memory when it has room for them (dumps_dir of
# scripts/lib/benchmarks.sh).
# Each round runs every tool once, in that order (interleaved, so each
# ratio compares runs made next to each other on this shared machine); the
# wall time is taken with date around the run, CPU (user + sys) and max RSS
# with /usr/bin/time. Every run's answer (acquires and hits) is held against
# the generator's own count of the batches it generated (pdatacount -truth):
# a tool that disagrees, or fails, stops the script with a non-zero status.
# Writes the table into BENCHMARKS.md under "## Versus other tools", leaving
# the other sections as they are. jq is installed with apt-get when missing;
# DuckDB is built with cgo from the Go module proxy, and its row says why
# when that fails.
#
# Goals: mcptrace >= 10x DuckDB and >= 10x the pdata loop in wall time,
# >= 40x jq, within 8x of cat (cat's wall / mcptrace's >= 1/8), protobuf
# >= 2x cheaper per span in CPU than JSON lines, mcptrace's max RSS < 128 MiB.
# Before the rounds, the reference run is timed on each CPU alone and on
# all of them (core_costs of scripts/lib/benchmarks.sh; taskset), and the
# section says what it found.
#
# Usage: scripts/bench-versus.sh
#   env: SPANS=10000000 RUNS=5 OUT=BENCHMARKS.md
#        SKIP="duckdb jq"  (any of: proto duckdb jq pdata cat)
# The backquotes in single quotes below are Markdown, not expansions.
# shellcheck disable=SC2016
set -euo pipefail
export LC_ALL=C

cd "$(dirname "$0")/.."
# shellcheck source=lib/benchmarks.sh source-path=SCRIPTDIR disable=SC1091
. scripts/lib/benchmarks.sh
SPANS=${SPANS:-10000000}
RUNS=${RUNS:-5}
OUT=${OUT:-BENCHMARKS.md}
SKIP=${SKIP:-}

tmp=$(mktemp -d)
dumps_shm=""
trap 'rm -rf "$tmp" ${dumps_shm:+"$dumps_shm"}' EXIT

log() { printf 'bench-versus: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The rows, in the order each round runs them; json is the reference.
TOOLS="json proto duckdb jq pdata cat"
for s in $SKIP; do
	case " $TOOLS " in
	*" $s "*) [ "$s" != json ] || die "SKIP: json is the reference row and cannot be skipped" ;;
	*) die "SKIP: unknown tool \"$s\" (any of: proto duckdb jq pdata cat)" ;;
	esac
done
# skip_reason KEY: why KEY's row is not run, empty when it is.
declare -A skipped=()
for s in $SKIP; do skipped[$s]="SKIP=\"$SKIP\""; done
skip_reason() { printf '%s' "${skipped[$1]:-}"; }

[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
ensure_jq
# jq and DuckDB read the vocabulary from spans/vocab.go (pdatacount
# imports it).
pool_vocab || die "no vocabulary"

log "building mcptrace, the generator and pdatacount"
go build -o "$tmp/mcptrace" ./cmd/mcptrace
go build -o "$tmp/gen" ./internal/tracegen/gen
go build -o "$tmp/pdatacount" ./internal/benchtools/pdatacount

duck_version=""
if [ -z "$(skip_reason duckdb)" ]; then
	log "building internal/benchtools/duckhit (DuckDB through cgo, its own module)"
	if ! (cd internal/benchtools/duckhit && CGO_ENABLED=1 go build -o "$tmp/duckhit" .) >"$tmp/duck-build.log" 2>&1; then
		reason=$(grep -v '^[[:space:]]*$' "$tmp/duck-build.log" | tail -n1 | tr '|' '/' | cut -c1-160)
		skipped[duckdb]="cannot build internal/benchtools/duckhit: ${reason:-go build failed}"
		log "DuckDB is skipped: ${skipped[duckdb]}"
	fi
fi

dumps_dir "$SPANS"

log "generating $SPANS spans as OTLP JSON lines and length-prefixed protobuf"
"$tmp/gen" -bench "$SPANS" -encoding otlp-jsonl -o "$dumps/bench.jsonl"
[ -n "$(skip_reason proto)" ] || "$tmp/gen" -bench "$SPANS" -encoding otlp-proto -o "$dumps/bench.pb"

# The truth: the generator's batches counted as generated, before any
# encoding or decoding.
truth=$("$tmp/pdatacount" -truth "$SPANS")
truth_ah=$(jq -c '{acquires, hits}' <<<"$truth")
truth_ahs=$(jq -c '{acquires, hits, spans}' <<<"$truth")
spans=$(jq .spans <<<"$truth")
log "the generator wrote $truth"


# command_of KEY: sets cmd to the command line of KEY's row and dest to
# where its standard output goes.
command_of() {
	dest="$tmp/out.$1"
	case $1 in
	json) cmd=("$tmp/mcptrace" analyze --format json "$dumps/bench.jsonl") ;;
	proto) cmd=("$tmp/mcptrace" analyze --format json "$dumps/bench.pb") ;;
	duckdb) cmd=("$tmp/duckhit" "$dumps/bench.jsonl" "$SPAN_ACQUIRE" "$ATTR_CACHE_HIT") ;;
	jq) cmd=(jq -n -c --arg acq "$SPAN_ACQUIRE" --arg hit "$ATTR_CACHE_HIT" "$JQ_HIT_RATE" "$dumps/bench.jsonl") ;;
	pdata) cmd=("$tmp/pdatacount" "$dumps/bench.jsonl") ;;
	cat)
		cmd=(cat "$dumps/bench.jsonl")
		dest=/dev/null
		;;
	esac
}

# check KEY: holds the answer KEY's run printed against the generator's
# (the span count too where the tool reports one); exits on a difference.
check() {
	local got want=$truth_ah filter='{acquires, hits}'
	case $1 in
	cat) return 0 ;;
	json | proto) filter='{acquires: .pool.acquires, hits: .pool.hits, spans}' want=$truth_ahs ;;
	pdata) filter='{acquires, hits, spans}' want=$truth_ahs ;;
	esac
	got=$(jq -c "$filter" "$tmp/out.$1" 2>/dev/null) || got="unreadable output: $(head -c 200 "$tmp/out.$1")"
	[ "$got" = "$want" ] || die "WRONG ANSWER from $1 (${cmd[0]##*/}): $got; the generator wrote $want"
}

# timed KEY: runs KEY's row once and appends "wall cpu rss_kb" to t.KEY:
# wall from date around the run, CPU (user + sys) and max RSS from
# /usr/bin/time.
timed() {
	local s e
	command_of "$1"
	s=$(date +%s.%N)
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time.$1" "${cmd[@]}" >"$dest" 2>"$tmp/err.$1" ||
		die "$1 failed (${cmd[0]##*/}): $(tail -q -n3 "$tmp/err.$1" "$tmp/time.$1" | tr '\n' ' ')"
	e=$(date +%s.%N)
	check "$1"
	tail -n1 "$tmp/time.$1" | awk -v s="$s" -v e="$e" '{ printf "%.4f %.3f %d\n", e - s, $2 + $3, $4 }' >>"$tmp/t.$1"
}

json_bytes=$(stat -c %s "$dumps/bench.jsonl")
longest_line=$(wc -L <"$dumps/bench.jsonl")
pb_size="no protobuf: skipped"
if [ -f "$dumps/bench.pb" ]; then
	pb_size="$(stat -c %s "$dumps/bench.pb" | awk '{ printf "%.0f", $1 / 1e6 }') MB of length-prefixed protobuf of the same spans"
fi
warm_dumps "$dumps/bench.jsonl" "$dumps/bench.pb"

# What the reference run costs on each CPU alone and on both: whether the
# CPUs are alike, and what the reference's goroutines pay for sharing them.
log "timing the reference run on each CPU alone and on all of them"
cores=$(core_costs 3 "$tmp/mcptrace" analyze --format json "$dumps/bench.jsonl")
log "$cores"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$SECONDS
log "timing $TOOLS, $RUNS interleaved rounds"
for r in $(seq "$RUNS"); do
	for k in $TOOLS; do
		[ -n "$(skip_reason "$k")" ] || timed "$k"
	done
	log "round $r of $RUNS (wall, s): $(for k in $TOOLS; do if [ -f "$tmp/t.$k" ]; then printf '%s %s  ' "$k" "$(tail -n1 "$tmp/t.$k" | cut -d' ' -f1)"; fi; done)"
done
rounds_secs=$((SECONDS - started))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
if [ -z "$(skip_reason duckdb)" ]; then duck_version=$(jq -r .duckdb "$tmp/out.duckdb"); fi

lo() { sort -g | head -n1; }
hi() { sort -g | tail -n1; }
# num X [OP GOAL]: X with 3 significant figures or more, for the tables;
# beside a goal (OP GOAL) with the digits it takes not to round onto the
# goal's other side (verdict.awk's judged); n/a when X is no figure
# (scripts/lib/verdict.awk), never a 0.
num() {
	with_verdict 'BEGIN { a = x < 0 ? -x : x; f = a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%#.3g"
		print op == "" ? figure(x, f) : judged(x, f, op, goal) }' -v x="$1" -v op="${2:-}" -v goal="${3:-}"
}
# goal_of KEY: the operator and the figure KEY's wall ratio is judged
# against, for the table's cell and the Goals list alike; nothing for a
# row without a goal.
goal_of() {
	case $1 in
	duckdb | pdata) echo '>= 10' ;;
	jq) echo '>= 40' ;;
	cat) echo '>= 0.125' ;;
	esac
}
# col KEY N: column N of KEY's rounds (1 wall, 2 CPU, 3 max RSS in KiB).
col() { cut -d' ' -f"$2" "$tmp/t.$1"; }
# per_round KEY N: per round, KEY's column N over the reference's (a
# round whose reference is 0 has no ratio, not a ratio of 0).
# Unrounded: a goal judges the ratio itself, never a print of it.
per_round() { paste -d' ' <(col "$1" "$2") <(col json "$2") | awk '$2 > 0 { printf "%.17g\n", $1 / $2 }'; }
# spread [OP GOAL]: "median (min – max)" of the numbers on stdin, the
# median judged against the goal when there is one (num).
spread() {
	local v
	v=$(cat)
	printf '%sx (%s – %s)' "$(num "$(median <<<"$v")" "$@")" "$(num "$(lo <<<"$v")")" "$(num "$(hi <<<"$v")")"
}

label() {
	case $1 in
	json) printf '`mcptrace analyze --format json`, OTLP JSON lines' ;;
	proto) printf '`mcptrace analyze --format json`, length-prefixed protobuf' ;;
	duckdb) printf 'DuckDB%s `read_json` + unnest (defaults)' "${duck_version:+ $duck_version}" ;;
	jq) printf '%s, JQ_HIT_RATE of scripts/lib/benchmarks.sh' "$(jq --version)" ;;
	pdata) printf 'pdata %s `ptrace.JSONUnmarshaler` per line + count, one goroutine' "$(go list -m -f '{{.Version}}' go.opentelemetry.io/collector/pdata)" ;;
	cat) printf '`cat FILE >/dev/null` of the JSON lines (%s)' "$(cat --version | head -n1 | sed 's/^cat (\(.*\)) /\1 /')" ;;
	esac
}
# row KEY: the Markdown row of KEY's tool.
row() {
	local why
	why=$(skip_reason "$1")
	if [ -n "$why" ]; then
		printf '| %s | skipped: %s | | | |\n' "$(label "$1")" "$why"
		return
	fi
	local wall cpu rss ratio="—"
	wall="$(num "$(col "$1" 1 | median)") s ($(num "$(col "$1" 1 | lo)") – $(num "$(col "$1" 1 | hi)"))"
	cpu=$(num "$(col "$1" 2 | median)")
	rss="$(col "$1" 3 | median | awk '{ printf "%.0f", $1 / 1024 }') MiB"
	if [ "$1" != json ]; then
		# shellcheck disable=SC2046 # goal_of's two words are spread's two arguments
		ratio="$(per_round "$1" 1 | spread $(goal_of "$1")) / $(per_round "$1" 2 | spread)"
		# /usr/bin/time counts CPU in 10 ms ticks: a run under one has no ratio.
		# shellcheck disable=SC2046
		if [ "$(col "$1" 2 | lo)" = 0.000 ]; then ratio="$(per_round "$1" 1 | spread $(goal_of "$1")) / n/a (CPU under 10 ms)"; fi
	fi
	printf '| %s | %s | %s | %s | %s |\n' "$(label "$1")" "$wall" "$cpu" "$rss" "$ratio"
}
rows=$(for k in $TOOLS; do row "$k"; done)

# The goals, each the median of its per-round ratios.
goal_ratio() { if [ -n "$(skip_reason "$1")" ]; then echo n/a; else per_round "$1" "$2" | median; fi; }
g_duck=$(goal_ratio duckdb 1)
g_pdata=$(goal_ratio pdata 1)
g_jq=$(goal_ratio jq 1)
g_cat=$(goal_ratio cat 1)
# JSON's CPU per span over protobuf's: the same spans, so the CPU ratio.
g_pb=n/a
if [ -z "$(skip_reason proto)" ]; then
	paste -d' ' <(col json 2) <(col proto 2) | awk '$2 > 0 { printf "%.17g\n", $1 / $2 }' >"$tmp/x_pb"
	g_pb=$(median <"$tmp/x_pb")
	us_json=$(col json 2 | median | awk -v n="$spans" '{ printf "%.3f", 1e6 * $1 / n }')
	us_pb=$(col proto 2 | median | awk -v n="$spans" '{ printf "%.3f", 1e6 * $1 / n }')
fi
rss_max=$(for k in json proto; do if [ -f "$tmp/t.$k" ]; then col "$k" 3; fi; done | hi | awk '{ printf "%.17g", $1 / 1024 }')
# shown X OP GOAL: a goal's figure X, judged against it (num).
shown() { if [ "$1" = n/a ]; then echo "n/a (skipped)"; else printf '%sx' "$(num "$@")"; fi; }
# goal_line KEY: a wall ratio goal's figure and verdict.
# shellcheck disable=SC2046 # goal_of's two words are two arguments
goal_line() { printf '%s, %s' "$(shown "$1" $(goal_of "$2"))" "$(goal_verdict "$1" $(goal_of "$2"))"; }
pb_line="protobuf skipped: $(skip_reason proto)"
[ -n "$(skip_reason proto)" ] || pb_line="JSON lines ${us_json} µs of CPU per span, protobuf ${us_pb} µs: protobuf is $(shown "$g_pb" '>=' 2) cheaper (rounds: $(num "$(lo <"$tmp/x_pb")") – $(num "$(hi <"$tmp/x_pb")"))"
hit_rate=$(jq -r '.hits / .acquires * 10000 | round / 100' <<<"$truth")

tree="a clean tree"
[ -z "$(git status --porcelain --untracked-files=no)" ] || tree="with uncommitted changes"

section=$(mktemp -p "$tmp")
cat >"$section" <<EOF
## Versus other tools

Generated by \`scripts/bench-versus.sh\` on $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD) ($tree):
$(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)),
$(go version | cut -d' ' -f3), mcptrace $(pgo_of "$tmp/mcptrace"), load average $load_before before the rounds and $load_after after (the
machine is shared: wall times are noisy; each ratio compares runs made next
to each other). Dump: $spans spans of the pool vocabulary from
\`internal/tracegen\` ($(awk -v b="$json_bytes" 'BEGIN { printf "%.0f", b / 1e6 }') MB of OTLP JSON lines,
$pb_size), both $dumps_where. Rounds: $RUNS, each running every tool once,
in the order of the table; wall time from \`date +%s.%N\` around the run, CPU
and max RSS from \`/usr/bin/time -f '%e %U %S %M'\`; medians over the rounds,
each ratio the median of its per-round ratios (min – max), the tool's wall
or CPU over \`mcptrace analyze\`'s of the JSON lines in the same round
(below 1x: that row's run is the faster one, as mcptrace's own protobuf
run may be). The wall cell is the median (min – max) of the rounds.
Every mcptrace run is the whole command: process start, decode, index,
measures and the JSON report.
mcptrace and DuckDB use both cores (their defaults), jq and the pdata loop
one (plus the Go runtime's GC for pdata), whichever the scheduler gives them.
The reference run, \`mcptrace analyze --format json\` of the JSON lines,
before the rounds: $cores
On a virtual machine the CPUs need not be alike (the host may run another
guest beside one of them), and a run on both pays for each cache line its
goroutines hand across: its CPU over the fastest CPU's alone is what its
second core costs in all (1x: nothing).

| tool | wall, median | CPU-s (user+sys, median) | max RSS | mcptrace is … faster (wall / CPU) |
|---|---:|---:|---:|---:|
$rows

Every run's answer was checked: each tool's acquires and hits (and
mcptrace's and the pdata loop's span count) equal the generator's own count
of the batches it generated, before encoding (\`pdatacount -truth $SPANS\`,
\`internal/benchtools/pdatacount\`): $(jq -r '"\(.acquires) acquires, \(.hits) hits"' <<<"$truth"), a hit rate of ${hit_rate}%.
DuckDB is \`internal/benchtools/duckhit\` (its own Go module, duckdb-go
v2.10506.0 through cgo): one query, \`read_json\` of the file with DuckDB's
defaults (format and schema detected; the default maximum_object_size, 16 MB,
holds the dump's longest line, $(awk -v b="$longest_line" 'BEGIN { printf "%.2f", b / 1e6 }') MB) and an \`unnest\` per level down to the spans.

Goals:

- mcptrace ≥ 10x DuckDB in wall time: $(goal_line "$g_duck" duckdb)
- mcptrace ≥ 10x the pdata decode-and-count loop in wall time: $(goal_line "$g_pdata" pdata)
- mcptrace ≥ 40x jq in wall time: $(goal_line "$g_jq" jq)
- mcptrace within 8x of \`cat\` (cat's wall / mcptrace's ≥ 0.125): $(goal_line "$g_cat" cat)
- protobuf ≥ 2x cheaper per span in CPU than JSON lines: $pb_line, $(goal_verdict "$g_pb" '>=' 2)
- mcptrace's max RSS < 128 MiB (the largest of every mcptrace run, both dumps): $(judged "$rss_max" '%.1f' '<' 128 ' MiB'), $(goal_verdict "$rss_max" '<' 128)

EOF

write_section "$OUT" "Versus other tools" "$section"
log "wrote the \"Versus other tools\" section of $OUT (the rounds took ${rounds_secs}s, the whole run ${SECONDS}s)"
cat "$section"
