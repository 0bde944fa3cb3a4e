#!/usr/bin/env bash
# bench-engine.sh measures the whole `mcptrace analyze` command (the
# incremental engine fed by the readers) on generated dumps of the pool
# vocabulary (internal/tracegen, time-ordered), and writes the figures into
# BENCHMARKS.md under "## Engine", leaving the other sections as they are:
#
#   1. throughput on 2 cores, SPANS (default 4M) spans of OTLP JSON lines,
#      against a page-cache read of the same file (`cat FILE >/dev/null`),
#      the same file with one more line at the end holding a span of its
#      first trace (the speculative run gives up at it and reads the file
#      again, holding every trace: its worst case) and, when BASE_REV is
#      set, the same command built at that commit, interleaved round by
#      round;
#   2. time per span at 250k, 1M, 4M and 16M spans (prefixes of one file:
#      each line is one export batch of about 900 spans), against the 250k
#      figure;
#   3. streaming: STREAM_SPANS (default 20M) spans piped from the generator
#      into `mcptrace analyze --window 30s --max-open-traces 100000 -`, its
#      peak RSS, and its figures against a batch run of the same stream.
#
# and, in its own section "## Batch memory by dump size":
#
#   4. peak RSS and whole-command throughput of a batch run over files at
#      MEM_SIZES (default 1M, 2M, 4M, 8M and 16M spans; prefixes of one
#      time-ordered dump), against the command built at BASE_REV in the
#      same rounds, interleaved (new, then base, at each size, ROUNDS
#      times; ROUNDS_LARGEST at the largest size, the costliest), with the
#      first round's reports compared byte for byte, the RSS's growth per
#      million spans from the smallest size to the largest, and the goal's
#      verdict;
#
# and, in "## Batch instructions by dump size":
#
#   5. the instructions each binary executes on the same files at IR_SIZES
#      (default 1M and 4M spans), counted by valgrind's cachegrind, the least
#      of IR_ROUNDS (default 2) runs: a measure the machine's load does not
#      move, for a difference of a percent that the timings of part 4 cannot
#      show on a shared virtual machine (about 30 s of valgrind per million
#      spans and run).
#
# Goals: >= 1.5M spans/s on 2 cores at 4M spans; time per span flat from
# 250k to 16M; streaming 20M spans in <= 256 MiB peak RSS with the batch
# run's figures; a batch run's peak RSS <= 256 MiB and flat in dump size,
# never slower than BASE_REV.
#
# Usage: scripts/bench-engine.sh
#   env: SPANS=4000000 SIZES="250000 1000000 4000000 16000000"
#        STREAM_SPANS=20000000 ROUNDS=3 BASE_REV= MAXMEM=16GiB OUT=BENCHMARKS.md
#        MEM_SIZES="1000000 2000000 4000000 8000000 16000000"
#        ROUNDS_LARGEST=$ROUNDS MEM_DUMP= MEM_DUMP_SPANS= PARTS="engine memory"
#        IR_SIZES="1000000 4000000" IR_ROUNDS=2
#   PARTS picks the parts to run: "engine" (1 to 3) writes the Engine
#   section, "memory" (4) the Batch memory one and "instructions" (5, not
#   run by default) the Batch instructions one, both needing BASE_REV. The batch runs get
#   --max-memory MAXMEM (a 16M-span batch held about 2 GB, past the default
#   budget's 1 GiB cap); the streaming run keeps the default budget. On a
#   shared machine run it under `nice -n 10`. MEM_DUMP names a time-ordered
#   OTLP JSON lines dump of the generator (`gen -bench N -encoding
#   otlp-jsonl`) of at least the largest size, read instead of generating
#   one (a 16M-span dump is 7 GB and minutes to write), and MEM_DUMP_SPANS
#   the spans the generator said it wrote (the prefixes' sizes follow).
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib/benchmarks.sh
SPANS=${SPANS:-4000000}
SIZES=${SIZES:-"250000 1000000 4000000 16000000"}
STREAM_SPANS=${STREAM_SPANS:-20000000}
ROUNDS=${ROUNDS:-3}
BASE_REV=${BASE_REV:-}
OUT=${OUT:-BENCHMARKS.md}
MAXMEM=${MAXMEM:-16GiB}
MEM_SIZES=${MEM_SIZES:-"1000000 2000000 4000000 8000000 16000000"}
PARTS=${PARTS:-"engine memory"}
ROUNDS_LARGEST=${ROUNDS_LARGEST:-$ROUNDS}
MEM_DUMP=${MEM_DUMP:-}
MEM_DUMP_SPANS=${MEM_DUMP_SPANS:-}
IR_SIZES=${IR_SIZES:-"1000000 4000000"}
IR_ROUNDS=${IR_ROUNDS:-2}
if [ -n "$MEM_DUMP" ] && [ -z "$MEM_DUMP_SPANS" ]; then
	echo "bench-engine: MEM_DUMP needs MEM_DUMP_SPANS, the spans the generator wrote" >&2
	exit 2
