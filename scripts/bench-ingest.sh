#!/usr/bin/env bash
# bench-ingest.sh measures the projection decoders of analyze/ingest against
# pdata's unmarshalers, decode only, on the same records (BenchmarkDecodeOnly
# in analyze/ingest/decode_bench_test.go): the lines of a generated OTLP JSON
# lines dump (internal/tracegen) and the records of the same workload as
# length-prefixed protobuf, held in memory. Both sides run on GOMAXPROCS
# goroutines: at 1 (ours on 1 goroutine against pdata on 1) and at 2 (ours on
# 2 workers against pdata on 2 goroutines).
#
# Rounds are interleaved: each round runs, for each format, ours and pdata
# at GOMAXPROCS 1 (one process), then at 2 (another), one after the other,
# and a round's ratios compare figures taken seconds apart. The script prints
# min / median / max over the rounds and the load average before and after,
# and writes the "## Ingest" section of BENCHMARKS.md (OUT), leaving the
# other sections as they are.
#
# Goals: ours >= 2x pdata per core and on 2 cores, for JSON lines
# and for protobuf.
#
# Each round also times simdjson-go (internal/benchtools/simdparse, its own
# module) on one goroutine over the same JSON lines, written to a file by
# the generator: its parse alone, and its parse then a walk to the fields
# the projection decoder reads. A machine that cannot build or run it
# skips those rows with a line saying why.
#
# Each round also times how the file's bytes are had before any decoding
# (BenchmarkReadFile in analyze/ingest/read_mmap_bench_linux_test.go, one
# goroutine, Linux only): read(2) into pooled blocks as the reader does,
# against mapping the file with mmap(2), with and without MAP_POPULATE.
#
# And each round times the protobuf decoder on one goroutine pinned to a
# CPU, its batches read on that goroutine (with the decoder on either
# CPU), read on another one pinned to another CPU, or recycled there
# unread (BenchmarkDecodeWithBatchesReadElsewhere): what a shard reading a
# worker's batches on the other core costs the decoder. And the JSON
# decoder the same way, its blocks read from the file (pread(2)) on its
# own goroutine or on another one pinned to the other CPU
# (BenchmarkDecodeWithBlocksFilledElsewhere): what the reader's copy of
# the input on one core costs the decoder on the other.
#
# Usage: scripts/bench-ingest.sh [ROUNDS]   (default 5; env: SPANS=200000
#        ITERS=10 (iterations per figure: at 3, a figure of one core is
#        some 40 ms and rounds spread 5.0x – 8.6x) OUT=BENCHMARKS.md, OUT=- prints only)
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib/benchmarks.sh
ROUNDS=${1:-5}
SPANS=${SPANS:-200000}
ITERS=${ITERS:-10}
OUT=${OUT:-BENCHMARKS.md}
GO=${GO:-go}

log() { printf 'bench-ingest: %s\n' "$*" >&2; }

