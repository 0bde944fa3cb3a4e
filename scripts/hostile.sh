#!/usr/bin/env bash
# hostile.sh runs the built mcptrace on generated hostile dumps (see
# internal/hostile): deep parent chains, a huge fan-out, a line of
# gigabytes, an unknown field of gigabytes, one enormous Jaeger trace,
# endless duplicates, a compression bomb of empty protobuf frames, an idle
# stdin that only a signal ends. Each dump is generated on the fly (into a
# temporary directory or a pipe: nothing large is stored), at a size that
# takes minutes or gigabytes without the defences, and each run is
# bounded twice: an address-space limit (ulimit -v) and a time budget
# (timeout). A case passes when mcptrace answers within both with the exit
# code and message the case expects: a verdict (0, 1 or 3) for shapes that
# must be analysed, a clear error (2) naming the limit for shapes that must
# be refused, 130 for an interrupted read. Every case also fails on a Go
# crash in its stderr (panic, fatal error) and on a peak RSS past
# HOSTILE_RSS_MB (GNU time's %M of the case: the largest process in it).
# The shapes against the defences by principle are held to 30 s and 512
# MiB each; at the end a table lists every case's exit code, wall time and peak RSS.
#
# Usage:
#   scripts/hostile.sh [FILTER]
#     FILTER  an extended regular expression: only cases whose name matches
# Environment: HOSTILE_VMEM_KB (address-space limit, default 3 GiB),
# HOSTILE_BUDGET (--max-memory, default 512MiB), HOSTILE_TIME (seconds per
# case, default 60; a case may set a smaller CASE_TIME), HOSTILE_RSS_MB
# (peak RSS per case, default 3072; the second round sets 512 or less).
set -euo pipefail

cd "$(dirname "$0")/.."
FILTER=${1:-.}
GO=${GO:-go}
VMEM_KB=${HOSTILE_VMEM_KB:-3145728}
BUDGET=${HOSTILE_BUDGET:-512MiB}
TIME=${HOSTILE_TIME:-60}
RSS_MB=${HOSTILE_RSS_MB:-3072}