fi
export GOMAXPROCS=2
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
if { part memory || part instructions; } && [ -z "$BASE_REV" ]; then
	echo "bench-engine: the memory and instructions parts compare against a baseline: set BASE_REV" >&2
	exit 2
fi

tmp=$(mktemp -d)
cleanup() {
	if [ -n "$BASE_REV" ] && [ -d "$tmp/base" ]; then git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

log() { printf 'bench-engine: %s\n' "$*" >&2; }
ensure_jq

log "building mcptrace and the generator"
go build -o "$tmp/mcptrace" ./cmd/mcptrace
go build -o "$tmp/gen" ./internal/tracegen/gen
if [ -n "$BASE_REV" ]; then
	log "building mcptrace at $BASE_REV"
	git worktree add --detach "$tmp/base" "$BASE_REV" >/dev/null 2>&1
	(cd "$tmp/base" && go build -o "$tmp/mcptrace-base" ./cmd/mcptrace)
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# wall CMD...: wall time of one run in seconds.
wall() {
	local s e
	s=$(date +%s.%N)
	"$@" >/dev/null
	e=$(date +%s.%N)
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f", e - s }'
}
# cpu_wall CPUFILE CMD...: wall time of one run in seconds, as wall does;
# appends the run's CPU seconds (user + system) to CPUFILE, and its peak RSS
# (MiB) and minor page faults to CPUFILE.mem; the output goes to $CPU_OUT
# (default /dev/null). On a machine
# shared with other work the CPU a run takes moves less than its wall time.
cpu_wall() {
	local cf=$1 s e
	shift
	s=$(date +%s.%N)
	/usr/bin/time -f '%U %S %M %R' -o "$tmp/cpu.one" "$@" >"${CPU_OUT:-/dev/null}"
	e=$(date +%s.%N)
	awk '{ printf "%.2f\n", $1 + $2 }' "$tmp/cpu.one" >>"$cf"
	awk '{ printf "%.17g %d\n", $3 / 1024, $4 }' "$tmp/cpu.one" >>"$cf.mem" # unrounded: a goal judges it
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f", e - s }'
}
# rss_goal: a batch run's and the stream's peak RSS, at most this (MiB):
# each verdict, and the figure beside it, read it here.
rss_goal=256
# rate_goal: spans/s of the whole command at SPANS, at least this.
rate_goal=1500000
minimum() { sort -g | head -n1; }
maximum() { sort -g | tail -n1; }
# stats FILE [FORMAT]: "median (min – max)" of the numbers in FILE, each
# printed with FORMAT (as they are without one).
stats() {
	local f=$1 fmt=${2:-%s}
	printf '%s (%s – %s)' "$(figure "$(median <"$f")" "$fmt")" "$(figure "$(minimum <"$f")" "$fmt")" "$(figure "$(maximum <"$f")" "$fmt")"
}

# prefix N: the first lines of the big file ($all) holding at least N spans
# (the file itself when it takes all of them).
all=$tmp/all.jsonl
prefix() {
	local n=$1 lines
	lines=$(((n + spans_per_line - 1) / spans_per_line))
	if [ "$lines" -ge "$all_lines" ]; then
		echo "$all"
		return
	fi
	head -n "$lines" "$all" >"$tmp/p$n.jsonl"
	echo "$tmp/p$n.jsonl"
}
# gen_all N: writes a dump of N spans to $tmp/all.jsonl, for prefix.
gen_all() {
	local written
	written=$("$tmp/gen" -bench "$1" -encoding otlp-jsonl -o "$tmp/all.jsonl" 2>&1 | sed -n 's/.*wrote \([0-9]*\) spans.*/\1/p')
	all_lines=$(wc -l <"$tmp/all.jsonl")
	spans_per_line=$((written / all_lines))
}

# big_dump PART N: the dump the sizes of PART are prefixes of, as $all:
# MEM_DUMP when given, else N spans generated.
big_dump() {
	if [ -n "$MEM_DUMP" ]; then
		log "$1: reading $MEM_DUMP"
		all=$MEM_DUMP
		all_lines=$(wc -l <"$all")
		spans_per_line=$((MEM_DUMP_SPANS / all_lines))
	else
		log "$1: generating $2 spans of OTLP JSON lines"
		gen_all "$2"
	fi
}

# engine_parts runs parts 1 to 3 and writes the Engine section.
engine_parts() {
# The throughput runs read a dump of SPANS spans generated alone; the
# sizes are prefixes of one dump of the largest size, written after them,
# so the page cache of a 16M-span dump (7 GB) does not press on the
# throughput runs' memory (with little free memory every first touch of
# a page waits on reclaim).
largest=$SPANS
for s in $SIZES; do [ "$s" -gt "$largest" ] && largest=$s; done
log "generating $SPANS spans of OTLP JSON lines"
"$tmp/gen" -bench "$SPANS" -encoding otlp-jsonl -o "$tmp/tp.jsonl" 2>/dev/null

# 1. Throughput at SPANS.
file=$tmp/tp.jsonl
spans=$("$tmp/mcptrace" analyze --max-memory "$MAXMEM" --format json "$file" | jq .spans)
bytes=$(stat -c %s "$file")
# The late file: the dump, then a line with a child of its first span (the
# root of its first trace) under a new span id.
late=$tmp/late.jsonl
cp "$file" "$late"
head -n1 "$file" | jq -c '.resourceSpans |= [.[0] | .scopeSpans |= [.[0] | .spans |= [.[0] | .parentSpanId = .spanId | .spanId = "00000000000000aa"]]]' >>"$late"
late_spans=$("$tmp/mcptrace" analyze --max-memory "$MAXMEM" --format json "$late" | jq .spans)
[ "$late_spans" -eq $((spans + 1)) ] || { log "the late file holds $late_spans spans, want $((spans + 1))"; exit 1; }
cat "$file" >/dev/null
: >"$tmp/t_cat"
: >"$tmp/t_new"
: >"$tmp/t_late"
: >"$tmp/c_late"
: >"$tmp/t_base"
: >"$tmp/c_new"
: >"$tmp/c_base"
log "throughput: $spans spans, $ROUNDS interleaved rounds"
for r in $(seq "$ROUNDS"); do
	wall cat "$file" >>"$tmp/t_cat"
	echo >>"$tmp/t_cat"
	cpu_wall "$tmp/c_new" "$tmp/mcptrace" analyze --max-memory "$MAXMEM" --format json "$file" >>"$tmp/t_new"
	echo >>"$tmp/t_new"
	cpu_wall "$tmp/c_late" "$tmp/mcptrace" analyze --max-memory "$MAXMEM" --format json "$late" >>"$tmp/t_late"
	echo >>"$tmp/t_late"
	if [ -n "$BASE_REV" ]; then
		cpu_wall "$tmp/c_base" "$tmp/mcptrace-base" analyze --max-memory "$MAXMEM" --format json "$file" >>"$tmp/t_base"
		echo >>"$tmp/t_base"
	fi
	log "round $r done"
done
rate_of "$spans" "$tmp/t_new" >"$tmp/r_new"
rate_of "$late_spans" "$tmp/t_late" >"$tmp/r_late"
paste "$tmp/r_late" "$tmp/r_new" | awk '{ printf "%.3f\n", $1 / $2 }' >"$tmp/x_late"
rm -f "$late"
rate_of "$bytes" "$tmp/t_cat" >"$tmp/r_cat"
new_rate=$(median <"$tmp/r_new")
new_mbs=$(awk -v b="$bytes" -v r="$new_rate" -v n="$spans" 'BEGIN { printf "%.0f", b / (n / r) / 1e6 }')
cat_mbs=$(awk -v r="$(median <"$tmp/r_cat")" 'BEGIN { printf "%.0f", r / 1e6 }')
frac=$(awk -v a="$new_mbs" -v c="$cat_mbs" 'BEGIN { printf "%.1f", 100 * a / c }')
base_line=""
cpu_base_line=""
if [ -n "$BASE_REV" ]; then
	rate_of "$spans" "$tmp/t_base" >"$tmp/r_base"
	paste "$tmp/r_new" "$tmp/r_base" | awk '{ printf "%.3f\n", $1 / $2 }' >"$tmp/x_base"
	base_line="| \`mcptrace analyze\` at $BASE_REV | $(stats "$tmp/r_base") | | new / base per round: $(stats "$tmp/x_base")x |"
	paste "$tmp/c_new" "$tmp/c_base" | awk '{ printf "%.3f\n", $2 / $1 }' >"$tmp/xc_base"
	cpu_base_line="| \`mcptrace analyze\` at $BASE_REV | $(stats "$tmp/c_base") | $(awk -v n="$spans" -v c="$(median <"$tmp/c_base")" 'BEGIN { printf "%.0f", c * 1e9 / n }') | base / new per round: $(stats "$tmp/xc_base")x |"
fi
cpu_new_line="| \`mcptrace analyze\` | $(stats "$tmp/c_new") | $(awk -v n="$spans" -v c="$(median <"$tmp/c_new")" 'BEGIN { printf "%.0f", c * 1e9 / n }') | |"
cpu_late_line="| \`mcptrace analyze\`, a span after its root on the last line | $(stats "$tmp/c_late") | $(awk -v n="$late_spans" -v c="$(median <"$tmp/c_late")" 'BEGIN { printf "%.0f", c * 1e9 / n }') | |"
# mem_line NAME CPUFILE: peak RSS and minor faults, median (min – max).
mem_line() {
	cut -d' ' -f1 "$2.mem" >"$2.rss"
	cut -d' ' -f2 "$2.mem" >"$2.flt"
	echo "| $1 | $(stats "$2.rss" %.0f) | $(stats "$2.flt") |"
}
mem_new_line=$(mem_line "\`mcptrace analyze\`" "$tmp/c_new")
mem_late_line=$(mem_line "\`mcptrace analyze\`, a span after its root on the last line" "$tmp/c_late")
mem_base_line=""
if [ -n "$BASE_REV" ]; then mem_base_line=$(mem_line "\`mcptrace analyze\` at $BASE_REV" "$tmp/c_base"); fi

# 2. Time per span by size.
rm -f "$file"
log "generating $largest spans of OTLP JSON lines"
gen_all "$largest"
: >"$tmp/sizes"
for s in $SIZES; do
	f=$(prefix "$s")
	n=$("$tmp/mcptrace" analyze --max-memory "$MAXMEM" --format json "$f" | jq .spans)
	: >"$tmp/ts"
	for _ in $(seq "$ROUNDS"); do
		wall "$tmp/mcptrace" analyze --max-memory "$MAXMEM" --format json "$f" >>"$tmp/ts"
		echo >>"$tmp/ts"
	done
	ns=$(awk -v n="$n" -v t="$(minimum <"$tmp/ts")" 'BEGIN { printf "%.0f", t * 1e9 / n }')
	echo "$s $n $ns" >>"$tmp/sizes"
	log "size $n: $ns ns/span (best of $ROUNDS)"
	[ "$f" = "$tmp/all.jsonl" ] || rm -f "$f"
done
first_ns=$(head -n1 "$tmp/sizes" | cut -d' ' -f3)
size_rows=$(awk -v f="$first_ns" '{ printf "| %d | %d | %.2fx |\n", $2, $3, $3 / f }' "$tmp/sizes")
worst=$(awk -v f="$first_ns" 'BEGIN { w = 0 } { if ($3 / f > w) w = $3 / f } END { printf "%.2f", w }' "$tmp/sizes")
rm -f "$tmp/all.jsonl"

# 3. Streaming.
log "streaming $STREAM_SPANS spans through a pipe (window 30s, 100000 open traces)"
"$tmp/gen" -bench "$STREAM_SPANS" -encoding otlp-jsonl -o /dev/stdout 2>/dev/null |
	/usr/bin/time -f '%M %e' -o "$tmp/stream.time" "$tmp/mcptrace" analyze --format json --window 30s --max-open-traces 100000 - >"$tmp/stream.json"
log "the same stream in one batch"
"$tmp/gen" -bench "$STREAM_SPANS" -encoding otlp-jsonl -o /dev/stdout 2>/dev/null |
	/usr/bin/time -f '%M %e' -o "$tmp/batch.time" "$tmp/mcptrace" analyze --max-memory "$MAXMEM" --format json - >"$tmp/batch.json"
read -r stream_kb stream_s <"$tmp/stream.time"
read -r batch_kb batch_s <"$tmp/batch.time"
stream_mib=$(awk -v k="$stream_kb" 'BEGIN { printf "%.17g", k / 1024 }') # unrounded: the goal judges it
batch_mib=$((batch_kb / 1024))
stream_spans=$(jq .spans "$tmp/stream.json")
if diff <(jq -S 'del(.stream, .settings)' "$tmp/stream.json") <(jq -S 'del(.stream, .settings)' "$tmp/batch.json") >"$tmp/stream.diff"; then
	same="identical (the report without its \`stream\` and \`settings\` sections)"
else
	same="**different**: $(head -c 400 "$tmp/stream.diff" | tr '\n' ' ')"
fi
stream_extra=$(jq -c '.stream // {}' "$tmp/stream.json")
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

section=$(mktemp -p "$tmp")
cat >"$section" <<EOF
## Engine

Generated by \`scripts/bench-engine.sh\` on $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD): $(nproc) CPUs
($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)), $(go version | cut -d' ' -f3), GOMAXPROCS=2,
mcptrace $(pgo_of "$tmp/mcptrace")${BASE_REV:+, the base $(cd "$tmp/base" && pgo_of "$tmp/mcptrace-base")},
load average $load_before before and $load_after after. Dumps: time-ordered
OTLP JSON lines of the pool vocabulary from \`internal/tracegen\` (about $spans_per_line spans a line).

Reproduce: \`SPANS=$SPANS SIZES="$SIZES" STREAM_SPANS=$STREAM_SPANS ROUNDS=$ROUNDS BASE_REV=$BASE_REV MAXMEM=$MAXMEM scripts/bench-engine.sh\`

Whole \`mcptrace analyze --format json FILE\` (process start to JSON report),
$spans spans, $((bytes / 1000000)) MB, $ROUNDS interleaved rounds, median (min – max):

| run | spans/s | MB/s | |
|---|---:|---:|---|
| \`mcptrace analyze\` | $(stats "$tmp/r_new") | $new_mbs | goal ≥ $rate_goal spans/s: $(goal_verdict "$new_rate" '>=' "$rate_goal") |
| \`cat FILE >/dev/null\` (page cache) | | $cat_mbs | analyze reaches $frac% of it |
| \`mcptrace analyze\`, a span after its root on the last line (read twice) | $(stats "$tmp/r_late") | | late / in order per round: $(stats "$tmp/x_late")x |
$base_line

The CPU time of the same runs (user + system, seconds; CPU ns per span of
the median), which other work on the machine disturbs less than the wall
time:

| run | CPU s | CPU ns/span | |
|---|---:|---:|---|
$cpu_new_line
$cpu_late_line
$cpu_base_line

Peak RSS (MiB) and minor page faults of the same runs (\`/usr/bin/time\`'s
%M and %R), median (min – max):

| run | peak RSS, MiB | minor faults |
|---|---:|---:|
$mem_new_line
$mem_late_line
$mem_base_line

Time per span by dump size (best of $ROUNDS; prefixes of one dump):

| spans | ns/span | against the smallest |
|---:|---:|---:|
$size_rows

Worst size against the smallest: ${worst}x.

Streaming: $stream_spans spans generated into a pipe and analysed with
\`--window 30s --max-open-traces 100000\` (\`$stream_extra\`):
peak RSS $(judged "$stream_mib" %.0f '<=' "$rss_goal" ' MiB') in ${stream_s} s (goal ≤ $rss_goal MiB: $(goal_verdict "$stream_mib" '<=' "$rss_goal")); the same stream
in one batch: $batch_mib MiB in ${batch_s} s. Figures: $same.

How a batch run works, and what limits its throughput. A batch run over
files is speculative (analyze/internal/engine/engine.go, newSpeculativeEngine): each
shard measures a trace as soon as its root span has arrived, in groups
of 256, while the read goes on, and frees its spans; the pair stage
attributes the acquires of each pair in time order as they are read. The
first span to arrive for a trace already measured (the shards remember
every one, as 64-bit fingerprints) spoils the run, which stops and reads
the files again holding every trace, so the report is the batch report
either way (stdin, which cannot be read twice, is always held). That
overlaps the measures with the decode, and keeps the peak RSS to the
open traces and the acquires rather than an index of every span (~80
bytes a span): on this virtual machine the first touch of memory is what
costs (measured: 3.3 s to fault in 1 GiB of huge pages, 5 s of 4 KiB
ones), so memory not taken is CPU not spent. An engine takes half the
CPUs as shards and decodes on the other half (each shard reads every
batch to pick its traces). Where the CPU goes (perf, 4M spans): the projection decode,
about 40% of the CPU (the walk over every byte, the three hex ids, the
strings kept); indexing a span, about 15%; measuring the traces, about
20%; filing the acquires and the pair stage, under 10%; the kernel's
zeroing of first-touched pages, the rest. The worst case is the row
with a late span on the last line: the whole file read twice.

EOF

write_section "$OUT" Engine "$section"
log "wrote the Engine section of $OUT"
cat "$section"
}

# memory_part runs part 4 and writes the Batch memory by dump size section.
memory_part() {
	local largest=0 s f n r rows="" same_all="identical" mload_before section
	for s in $MEM_SIZES; do [ "$s" -gt "$largest" ] && largest=$s; done
	mload_before=$(cut -d' ' -f1-3 /proc/loadavg)
	big_dump memory "$largest"
	local rounds first_n="" first_rss="" last_n="" last_rss="" worst_rss="" # none until a run reports one
	for s in $MEM_SIZES; do
		f=$(prefix "$s")
		rounds=$ROUNDS
		[ "$s" -eq "$largest" ] && rounds=$ROUNDS_LARGEST
		: >"$tmp/mt_new"
		: >"$tmp/mt_base"
		: >"$tmp/mc_new"
		: >"$tmp/mc_base"
		rm -f "$tmp/mc_new.mem" "$tmp/mc_base.mem"
		for r in $(seq "$rounds"); do
			# The first round's reports are kept and compared: no extra run.
			out_new=/dev/null out_base=/dev/null
			[ "$r" -eq 1 ] && out_new=$tmp/m_new.json out_base=$tmp/m_base.json
			CPU_OUT=$out_new cpu_wall "$tmp/mc_new" "$tmp/mcptrace" analyze --max-memory "$MAXMEM" --format json "$f" >>"$tmp/mt_new"
			echo >>"$tmp/mt_new"
			CPU_OUT=$out_base cpu_wall "$tmp/mc_base" "$tmp/mcptrace-base" analyze --max-memory "$MAXMEM" --format json "$f" >>"$tmp/mt_base"
			echo >>"$tmp/mt_base"
			if [ "$r" -eq 1 ]; then
				n=$(jq .spans "$tmp/m_new.json")
				cmp -s "$tmp/m_new.json" "$tmp/m_base.json" || same_all="**different** at $n spans"
			fi
		done
		rate_of "$n" "$tmp/mt_new" >"$tmp/mr_new"
		rate_of "$n" "$tmp/mt_base" >"$tmp/mr_base"
		paste "$tmp/mr_new" "$tmp/mr_base" | awk '{ printf "%.3f\n", $1 / $2 }' >"$tmp/mx"
		cut -d' ' -f1 "$tmp/mc_new.mem" >"$tmp/mm_new"
		cut -d' ' -f1 "$tmp/mc_base.mem" >"$tmp/mm_base"
		paste "$tmp/mc_new" "$tmp/mc_base" | awk '{ printf "%.3f\n", $2 / $1 }' >"$tmp/mxc"
		rows="$rows| $n | $(stats "$tmp/mm_new" %.0f) | $(stats "$tmp/mm_base" %.0f) | $(stats "$tmp/mr_new") | $(stats "$tmp/mr_base") | $(stats "$tmp/mx")x | $(stats "$tmp/mc_new") | $(stats "$tmp/mc_base") | $(stats "$tmp/mxc")x |
"
		log "memory: $n spans: RSS $(figure "$(median <"$tmp/mm_new")" %.0f) MiB (base $(figure "$(median <"$tmp/mm_base")" %.0f)), $(median <"$tmp/mr_new") spans/s (base $(median <"$tmp/mr_base"))"
		[ -n "$first_n" ] || { first_n=$n; first_rss=$(median <"$tmp/mm_new"); }
		last_n=$n
		last_rss=$(median <"$tmp/mm_new")
		worst_rss=$( { echo "$worst_rss"; cat "$tmp/mm_new"; } | grep . | maximum || true)
		[ "$f" = "$all" ] || rm -f "$f"
	done
	[ -n "$MEM_DUMP" ] || rm -f "$tmp/all.jsonl"
	local growth verdict
	growth=$(awk -v a="$first_rss" -v b="$last_rss" -v n="$first_n" -v m="$last_n" 'BEGIN { printf "%.1f", (b - a) / ((m - n) / 1e6) }')
	verdict=$(goal_verdict "$worst_rss" '<=' "$rss_goal")
	section=$(mktemp -p "$tmp")
	cat >"$section" <<EOF
## Batch memory by dump size

Generated by \`scripts/bench-engine.sh\` (PARTS=memory) on $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD)
against $BASE_REV, built in the same run: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)),
$(go version | cut -d' ' -f3), GOMAXPROCS=2, niceness $(nice), load average $mload_before before and
$(cut -d' ' -f1-3 /proc/loadavg) after (a machine shared with other work). Dumps: prefixes of one time-ordered
dump of OTLP JSON lines of the pool vocabulary from \`internal/tracegen\` (about $spans_per_line spans a line).

Reproduce: \`nice -n 10 env PARTS=memory MEM_SIZES="$MEM_SIZES" ROUNDS=$ROUNDS ROUNDS_LARGEST=$ROUNDS_LARGEST BASE_REV=$BASE_REV MAXMEM=$MAXMEM scripts/bench-engine.sh\`

Whole \`mcptrace analyze --max-memory $MAXMEM --format json FILE\` over files (a speculative
batch run), $ROUNDS interleaved rounds ($ROUNDS_LARGEST at $last_n spans; new, then base, at each size), median (min – max); peak RSS is
\`/usr/bin/time\`'s %M, CPU s its user + system seconds (which other work on the machine disturbs less
than the wall time that spans/s is taken from):

| spans | peak RSS, MiB | at $BASE_REV | spans/s | at $BASE_REV | new / base per round | CPU s | at $BASE_REV | base / new CPU per round |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${rows}
Reports of the two binaries at every size: $same_all (\`cmp\` of the first round's JSON).

Peak RSS (median) from $first_n to $last_n spans: $(figure "$first_rss" %.0f) to $(figure "$last_rss" %.0f) MiB, $growth MiB a million spans;
the largest of every run: $(judged "$worst_rss" %.0f '<=' "$rss_goal" ' MiB') (goal ≤ $rss_goal MiB: $verdict).

EOF
	write_section "$OUT" "Batch memory by dump size" "$section"
	log "wrote the Batch memory by dump size section of $OUT"
	cat "$section"
}

# instructions RESULT CMD...: runs CMD under valgrind's cachegrind (no
# cache simulation) and appends to RESULT its instructions in all and those
# outside the Go runtime (its scheduler, collector and allocator: every
# runtime function but the memory moves and clears, the maps and the
# hashes): how much a run spins on idle Ps and polls for collector work
# depends on how valgrind, which runs one thread at a time, interleaves
# the goroutines, not on the work (the section states how far one
# binary's runs came apart: spread_of).
# valgrind-3.19 cannot run RDTSCP (0f 01 f9), which the Go runtime's
# clock of CPU ticks uses where the CPU has it (the collector and the
# scheduler read it): a run died on SIGILL at a point that moved from run
# to run, ten times in ten at 1M spans. GODEBUG=cpu.rdtscp=off has the
# runtime read the ticks with RDTSC instead, which valgrind runs.
instructions() {
	local res=$1 cg
	shift
	cg=$tmp/cg.out
	GODEBUG=cpu.rdtscp=off valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$cg" "$@" >/dev/null 2>"$tmp/cg.err" ||
		{ log "cachegrind failed: $(tail -n 3 "$tmp/cg.err")"; exit 1; }
	cg_annotate --auto=no --show=Ir --threshold=0 "$cg" | awk '
		/PROGRAM TOTALS/ { gsub(",", "", $1); total = $1; next }
		/file:function/ { on = 1; next }
		on && /^ *[0-9,]+ \(/ {
			c = $1; gsub(",", "", c)
			fn = $0; sub(/^.*:/, "", fn)
			if ((fn ~ /^runtime\./ && fn !~ /^runtime\.(mem|map|aeshash|memhash|strhash|typehash|efaceeq|ifaceeq|cmpstring)/) || fn ~ /^(gogo|gcWriteBarrier|gosave_systemstack_switch)/) rt += c
		}
		END { printf "%.0f %.0f\n", total, total - rt }' >>"$res"
}

# spread_of N NEWFILE BASEFILE: one clause for the Batch instructions
# section: how far apart each binary's runs at N spans came, the most
# over the least, in all and outside the runtime (instructions' two
# columns); nothing when a binary ran once.
spread_of() {
	awk -v n="$1" '
		FNR == 1 { f++ }
		{ k[f]++; for (c = 1; c <= 2; c++) { if (!lo[f, c] || $c < lo[f, c]) lo[f, c] = $c; if ($c > hi[f, c]) hi[f, c] = $c } }
		END {
			if (k[1] < 2 || k[2] < 2) exit
			printf " at %d spans, the new binary %.2fx and %.4fx, the base %.2fx and %.4fx;", n,
				hi[1, 1] / lo[1, 1], hi[1, 2] / lo[1, 2], hi[2, 1] / lo[2, 1], hi[2, 2] / lo[2, 2]
		}' "$2" "$3"
}

# instructions_part runs part 5 and writes the Batch instructions section:
# the work each binary does, counted, where the time a run takes on a
# shared virtual machine moves by more than the difference looked for.
instructions_part() {
	local s f n rows="" spread="" r section largest=0
	command -v valgrind >/dev/null 2>&1 || { log "installing valgrind"; apt-get install -y valgrind >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y valgrind >/dev/null; }; }
	for s in $IR_SIZES; do [ "$s" -gt "$largest" ] && largest=$s; done
	big_dump instructions "$largest"
	for s in $IR_SIZES; do
		f=$(prefix "$s")
		n=$("$tmp/mcptrace" analyze --max-memory "$MAXMEM" --format json "$f" | jq .spans)
		: >"$tmp/ir_new"
		: >"$tmp/ir_base"
		for r in $(seq "$IR_ROUNDS"); do
			log "instructions: $n spans, round $r of $IR_ROUNDS"
			instructions "$tmp/ir_new" "$tmp/mcptrace" analyze --max-memory "$MAXMEM" --format json "$f"
			instructions "$tmp/ir_base" "$tmp/mcptrace-base" analyze --max-memory "$MAXMEM" --format json "$f"
		done
		rows="$rows$(awk -v n="$n" '
			NR == FNR { if (!t || $1 < t) t = $1; if (!w || $2 < w) w = $2; next }
			{ if (!bt || $1 < bt) bt = $1; if (!bw || $2 < bw) bw = $2 }
			END { printf "| %d | %.0f | %.0f | %.4fx | %.0f | %.0f | %.4fx |", n, w / n, bw / n, bw / w, t / n, bt / n, bt / t }' "$tmp/ir_new" "$tmp/ir_base")
"
		spread="$spread$(spread_of "$n" "$tmp/ir_new" "$tmp/ir_base")"
		[ "$f" = "$all" ] || rm -f "$f"
	done
	[ -n "$MEM_DUMP" ] || rm -f "$tmp/all.jsonl"
	spread=${spread%;}
	section=$(mktemp -p "$tmp")
	cat >"$section" <<EOF
## Batch instructions by dump size

Generated by \`scripts/bench-engine.sh\` (PARTS=instructions) on $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD)
against $BASE_REV, built in the same run: $(valgrind --version), $(go version | cut -d' ' -f3), GOMAXPROCS=2.

Reproduce: \`env PARTS=instructions IR_SIZES="$IR_SIZES" IR_ROUNDS=$IR_ROUNDS BASE_REV=$BASE_REV scripts/bench-engine.sh\`

The instructions the whole \`mcptrace analyze --max-memory $MAXMEM --format json FILE\` executes
(valgrind's cachegrind, no cache simulated), per span, the least of $IR_ROUNDS runs of each binary.
A count does not move with the machine's load as the time of a run on a shared virtual machine
does, so it shows a difference of a percent that timings cannot; it does not see what memory
costs (the page faults and cache misses a smaller heap saves), which the Batch memory section's
timings do. "Outside the runtime" leaves out the Go runtime's scheduler, collector and
allocator (every runtime function but the memory moves and clears, the maps and the hashes),
whose count depends on how valgrind (one thread at a time) interleaves the goroutines, not
on the work. How far apart the runs of one binary came, the most over the least, in all
and outside the runtime:${spread:- one run of each, so not measured (IR_ROUNDS=1)}.

| spans | outside the runtime, per span | at $BASE_REV | base / new | all, per span | at $BASE_REV | base / new |
|---:|---:|---:|---:|---:|---:|---:|
${rows}
EOF
	write_section "$OUT" "Batch instructions by dump size" "$section"
	log "wrote the Batch instructions by dump size section of $OUT"
	cat "$section"
}

rate_of() { awk -v n="$1" '{ printf "%.0f\n", n / $1 }' "$2"; }
if part engine; then engine_parts; fi
if part memory; then memory_part; fi
if part instructions; then instructions_part; fi