# decode_ns BENCH SERIES: runs BENCH of the ingest test binary at -cpu 2
# (its two goroutines pinned to one CPU each) and appends each
# sub-benchmark's decode-ns/span to $results as SERIES of this $round.
decode_ns() {
	(cd analyze/ingest && MCPTRACE_READ_BENCH_SPANS=$SPANS "$tmp/ingest.test" -test.run '^$' \
		-test.bench "^$1\$" -test.benchtime "${ITERS}x" -test.cpu 2) |
		check_procs |
		awk -v round="$round" -v bench="$1" -v series="$2" '
			index($1, bench "/") == 1 {
				name = substr($1, length(bench) + 2); sub(/-[0-9]+$/, "", name)
				for (i = 2; i < NF; i++) if ($(i+1) == "decode-ns/span") print round, series, 2, name, $i
			}' >>"$results"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log "building the test binary of analyze/ingest"
"$GO" test -c -o "$tmp/ingest.test" ./analyze/ingest

simd_skip=""
log "building internal/benchtools/simdparse (simdjson-go, its own module)"
if (cd internal/benchtools/simdparse && "$GO" build -o "$tmp/simdparse" .) >"$tmp/simd-build.log" 2>&1; then
	ensure_jq
	"$GO" build -o "$tmp/gen" ./internal/tracegen/gen
	"$GO" build -o "$tmp/pdatacount" ./internal/benchtools/pdatacount
	"$tmp/gen" -bench "$SPANS" -encoding otlp-jsonl -o "$tmp/bench.jsonl"
	simd_spans=$("$tmp/pdatacount" -truth "$SPANS" | jq .spans)
else
	simd_skip="cannot build internal/benchtools/simdparse: $(grep -v '^[[:space:]]*$' "$tmp/simd-build.log" | tail -n1 | tr '|' '/' | cut -c1-160)"
	log "simdjson-go is skipped: $simd_skip"
fi
load_before=$(uptime)
log "load before: $load_before"

results="$tmp/results"
: >"$results"
for round in $(seq 1 "$ROUNDS"); do
	log "round $round of $ROUNDS"
	# One process per GOMAXPROCS (1, then 2), each running both formats and
	# both sides: given a list (-test.cpu 1,2) the testing package runs the
	# first figure at the GOMAXPROCS the last one left, so check_procs
	# (scripts/lib/benchmarks.sh) makes sure each ran where its name says.
	for cpu in 1 2; do
		(cd analyze/ingest && MCPTRACE_READ_BENCH_SPANS=$SPANS "$tmp/ingest.test" -test.run '^$' \
			-test.bench '^BenchmarkDecodeOnly$' -test.benchtime "${ITERS}x" -test.cpu "$cpu") |
			check_procs |
			awk -v round="$round" '
				$1 ~ /^BenchmarkDecodeOnly\// {
					name = $1; sub(/^BenchmarkDecodeOnly\//, "", name)
					cpu = 1
					if (match(name, /-[0-9]+$/)) { cpu = substr(name, RSTART + 1); name = substr(name, 1, RSTART - 1) }
					split(name, p, "/")
					for (i = 2; i < NF; i++) if ($(i+1) == "spans/s") print round, p[1], cpu, p[2], $i
				}' >>"$results"
	done
	# The protobuf decoder's own time per span when each batch is read
	# on the decoding goroutine, on another one pinned to another CPU (as
	# a shard reads a worker's batches), or recycled there unread.
	decode_ns BenchmarkDecodeWithBatchesReadElsewhere handoff
	# The JSON decoder's own time per span when its blocks were read from
	# the file on its goroutine or on another one pinned to the other CPU.
	decode_ns BenchmarkDecodeWithBlocksFilledElsewhere fill
	(cd analyze/ingest && MCPTRACE_READ_BENCH_SPANS=$SPANS "$tmp/ingest.test" -test.run '^$' \
		-test.bench '^BenchmarkReadFile$' -test.benchtime "${ITERS}x" -test.cpu 1) |
		awk -v round="$round" '
			$1 ~ /^BenchmarkReadFile\// {
				name = $1; sub(/^BenchmarkReadFile\//, "", name); sub(/-[0-9]+$/, "", name)
				for (i = 2; i < NF; i++) if ($(i+1) == "MB/s") print round, "file", 1, name, $i * 1e6
			}' >>"$results"
	[ -z "$simd_skip" ] || continue
	if simd=$("$tmp/simdparse" -iters "$ITERS" -spans "$simd_spans" "$tmp/bench.jsonl" 2>"$tmp/simd.err"); then
		jq -r --arg r "$round" '"\($r) jsonl 1 simd-parse \(.parse_spans_s)\n\($r) jsonl 1 simd-walk \(.walk_spans_s)"' <<<"$simd" >>"$results"
	else
		simd_skip="simdparse failed: $(tail -n1 "$tmp/simd.err" | tr '|' '/' | cut -c1-160)"
		log "simdjson-go is skipped: $simd_skip"
	fi
done
load_after=$(uptime)
log "load after: $load_after"

# stats prints "min median max" of the numbers on stdin.
stats() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "n/a n/a n/a"; exit } m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %s %s\n", v[1], m, v[NR] }'; }
# rate FORMAT CPU SIDE: spans/s of every round.
rate() { awk -v f="$1" -v c="$2" -v s="$3" '$2 == f && $3 == c && $4 == s { print $5 }' "$results"; }
# ratios FORMAT CPU [OTHER [SIDE]]: SIDE (default ours) / OTHER (default
# pdata) of each round.
ratios() {
	awk -v f="$1" -v c="$2" -v o="${3:-pdata}" -v s="${4:-ours}" '$2 == f && $3 == c { r[$1, $4] = $5; rounds[$1] = 1 }
		END { for (k in rounds) if (r[k, o] > 0) printf "%.17g\n", r[k, s] / r[k, o] }' "$results"
}
# fmt_rate, fmt_ratio: "median (min – max)" from stats, or n/a when the
# rounds gave no figure (stats' n/a would print as 0).
fmt_rate() { fmt_stats '%.0f k (%.0f k – %.0f k)' 1000; }
# fmt_ratio [OP GOAL]: beside a goal, the median judged (never rounded
# onto the goal's other side; the figures come in unrounded).
fmt_ratio() {
	if [ $# -eq 0 ]; then fmt_stats '%.2fx (%.2f – %.2f)' 1; else fmt_stats '%sx (%.2f – %.2f)' 1 '%.2f' "$@"; fi
}
# fmt_stats FORMAT DIVISOR [MEDIAN_FORMAT OP GOAL]: FORMAT of the median,
# min and max over DIVISOR; with a goal, the median is judged in
# MEDIAN_FORMAT and FORMAT takes it as a %s.
fmt_stats() {
	local lo med hi
	read -r lo med hi || true
	with_verdict 'BEGIN { if (!isfigure(m)) print "n/a"; else printf f, (op == "" ? m / d : judged(m / d, mf, op, goal)), a / d, b / d }' \
		-v a="$lo" -v m="$med" -v b="$hi" -v f="$1" -v d="$2" -v mf="${3:-}" -v op="${4:-}" -v goal="${5:-}"
}
# decode_goal: ours / pdata per core, at least this: the verdict and the
# figure beside it both read it here.
decode_goal=2
verdict() { read -r lo med hi; goal_verdict "$med" '>=' "$decode_goal"; }

rows=""
for f in jsonl proto; do
	for c in 1 2; do
		name="JSON lines"
		[ "$f" = proto ] && name="protobuf"
		ours=$(rate "$f" "$c" ours | stats | fmt_rate)
		pdata=$(rate "$f" "$c" pdata | stats | fmt_rate)
		ratio=$(ratios "$f" "$c" | stats | fmt_ratio '>=' "$decode_goal")
		goal=$(ratios "$f" "$c" | stats | verdict)
		rows+="| $name | $c | $ours | $pdata | $ratio | ≥ ${decode_goal}x: $goal |"$'\n'
	done
done

simd_rows=""
if [ -z "$simd_skip" ]; then
	for side in simd-parse simd-walk; do
		what="simdjson-go, parse only (its tape)"
		[ "$side" = simd-walk ] && what="simdjson-go, parse and walk to the span fields"
		simd_rows+="| $what | $(rate jsonl 1 "$side" | stats | fmt_rate) | $(ratios jsonl 1 "$side" | stats | fmt_ratio) |"$'\n'
	done
else
	simd_rows="| simdjson-go | skipped: $simd_skip | |"$'\n'
fi

# fmt_mbs: bytes/s as "median (min – max)" in MB/s.
fmt_mbs() { fmt_stats '%.0f MB/s (%.0f – %.0f)' 1e6; }
file_rows=""
if [ -n "$(rate file 1 read)" ]; then
	file_rows+="| read(2) into 2 MiB pooled blocks, lines filed (the reader) | $(rate file 1 read | stats | fmt_mbs) | — |"$'\n'
	for side in mmap mmap-populate; do
		what="mmap(2) of 8 MiB windows, lines filed from the mapping"
		[ "$side" = mmap-populate ] && what="the same with MAP_POPULATE"
		file_rows+="| $what | $(rate file 1 "$side" | stats | fmt_mbs) | $(ratios file 1 "$side" read | stats | fmt_ratio) |"$'\n'
	done
else
	file_rows="| read(2) against mmap(2) | skipped: BenchmarkReadFile runs on Linux only | |"$'\n'
fi

# fmt_ns: nanoseconds per span as "median (min – max)".
fmt_ns() { fmt_stats '%.0f ns (%.0f – %.0f)' 1; }
# crossing_rows SERIES BASE [SIDE WHAT]...: a table row per SIDE of
# SERIES (decode_ns) saying WHAT it is, its time per span, and its ratio
# to BASE's in the same rounds ("—" for BASE itself).
crossing_rows() {
	local series=$1 base=$2 side what ratio
	shift 2
	while [ $# -ge 2 ]; do
		side=$1 what=$2
		shift 2
		ratio="—"
		[ "$side" = "$base" ] || ratio=$(ratios "$series" 2 "$base" "$side" | stats | fmt_ratio)
		printf '| %s | %s | %s |\n' "$what" "$(rate "$series" 2 "$side" | stats | fmt_ns)" "$ratio"
	done
}
handoff_rows=$(crossing_rows handoff read-here \
	read-here "read and recycled on the decoding goroutine" \
	read-here-on-the-second-cpu "the same, the decoder on the other CPU (whether the two CPUs are alike)" \
	read-elsewhere "read and recycled on another goroutine, on another CPU (as a shard reads a worker's batch)" \
	recycled-elsewhere "recycled on another goroutine, on another CPU, unread")$'\n'
fill_rows=$(crossing_rows fill filled-here \
	filled-here "read from the file on the decoding goroutine" \
	filled-elsewhere "read from the file on another goroutine, on another CPU (as the reader does for a worker)")$'\n'

section="$tmp/section.md"
cat >"$section" <<MD
## Ingest

Generated by \`scripts/bench-ingest.sh $ROUNDS\` on $(date -u +%F): $(nproc) CPUs, $("$GO" env GOVERSION),
$SPANS spans of the benchmark workload (internal/tracegen), $ROUNDS interleaved
rounds of $ITERS iterations per figure. Load average before: \`${load_before#*load average: }\`,
after: \`${load_after#*load average: }\`.

Decode only, on the same records held in memory (BenchmarkDecodeOnly in
analyze/ingest/decode_bench_test.go): ours is the projection decoder
(analyze/ingest/fastjson.go for JSON lines, analyze/ingest/fastproto.go for
protobuf) keeping the vocabulary's attributes into a pooled Batch; pdata is
\`ptrace.JSONUnmarshaler\` / \`ptrace.ProtoUnmarshaler\` building the whole
\`ptrace.Traces\`. Both sides decode on GOMAXPROCS goroutines (1: one against
one; 2: two against two). Spans/s and ratio: median (min – max) over the
rounds; a round's ratio compares ours and pdata from the same process.

| format | GOMAXPROCS | ours, spans/s | pdata, spans/s | ours / pdata | goal |
|---|---:|---:|---:|---:|---|
$rows
What the ratios measure and what bounds them: both sides walk every byte
of every record. pdata then builds every span, scope, attribute key and
value as Go objects (its JSON side through jsoniter), and at 200k spans the
garbage collector's work on them is part of its time. The projection
decoders write ids, name, kind, times and status into a pooled batch,
compare each attribute key with the few kept keys of its length, and keep
only those values (strings interned per worker), so they allocate next to
nothing; their cost is the walk itself. At GOMAXPROCS 2 both sides are
bounded by the CPU the machine's other processes leave (see the load
average): a loaded machine gives the second goroutine less than a core, and
the spread between rounds shows it.

Whether handing batches to another core costs the decoder: in
\`mcptrace analyze\` a worker decodes a record into a batch and a shard, on
the other core, copies the batch into its index. The same protobuf records
decoded on one goroutine pinned to one CPU, each batch read as the index
reads it, on that goroutine or on another one pinned to another CPU
(BenchmarkDecodeWithBatchesReadElsewhere in
analyze/ingest/decode_handoff_bench_test.go), the decoder's own time per
span; the second row is the first with the decoder pinned to the other
CPU, as a virtual machine's CPUs need not be alike (the host may run
another guest beside one of them). On a virtual machine the spread is the
figure to read: from round to round the hand-off cost the decoder nothing
or more than twice its time, pinned as it is, as the host placed the two
virtual CPUs.

| the batch is | decoder's time per span | it / read here |
|---|---:|---:|
$handoff_rows
The other crossing: the reader copies each block of the file into
memory on its goroutine's core and a worker decodes it, mostly on the
other one, so every byte of the input crosses before it is decoded. The
same JSON lines, written to a file and cut into blocks of whole lines as
the reader cuts its jobs, each block read with pread(2) on the decoding
goroutine or on another one pinned to the other CPU, and decoded on the
first, pinned to one CPU in both
(BenchmarkDecodeWithBlocksFilledElsewhere in
analyze/ingest/decode_fill_bench_test.go), the decoder's own time per
span. A worker reading its own blocks (pread(2) of the file at its
block's place) would save the decoder at most what the second row costs
above the first.

| the block is | decoder's time per span | it / read here |
|---|---:|---:|
$fill_rows
Why the JSON reader is not built on a SIMD parser: the same JSON lines
(written to a file by internal/tracegen/gen), one goroutine, in the same
rounds. simdjson-go finds the structure of a line with AVX2 and builds a
tape of it, which the reader would then walk to the span fields it keeps;
the projection decoder reads those fields in its one scalar pass.

| JSON lines, one goroutine | spans/s | ours / it |
|---|---:|---:|
| ours (the projection decoder, above) | $(rate jsonl 1 ours | stats | fmt_rate) | — |
$simd_rows
Why the reader reads files and does not map them: the same JSON lines in
a file in the page cache, one goroutine, in the same rounds, before any
decoding (BenchmarkReadFile in
analyze/ingest/read_mmap_bench_linux_test.go). Both sides find and file
the same lines (the benchmark fails when their lines or bytes differ from
the file's). The reader copies each page out of the page cache; a
mapping has the kernel enter each page in the process's page table
instead, on a fault (a few pages at a time) or all at once ahead
(MAP_POPULATE), and take it out again at the unmap, and on this machine
that costs more than the copy. The blocks rotate as the pipeline's jobs in
flight give them back; each window is unmapped once filed, as a reader
would once its jobs were decoded, so that the mapping stays out of the RSS.

| the file's bytes, one goroutine | speed | read / it |
|---|---:|---:|
$file_rows
Reproduce: \`scripts/bench-ingest.sh $ROUNDS\` (or one round by hand:
\`cd analyze/ingest && go test -run '^\$' -bench '^(BenchmarkDecodeOnly|BenchmarkReadFile)\$' -benchtime ${ITERS}x -cpu 1\`, then
with \`-cpu 2\` and \`-bench '^(BenchmarkDecodeOnly|BenchmarkDecodeWithBatchesReadElsewhere|BenchmarkDecodeWithBlocksFilledElsewhere)\$'\`: one value a run, as a list runs its first figure at the
GOMAXPROCS of the last; each figure's \`procs\` says where it ran).
MD

if [ "$OUT" != "-" ]; then
	write_section "$OUT" Ingest "$section"
	log "wrote the Ingest section of $OUT"
fi
cat "$section"