log() { printf 'hostile: %s\n' "$*" >&2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$GO" build -o "$work/mcptrace" ./cmd/mcptrace
"$GO" build -o "$work/gen" ./internal/hostile/gen
"$GO" build -o "$work/fuzzrun" ./internal/hostile/fuzzrun
bin=$work/mcptrace
gen=$work/gen
fuzzrun=$work/fuzzrun
rows=()

failed=()
ran=0

# check NAME WANT_CODES WANT_STDERR -- COMMAND...: runs COMMAND (a shell
# string, may read a pipe) under the limits and checks its exit code is one
# of WANT_CODES and its stderr matches WANT_STDERR (an extended regular
# expression, "" for any).
check() {
  local name=$1 codes=$2 want=$3
  shift 4
  [[ "$name" =~ $FILTER ]] || return 0
  ran=$((ran + 1))
  local limit=${CASE_TIME:-$TIME} rss_mb=${CASE_RSS_MB:-$RSS_MB}
  local start end code
  start=$(date +%s.%N)
  set +e
  (ulimit -v "$VMEM_KB"; /usr/bin/time -f '%M' -o "$work/rss" timeout "$limit" bash -c "$*") >"$work/out" 2>"$work/err"
  code=$?
  set -e
  end=$(date +%s.%N)
  local secs rss
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  # GNU time prints "Command exited with non-zero status N" before %M.
  rss=$(( $(tail -n 1 "$work/rss" 2>/dev/null || echo 0) / 1024 ))
  local ok=1 why=""
  [[ " $codes " == *" $code "* ]] || { ok=0; why="want exit $codes"; }
  if [[ -n "$want" ]] && ! grep -Eq "$want" "$work/err"; then ok=0; why="$why; want stderr matching /$want/"; fi
  if grep -Eq '^(panic: |fatal error: )' "$work/err" "$work/out"; then ok=0; why="$why; a Go crash"; fi
  if (( rss > rss_mb )); then ok=0; why="$why; peak RSS ${rss} MiB over ${rss_mb} MiB"; fi
  rows+=("| $name | $code | ${secs} s | ${rss} MiB | $([[ $ok == 1 ]] && echo ok || echo FAIL) |")
  if [[ $ok == 1 ]]; then
    log "ok   $name: exit $code in ${secs}s, peak RSS ${rss} MiB"
  else
    log "FAIL $name: exit $code in ${secs}s, peak RSS ${rss} MiB (${why#; }); stderr:"
    tail -n 5 "$work/err" | cut -c1-400 >&2
    failed+=("$name")
  fi
  rm -rf "$work"/case.* "$work"/case
}

m="--max-memory $BUDGET"
# softRSS is the bound of the cases whose garbage the GC may keep up to the
# runtime's soft memory limit under $BUDGET (cmd/mcptrace/limits.go: the
# budget and a quarter, 640 MiB by default), and a tenth over it for what a
# soft limit lets the heap pass, so GC timing fails none of them.
softRSS=$RSS_MB
if [[ $BUDGET =~ ^([0-9]+)MiB$ ]]; then
  softRSS=$(( (BASH_REMATCH[1] + BASH_REMATCH[1] / 4) * 11 / 10 ))
fi
# m1g and softRSS1g are the same for the cases whose state needs a budget
# of 1 GiB (many pool scopes or keys).
m1g="--max-memory 1GiB"
softRSS1g=$(( (1024 + 1024 / 4) * 11 / 10 ))

# Shapes that must be analysed: a verdict, in time and memory linear in the spans.
check "invoke chain of 100k, check" "0 1 3" "" -- \
  "'$gen' -shape invoke-chain -n 100000 -o '$work/case.jsonl' && '$bin' check $m '$work/case.jsonl'"
check "handshake chain of 100k, check" "0 1 3" "" -- \
  "'$gen' -shape handshake-chain -n 100000 -o '$work/case.jsonl' && '$bin' check $m '$work/case.jsonl'"
check "handshake chain of 100k, check --execution-root" "0 1 3" "" -- \
  "'$gen' -shape handshake-chain -n 100000 -o '$work/case.jsonl' && '$bin' check $m --execution-root plugin.mcp.connection.handshake '$work/case.jsonl'"
check "1M acquires under one invocation, check on stdin" "0 1 3" "" -- \
  "'$gen' -shape acquire-fanout -n 1000000 -o - | '$bin' check $m -"
check "1M copies of one line, analyze on stdin" "0" "" -- \
  "'$gen' -shape duplicate-lines -n 1000000 -raw -o - | '$bin' analyze $m --format json - | grep -q '\"duplicate_spans\": 999999'"
check "256 MB of empty protobuf frames, analyze on stdin" "0" "" -- \
  "'$gen' -shape proto-zeros -n 268435456 -raw -o - | '$bin' analyze $m -"
check "64 MB unknown field in an OTLP document" "0" "" -- \
  "'$gen' -shape unknown-field-otlp -n 67108864 -o '$work/case.json.zst' && '$bin' analyze $m --max-decompression-ratio -1 --input-format otlp-json '$work/case.json.zst'"

# Shapes that must be refused: a clear error naming the limit, fast.
check "2 GB line in 66 KB of zstd" "2" "(decompression limit.*--max-decompression-ratio)|(line longer than .*--max-memory)" -- \
  "'$gen' -shape long-line -n 2147483648 -o '$work/case.jsonl.zst' && '$bin' analyze $m '$work/case.jsonl.zst'"
check "2 GB line, decompression unbounded" "2" "line longer than .*--max-memory" -- \
  "'$gen' -shape long-line -n 2147483648 -o '$work/case.jsonl.zst' && '$bin' analyze $m --max-decompression-ratio -1 '$work/case.jsonl.zst'"
check "1 GB unknown field in a Jaeger document, zstd" "2" "decompression limit" -- \
  "'$gen' -shape unknown-field-jaeger -n 1073741824 -o '$work/case.json.zst' && '$bin' analyze $m --input-format jaeger '$work/case.json.zst'"
check "one Jaeger trace of 1M spans" "2" "longer than .*--max-memory" -- \
  "'$gen' -shape jaeger-big-trace -n 1000000 -o '$work/case.json.zst' && '$bin' analyze $m --max-decompression-ratio -1 '$work/case.json.zst'"
check "4M copies of one line in zstd" "2" "decompression limit" -- \
  "'$gen' -shape duplicate-lines -n 4000000 -o '$work/case.jsonl.zst' && '$bin' check $m '$work/case.jsonl.zst'"
check "64 MB of empty protobuf frames in 3.5 KB of zstd" "2" "decompression limit" -- \
  "'$gen' -shape proto-zeros -n 67108864 -o '$work/case.pb.zst' && '$bin' analyze $m '$work/case.pb.zst'"

# An idle stdin: SIGINT ends the blocked read, exit 130.
check "SIGINT on an idle stdin" "130" "interrupted" -- \
  "'$bin' analyze - < <(sleep 60) & pid=\$!; sleep 1; kill -INT \$pid; wait \$pid"

# Shapes against the defences by principle: each answers within 30 s and
# 512 MiB with
# the right exit code, whatever defence holds it (a depth limit, a linear
# algorithm, a bounded output, the source's own word about missing data).
export CASE_TIME=30 CASE_RSS_MB=512
# The largest inputs are generated before their cases, outside the bounds:
# the 30 s are mcptrace's (generating 200k scopes takes seconds of its own).
pre=$work/pre
mkdir -p "$pre"
wants() { local n; for n in "$@"; do [[ "$n" =~ $FILTER ]] && return 0; done; return 1; }
if wants "78k executions, check" "SIGINT during check of 78k executions: exit 130 within 1.5 s"; then
  "$gen" -shape executions -n 78000 -o "$pre/executions-78k.jsonl"
fi
if wants "HTML report of 200k pool scopes under 64 MiB"; then
  "$gen" -shape pool-scopes -n 200000 -o "$pre/pool-scopes-200k.jsonl.zst"
fi
# A million-deep array in plugin.mcp.cache_key, 28 KB of gzip: refused or
# read, never a stack overflow.
check "million-deep cache_key array (28 KB gzip), check" "0 1 2 3" "" -- \
  "'$gen' -shape deep-cache-key -n 1000000 -o - | gzip -9 > '$work/case.jsonl.gz' && '$bin' check '$work/case.jsonl.gz'"
check "million-deep cache_key array (28 KB gzip), analyze" "0 2" "" -- \
  "'$gen' -shape deep-cache-key -n 1000000 -o - | gzip -9 > '$work/case.jsonl.gz' && '$bin' analyze '$work/case.jsonl.gz'"
# check scales with executions as analyze does (5k took 0.5 s, 78k 71 s).
check "5k executions, check" "0 1 3" "" -- \
  "'$gen' -shape executions -n 5000 -o '$work/case.jsonl' && '$bin' check $m '$work/case.jsonl'"
check "78k executions, check" "0 1 3" "" -- \
  "'$bin' check $m '$pre/executions-78k.jsonl'"
# A legal 3000-state regex on 80 span names (57 s before): its program is
# over the selector regex limit (1000 instructions), so it is refused before
# any matching (exit 2); Ctrl-C while a check runs answers within 1.5 s (or
# the check is done before it). cmd/mcptrace's TestInterruptAnswersInEveryPhase
# interrupts regexes within the limit that run for seconds.
rules3000=$work/rules-3000.yaml
cat >"$rules3000" <<'YAML'
rules:
  - id: regex-3000
    scope: trace
    select: {name_regex: "[a-z.0-9]{0,1000}[a-z.0-9]{0,1000}[a-z.0-9]{0,1000}z"}
    expect: {of: count, op: ">=", than: 0}
YAML
check "3000-state regex rules file on 80 span names of 1 KiB, check" "0 1 2 3" "" -- \
  "'$gen' -shape span-names -n 80 -o '$work/case.jsonl' && '$bin' check $m --config '$rules3000' '$work/case.jsonl'"
check "SIGINT during rules: exit 130 within 1.5 s" "0 1 2 3 130" "" -- \
  "'$gen' -shape span-names -n 80 -o '$work/case.jsonl' && { '$bin' check $m --config '$rules3000' '$work/case.jsonl' & pid=\$!; sleep 1; kill -INT \$pid 2>/dev/null; t0=\$(date +%s%N); wait \$pid; rc=\$?; t1=\$(date +%s%N); echo \"answered \$(( (t1 - t0) / 1000000 )) ms after SIGINT\" >&2; [ \$(( (t1 - t0) / 1000000 )) -le 1500 ] || exit 99; exit \$rc; }"
check "SIGINT during check of 78k executions: exit 130 within 1.5 s" "0 1 3 130" "" -- \
  "{ '$bin' check $m '$pre/executions-78k.jsonl' & pid=\$!; sleep 1; kill -INT \$pid 2>/dev/null; t0=\$(date +%s%N); wait \$pid; rc=\$?; t1=\$(date +%s%N); echo \"answered \$(( (t1 - t0) / 1000000 )) ms after SIGINT\" >&2; [ \$(( (t1 - t0) / 1000000 )) -le 1500 ] || exit 99; exit \$rc; }"
# Bounded output: a 64 KiB cell beside 2000 short ones (Markdown padded
# every row to it: 3.4 GB from 45 KB), and the HTML of 200k pool scopes
# (255 MiB at 1.46 GB), each under 64 MiB.
check "64 KiB cell beside 2000 scopes, analyze --format markdown under 64 MiB" "0" "" -- \
  "'$gen' -shape wide-cell -n 2000 -o '$work/case.jsonl.zst' && n=\$('$bin' analyze $m --format markdown '$work/case.jsonl.zst' | head -c 67108865 | wc -c); echo \"\$n bytes\" >&2; [ \"\$n\" -le 67108864 ]"
check "64 KiB cell beside 2000 scopes, check --format markdown under 64 MiB" "0" "" -- \
  "'$gen' -shape wide-cell -n 2000 -o '$work/case.jsonl.zst' && n=\$('$bin' check $m --format markdown '$work/case.jsonl.zst' | head -c 67108865 | wc -c); echo \"\$n bytes\" >&2; [ \"\$n\" -le 67108864 ]"
# 200k scopes hold about 500 MiB of per-scope state, which the engine
# charges to the budget (half of it at most): the case runs under
# --max-memory 1GiB ($m1g) and its RSS bound is that budget's soft limit.
# What the case guards, an unbounded HTML report's 1.5 GB, stays far
# above either.
CASE_RSS_MB=$softRSS1g check "HTML report of 200k pool scopes under 64 MiB" "0" "" -- \
  "'$bin' analyze $m1g --format html -o '$work/case.html' '$pre/pool-scopes-200k.jsonl.zst' && n=\$(wc -c < '$work/case.html'); echo \"\$n bytes\" >&2; [ \"\$n\" -le 67108864 ]"
# Injected markup and invisible characters ([click me](https://…),
# ![pixel](…), U+202E, U+2066–2069, zero-width, U+2028/2029, ESC, C1, a
# workflow command) in every string field, through every format: the
# fuzzer's oracle on three encodings (it exits 1 on any finding).
for seed in 12 21 30 48; do
  check "markup in every string field, every format (fuzzrun markup seed $seed)" "0" "" -- \
    "'$fuzzrun' -bin '$bin' -family markup -seed $seed -mask 131071 -cases 1 -minimize 0 -corpus /nonexistent -out '$work/case' >&2"
done
# The budget holds on the Collector's zstd records (675 MiB at 64MiB before).
CASE_RSS_MB=320 check "8 zstd records of 100k spans, --max-memory 64MiB: RSS under 320 MiB" "0 2" "" -- \
  "'$gen' -shape zstd-records -n 100000 -o '$work/case.bin' && '$bin' analyze --max-memory 64MiB '$work/case.bin'"
# Tempo's reader takes each batch through encoding/json's map[string]any
# and pdata, some thirty times a batch of tiny attributes: charged to the
# budget, a batch of 4 MB cannot fit the share of --max-memory 64MiB and is
# refused, naming the flag (every batch read, at 290 MiB, before).
CASE_RSS_MB=160 check "Tempo batches of 4 MB of tiny attributes, --max-memory 64MiB: exit 2 naming --max-memory" "2" "raise --max-memory" -- \
  "'$gen' -shape tempo-wide-batches -n 33554432 -o '$work/case.json' && '$bin' analyze --max-memory 64MiB '$work/case.json'"
# Jaeger's reader takes each trace through encoding/json's typed tree and
# pdata, five times a trace of tagged spans: charged to the budget, a
# trace of 4 MB cannot fit the share of --max-memory 64MiB and is left
# out with a warning naming the flag, the smaller last one read (every
# trace read, at 100 MiB, before).
CASE_RSS_MB=80 check "Jaeger traces of 4 MB of tagged spans, --max-memory 64MiB: warnings naming --max-memory, RSS under 80 MiB" "0" "raise --max-memory" -- \
  "'$gen' -shape jaeger-wide-traces -n 33554432 -o '$work/case.json' && '$bin' analyze --max-memory 64MiB '$work/case.json'"
# The projection decoders hold a span at 80 bytes whatever its size in
# the line: 140 KB lines of empty spans ({}, left out for their invalid
# trace ids) hold 5 MB each decoded. Charged to the budget, the lines in
# flight stay within its share and one line, on 8 workers as on 2 (196
# MiB on 2, 664 MiB on 8 before); the one valid span of each line is read.
CASE_RSS_MB=160 check "140 KB lines of tiny spans, --max-memory 64MiB, 8 workers: RSS under 160 MiB" "0 1 3" "analyzed the 240 spans" -- \
  "'$gen' -shape tiny-span-lines -n 33554432 -o '$work/case.jsonl' && GOMAXPROCS=8 '$bin' analyze --max-memory 64MiB '$work/case.jsonl'"
# Budgets that are not a positive byte size are refused.
check "--max-memory nan refused" "2" "max-memory" -- "'$bin' analyze --max-memory nan /dev/null"
check "--max-memory 0.5 refused" "2" "max-memory" -- "'$bin' analyze --max-memory 0.5 /dev/null"
# A source's word about missing data: partial, exit 3 under check.
check "Jaeger errors: 3 of 4 traces not loaded, check exit 3" "3" "" -- \
  "'$gen' -shape jaeger-errors -n 4 -o '$work/case.json' && '$bin' check $m '$work/case.json'"
check "good dump beside a NUL-filled and an empty .jsonl, check exit 3" "3" "" -- \
  "mkdir '$work/case' && '$gen' -shape executions -n 10 -o '$work/case/good.jsonl' && head -c 4096 /dev/zero > '$work/case/nul.jsonl' && : > '$work/case/empty.jsonl' && '$bin' check $m '$work/case'"
# A Tempo error body with raw 0xff: a clear error, its text valid UTF-8.
check "Tempo error with raw 0xff: exit 2, stderr valid UTF-8 showing the byte escaped" "2" '\\xff|0xff' -- \
  "'$gen' -shape tempo-raw-error -n 200 -o '$work/case.json'; '$bin' check $m '$work/case.json' 2>'$work/case.err'; rc=\$?; cat '$work/case.err' >&2; iconv -f UTF-8 -t UTF-8 '$work/case.err' >/dev/null 2>&1 || { echo 'stderr is not valid UTF-8' >&2; exit 98; }; exit \$rc"
# Readers under a budget. A span with one attribute nested past the depth
# limit is read with that value cut: exit 0, one warning naming the place,
# the span counted (its record was refused whole, exit 2, before).
check "one attribute nested 1M deep: exit 0, a warning of the cut, both spans counted" "0" "cut there, the rest of the record kept" -- \
  "'$gen' -shape deep-cache-key -n 1000000 -o '$work/case.jsonl' && '$bin' analyze $m --format json '$work/case.jsonl' | grep -q '^  \"spans\": 2,'"
# The Collector's zstd records rewritten as frames that do not state their
# size (zstd compressing a pipe): each worker's decompression is charged to
# the budget before it starts, on 16 workers as on 2.
reframe() { # IN OUT: IN's length-prefixed zstd frames, recompressed through a pipe
  local in=$1 out=$2 off=0 size n k
  size=$(stat -c %s "$in")
  : >"$out"
  while ((off < size)); do
    n=$(od -An -tu1 -j "$off" -N4 "$in" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
    head -c $((off + 4 + n)) "$in" | tail -c "$n" | zstd -dcq | zstd -cq >"$out.rec"
    k=$(stat -c %s "$out.rec")
    printf "\\x$(printf %02x $((k >> 24 & 255)))\\x$(printf %02x $((k >> 16 & 255)))\\x$(printf %02x $((k >> 8 & 255)))\\x$(printf %02x $((k & 255)))" >>"$out"
    cat "$out.rec" >>"$out"
    off=$((off + 4 + n))
  done
  rm -f "$out.rec"
}
unsized="8 unsized zstd records of 115k spans, --max-memory 256MiB, 16 workers: RSS under 512 MiB"
if wants "$unsized" && ! command -v zstd >/dev/null; then
  log "FAIL $unsized: the zstd command is needed to write frames without their size"
  failed+=("$unsized")
elif wants "$unsized"; then
  "$gen" -shape zstd-records -n 115000 -o "$pre/zstd-records.bin"
  reframe "$pre/zstd-records.bin" "$pre/zstd-records-unsized.bin"
  check "$unsized" "0" "" -- "GOMAXPROCS=16 '$bin' analyze --max-memory 256MiB '$pre/zstd-records-unsized.bin'"
fi
# Bounded work and config mistakes: a what-if grid past whatif.MaxGrid is
# refused before the dump is read; Ctrl-C during a long replay exits 130
# promptly; 24 regexes each under the single limit are over the file's
# regex budget; a second YAML document is an error at its line; the HTML
# report of a million cache keys replays the busiest 1,000 in its what-if
# section and says how many more keys it does not show.
# keys_dump N writes N acquires, each of its own cache key, one pool scope.
keys_dump() {
  awk -v n="$1" 'BEGIN {
    for (i = 1; i <= n; ) {
      printf "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"gw\"}},{\"key\":\"service.instance.id\",\"value\":{\"stringValue\":\"gw-1\"}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"github.com/mcptrace/mcptrace/pool\"},\"spans\":["
      for (k = 0; k < 1000 && i <= n; k++) {
        if (k > 0) printf ","
        s = 1777539600 + int(i / 1000000); u = i % 1000000
        printf "{\"traceId\":\"%032x\",\"spanId\":\"%016x\",\"name\":\"plugin.mcp.connection.acquire\",\"kind\":1,\"startTimeUnixNano\":\"%d%06d000\",\"endTimeUnixNano\":\"%d%06d500\",\"attributes\":[{\"key\":\"plugin.mcp.cache_key\",\"value\":{\"stringValue\":\"key-%d\"}},{\"key\":\"plugin.mcp.cache_hit\",\"value\":{\"boolValue\":false}},{\"key\":\"plugin.mcp.miss_reason\",\"value\":{\"stringValue\":\"cold\"}}]}", i, i, s, u, s, u, i
        i++
      }
      printf "]}]}]}\n"
    }
  }'
}
check "whatif grid of 300 x 300 x 10 settings refused" "2" "900,000 settings combinations, over the limit of 10,000" -- \
  "'$gen' -shape executions -n 10 -o '$work/case.jsonl' && '$bin' whatif $m --idle-ttl \$(seq -s, 1 300 | sed 's/,/s,/g')s --idle-per-key \$(seq -s, 1 300) --max-idle \$(seq -s, 1 10) '$work/case.jsonl'"
if wants "SIGINT during a whatif replay of 78k executions: exit 130 within 1.5 s"; then
  [[ -f "$pre/executions-78k.jsonl" ]] || "$gen" -shape executions -n 78000 -o "$pre/executions-78k.jsonl"
fi
if wants "HTML report of 1M cache keys: what-if over the busiest 1,000, under 64 MiB"; then
  keys_dump 1000000 >"$pre/keys-1m.jsonl"
fi
# 800 settings of 12,465 acquires: just under whatif.MaxReplayedAcquires,
# some five seconds of replay after a 2 s read.
# The signal goes once the dump is read (its file opened, then closed), so
# it lands in the replay however fast the machine reads.
check "SIGINT during a whatif replay of 78k executions: exit 130 within 1.5 s" "130" "interrupted" -- \
  "{ '$bin' whatif $m --idle-ttl \$(seq -s, 1 800 | sed 's/,/s,/g')s '$pre/executions-78k.jsonl' >/dev/null & pid=\$!; seen=; while kill -0 \$pid 2>/dev/null; do n=\$(ls -l /proc/\$pid/fd 2>/dev/null | grep -c executions-78k); [ \$n != 0 ] && seen=1; [ \$n = 0 ] && [ -n \"\$seen\" ] && break; sleep 0.01; done; kill -0 \$pid 2>/dev/null || { echo 'the replay ended before the signal' >&2; exit 97; }; kill -INT \$pid; t0=\$(date +%s%N); wait \$pid; rc=\$?; t1=\$(date +%s%N); echo \"answered \$(( (t1 - t0) / 1000000 )) ms after SIGINT\" >&2; [ \$(( (t1 - t0) / 1000000 )) -le 1500 ] || exit 99; exit \$rc; }"
rules24=$work/rules-24.yaml
{
  echo "rules:"
  for i in $(seq 1 24); do
    printf '  - id: regex-%d\n    scope: trace\n    select: {name_regex: "[a-z.0-9]{0,%d}z"}\n    expect: {of: count, op: ">=", than: 0}\n' "$i" $((470 + i))
  done
} >"$rules24"
check "24 regexes under the single limit, over the file's budget, on 80 span names of 1 KiB" "2" "rules-24.yaml:[0-9]+:[0-9]+: regex budget of the file exceeded: rule \"regex-[0-9]+\"" -- \
  "'$gen' -shape span-names -n 80 -o '$work/case.jsonl' && '$bin' check $m --config '$rules24' '$work/case.jsonl'"
twodocs=$work/two-documents.yaml
printf 'rules:\n  - id: a\n    scope: trace\n    select: request\n    expect: {of: count, op: ">=", than: 0}\n---\nregressions: {hit_rate_drop: 0.5}\n' >"$twodocs"
check "a config of two YAML documents refused at the second" "2" "two-documents.yaml:6:1: several YAML documents" -- \
  "'$gen' -shape executions -n 10 -o '$work/case.jsonl' && '$bin' check $m --config '$twodocs' '$work/case.jsonl'"
# Its peak RSS is the read of analyze's index of every span; the run
# lets the index go before the miss attribution, and the HTML report
# points at the attributed acquires with a dozen bytes an acquire beside
# them; the what-if section adds the per-key counts. The GC lets the heap
# grow to the runtime's soft limit. A million (scope, key) pairs hold
# about 385 MiB the engine charges to the budget (half of it at most), so
# the case runs under --max-memory 1GiB ($m1g), held to that budget's soft
# limit. The report's size, what the case guards, is checked against 64 MiB.
CASE_RSS_MB=$softRSS1g check "HTML report of 1M cache keys: what-if over the busiest 1,000, under 64 MiB" "0" "" -- \
  "'$bin' analyze $m1g --format html -o '$work/case.html' '$pre/keys-1m.jsonl' && n=\$(wc -c < '$work/case.html'); echo \"\$n bytes\" >&2; [ \"\$n\" -le 67108864 ] && grep -q '999,000 more keys not shown' '$work/case.html'"
unset CASE_TIME CASE_RSS_MB

# Files are the user's (RELIABILITY.md): no output overwrites an input, a
# write is whole or not at all, every write is checked, a pipe is read
# once, a baseline is bounded by --max-memory and answers a signal.
export CASE_TIME=30 CASE_RSS_MB=256
fdump=$work/files-dump.jsonl
fbase=$work/files-base.json
if wants "analyze -o IN IN: exit 2, IN intact" "dump on <(...) with a late span: analysed" \
  "check --baseline <(...): the file's verdict" "400 MiB baseline file under --max-memory 128MiB: exit 2" \
  "400 MiB baseline on <(...) under --max-memory 128MiB: exit 2" "SIGTERM during a stalled baseline <(...): exit 130 within 1.5 s" \
  "check with stdout a closed pipe: --junit and --summary written, exit 2" "SIGTERM mid-run of analyze -o: the old report whole, no temporary file"; then
  "$gen" -shape executions -n 5000 -o "$fdump"
  "$bin" analyze --format json "$fdump" > "$fbase"
  [[ -s "$pre/executions-78k.jsonl" ]] || "$gen" -shape executions -n 78000 -o "$pre/executions-78k.jsonl"
fi
check "analyze -o IN IN: exit 2, IN intact" "2" "destroy the input" -- \
  "cp '$fdump' '$work/case.jsonl' && '$bin' analyze -o '$work/case.jsonl' '$work/case.jsonl'; rc=\$?; cmp -s '$fdump' '$work/case.jsonl' || { echo 'the input changed' >&2; exit 98; }; exit \$rc"
check "rules --builtin >/dev/full: exit 2" "2" "standard output" -- "'$bin' rules --builtin >/dev/full"
check "fixture list >/dev/full: exit 2" "2" "standard output" -- "'$bin' fixture list >/dev/full"
if command -v jq >/dev/null; then
  # The first trace's last span moved to the end: a speculative run would
  # read the pipe a second time.
  check "dump on <(...) with a late span: analysed" "0" "" -- \
    "{ head -n 1 '$fdump' | jq -c '.resourceSpans[0].scopeSpans[0].spans |= .[:-1]'; tail -n +2 '$fdump'; head -n 1 '$fdump' | jq -c '.resourceSpans[0].scopeSpans[0].spans |= .[-1:]'; } > '$work/case.jsonl' && '$bin' analyze --format json <(cat '$work/case.jsonl') | jq -e '.spans > 0' >/dev/null"
fi
check "check --baseline <(...): the file's verdict" "0" "" -- \
  "'$bin' check --baseline <(cat '$fbase') '$fdump' >/dev/null"
check "400 MiB baseline file under --max-memory 128MiB: exit 2" "2" "larger than .*--max-memory" -- \
  "cp '$fbase' '$work/case.json' && truncate -s 400M '$work/case.json' && '$bin' check --max-memory 128MiB --baseline '$work/case.json' '$fdump'"
check "400 MiB baseline on <(...) under --max-memory 128MiB: exit 2" "2" "larger than .*--max-memory" -- \
  "'$bin' check --max-memory 128MiB --baseline <(cat '$fbase'; head -c 419430400 /dev/zero | tr '\\0' ' ') '$fdump'"
check "SIGTERM during a stalled baseline <(...): exit 130 within 1.5 s" "130" "interrupted" -- \
  "{ '$bin' check --baseline <(head -c 1000 '$fbase'; sleep 60) '$fdump' & pid=\$!; sleep 1; kill -TERM \$pid; t0=\$(date +%s%N); wait \$pid; rc=\$?; t1=\$(date +%s%N); echo \"answered \$(( (t1 - t0) / 1000000 )) ms after SIGTERM\" >&2; [ \$(( (t1 - t0) / 1000000 )) -le 1500 ] || exit 99; exit \$rc; }"
check "check with stdout a closed pipe: --junit and --summary written, exit 2" "2" "broken pipe" -- \
  "'$bin' check --junit '$work/case.xml' --summary '$work/case.md' '$fdump' | { exec 0<&-; sleep 1; }; rc=\${PIPESTATUS[0]}; grep -q '</testsuites>' '$work/case.xml' && test -s '$work/case.md' || { echo 'a file asked for is missing' >&2; exit 97; }; exit \$rc"
# The dump comes through a FIFO held open after its last byte, so the run
# is still reading when the signal comes, however fast the machine.
check "SIGTERM mid-run of analyze -o: the old report whole, no temporary file" "130" "" -- \
  "mkdir '$work/case' && echo 'the old report' > '$work/case/report.json' && rm -f '$work/in.fifo' && mkfifo '$work/in.fifo' && { '$bin' analyze --format html -o '$work/case/report.json' '$work/in.fifo' & pid=\$!; exec 3>'$work/in.fifo'; cat '$pre/executions-78k.jsonl' >&3; sleep 1; kill -TERM \$pid; wait \$pid; rc=\$?; exec 3>&-; }; n=\$(ls -A '$work/case' | wc -l); [ \"\$n\" = 1 ] || { echo \"\$n files beside the report\" >&2; exit 96; }; grep -qx 'the old report' '$work/case/report.json' || { echo 'the old report was damaged' >&2; exit 95; }; exit \$rc"
unset CASE_TIME CASE_RSS_MB

# Other shapes of the same families: an output that is a stream (a link
# to /dev/null, a FIFO, /dev/fd/1) is written through, never replaced by
# a regular file; stdin named by two inputs is a usage error saying so; a
# configuration file is bounded before it is parsed (/dev/zero, a 300 MB
# comment); a what-if grid within MaxGrid whose replays times acquires
# pass MaxReplayedAcquires is refused once the dump is read; serve's
# --url-file removal spares a link it wrote through.
export CASE_TIME=30 CASE_RSS_MB=512
sdump=$work/streams-dump.jsonl
if wants "analyze -o a link to /dev/null: the link and the device kept" "analyze -o a FIFO: written through, still a FIFO" \
  "analyze -o a link to /dev/full: exit 2 naming the file, the link kept" \
  "analyze -o /dev/fd/1 into a file: the report there" "check --baseline - -: exit 2, stdin named twice" \
  "--config /dev/zero: exit 2, too large" "--config of a 300 MB comment: exit 2 under 512 MiB"; then
  "$gen" -shape executions -n 200 -o "$sdump"
fi
check "analyze -o a link to /dev/null: the link and the device kept" "0" "" -- \
  "ln -s /dev/null '$work/case.out' && '$bin' analyze -o '$work/case.out' '$sdump' && test -L '$work/case.out' && test -c /dev/null"
check "analyze -o a link to /dev/full: exit 2 naming the file, the link kept" "2" "no space left on device" -- \
  "ln -s /dev/full '$work/case.out' && '$bin' analyze --format html -o '$work/case.out' '$sdump'; rc=\$?; test -L '$work/case.out' && test -c /dev/full || exit 97; exit \$rc"
check "analyze -o a FIFO: written through, still a FIFO" "0" "" -- \
  "mkfifo '$work/case.fifo' && { wc -c < '$work/case.fifo' > '$work/case.n' & } && '$bin' analyze -o '$work/case.fifo' '$sdump' && wait && test -p '$work/case.fifo' && [ \$(cat '$work/case.n') -gt 0 ]"
check "analyze -o /dev/fd/1 into a file: the report there" "0" "" -- \
  "'$bin' analyze --format json -o /dev/fd/1 '$sdump' > '$work/case.json' && grep -q '\"spans\"' '$work/case.json'"
check "check --baseline - -: exit 2, stdin named twice" "2" "stdin .*given twice" -- \
  "'$bin' analyze --format json '$sdump' > '$work/case.json' && '$bin' check --baseline - - < '$work/case.json'"
check "--config /dev/zero: exit 2, too large" "2" "configuration file too large" -- \
  "'$bin' check --config /dev/zero '$sdump'"
check "--config of a 300 MB comment: exit 2 under 512 MiB" "2" "configuration file too large" -- \
  "{ printf '# '; head -c 314572800 /dev/zero | tr '\\0' x; echo; } > '$work/case.yaml' && '$bin' check --config '$work/case.yaml' '$sdump'"
if wants "whatif 100 x 100 settings of 78k executions: refused once read"; then
  [[ -s "$pre/executions-78k.jsonl" ]] || "$gen" -shape executions -n 78000 -o "$pre/executions-78k.jsonl"
fi
check "whatif 100 x 100 settings of 78k executions: refused once read" "2" "acquire replays, over the limit" -- \
  "'$bin' whatif $m --idle-ttl \$(seq -s, 1 100 | sed 's/,/s,/g')s --idle-per-key \$(seq -s, 1 100) '$pre/executions-78k.jsonl'"
check "fixture serve --url-file a link to /dev/null: the link stays" "0" "" -- \
  "ln -s /dev/null '$work/case.url' && { '$bin' fixture serve --url-file '$work/case.url' > '$work/case.out' & pid=\$!; } && until [ -s '$work/case.out' ]; do sleep 0.1; done; kill -INT \$pid; wait \$pid; test -L '$work/case.url' && test -c /dev/null"
unset CASE_TIME CASE_RSS_MB

if [[ $ran -eq 0 ]]; then
  log "no case matches '$FILTER'"
  exit 2
fi
{
  echo "| case | exit | wall | peak RSS | result |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} >&2
if [[ ${#failed[@]} -gt 0 ]]; then
  log "${#failed[@]} of $ran cases failed:"
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
log "all $ran cases answered within ${TIME}s and ${VMEM_KB} KB of address space"
