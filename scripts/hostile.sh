#!/usr/bin/env bash
# hostile.sh runs the built mcptrace on generated hostile dumps (see
# internal/hostile): deep parent chains, a huge fan-out, a line of
# gigabytes, an unknown field of gigabytes, one enormous Jaeger trace,
# endless duplicates, a compression bomb of empty protobuf frames, an idle
# stdin that only a signal ends. Each dump is generated on the fly (into a
# temporary directory or a pipe: nothing large is stored), at a size that
# took minutes or gigabytes before the fixes of issue 14, and each run is
# bounded twice: an address-space limit (ulimit -v) and a time budget
# (timeout). A case passes when mcptrace answers within both with the exit
# code and message the case expects: a verdict (0, 1 or 3) for shapes that
# must be analysed, a clear error (2) naming the limit for shapes that must
# be refused, 130 for an interrupted read.
#
# Usage:
#   scripts/hostile.sh [FILTER]
#     FILTER  an extended regular expression: only cases whose name matches
# Environment: HOSTILE_VMEM_KB (address-space limit, default 3 GiB),
# HOSTILE_BUDGET (--max-memory, default 512MiB), HOSTILE_TIME (seconds per
# case, default 60).
set -euo pipefail

cd "$(dirname "$0")/.."
FILTER=${1:-.}
GO=${GO:-go}
VMEM_KB=${HOSTILE_VMEM_KB:-3145728}
BUDGET=${HOSTILE_BUDGET:-512MiB}
TIME=${HOSTILE_TIME:-60}

log() { printf 'hostile: %s\n' "$*" >&2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$GO" build -o "$work/mcptrace" ./cmd/mcptrace
"$GO" build -o "$work/gen" ./internal/hostile/gen
bin=$work/mcptrace
gen=$work/gen

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
  local start end code
  start=$(date +%s.%N)
  set +e
  (ulimit -v "$VMEM_KB"; timeout "$TIME" bash -c "$*") >"$work/out" 2>"$work/err"
  code=$?
  set -e
  end=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  local ok=1
  [[ " $codes " == *" $code "* ]] || ok=0
  if [[ -n "$want" ]] && ! grep -Eq "$want" "$work/err"; then ok=0; fi
  if [[ $ok == 1 ]]; then
    log "ok   $name: exit $code in ${secs}s"
  else
    log "FAIL $name: exit $code in ${secs}s (want exit $codes${want:+, stderr matching /$want/}); stderr:"
    tail -n 5 "$work/err" >&2
    failed+=("$name")
  fi
  rm -f "$work"/case.*
}

m="--max-memory $BUDGET"

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

if [[ $ran -eq 0 ]]; then
  log "no case matches '$FILTER'"
  exit 2
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  log "${#failed[@]} of $ran cases failed:"
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
log "all $ran cases answered within ${TIME}s and ${VMEM_KB} KB of address space"
