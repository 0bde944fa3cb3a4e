#!/usr/bin/env bash
# hostile-fuzz.sh runs the structure-aware fuzzer (internal/hostile/fuzz)
# against the built mcptrace for a bounded time, after replaying its
# committed corpus of findings:
#
#   1. builds mcptrace and the driver (internal/hostile/fuzzrun);
#   2. replays every reproducer of internal/hostile/fuzz/testdata/corpus
#      (go test -run TestCorpus, against the binary just built): one that
#      still fails and is not listed in the corpus's known.txt fails the
#      script; a listed one is printed with its reason;
#   3. fuzzes for DURATION from a seed (FUZZ_SEED, default from the clock;
#      printed, so any run can be repeated): each case through check and
#      analyze in every format (table, json, markdown, html, junit, the
#      GitHub annotations and step summary), judged for a crash, a peak RSS
#      past three times --max-memory plus 128 MiB (512 MiB at most), a run past
#      30 s, an escape byte or live markup from the dump, output past its
#      linear bound, exit 0 on a dump a source said was broken, SIGINT not
#      answered. A finding an open reproducer already has is known; any
#      other is new: minimized, written under FUZZ_OUT (default
#      ./hostile-findings) with its case.json, printed with the command that
#      reproduces it, and the script exits 1.
#
# Usage:
#   scripts/hostile-fuzz.sh [DURATION]   (default 60s; CI runs 60s, a
#                                         nightly or a release 10m)
# Environment: FUZZ_SEED, FUZZ_OUT, FUZZ_MINIMIZE (time spent minimizing
# each new finding, default 20s), FUZZ_ARGS (more fuzzrun flags).
set -euo pipefail

cd "$(dirname "$0")/.."
DURATION=${1:-60s}
GO=${GO:-go}
OUT=${FUZZ_OUT:-hostile-findings}

log() { printf 'hostile-fuzz: %s\n' "$*" >&2; }

if [[ "$DURATION" == "-h" || "$DURATION" == "--help" ]]; then
  sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$GO" build -o "$work/mcptrace" ./cmd/mcptrace
"$GO" build -o "$work/fuzzrun" ./internal/hostile/fuzzrun

log "replaying the corpus (internal/hostile/fuzz/testdata/corpus)"
set +e
MCPTRACE_BIN="$work/mcptrace" "$GO" test -count=1 -v -run 'TestCorpus' ./internal/hostile/fuzz/ >"$work/replay" 2>&1
replay=$?
set -e
grep -Ev '^(=== (RUN|PAUSE|CONT)|--- PASS)' "$work/replay" >&2 || true
if [[ $replay -ne 0 ]]; then
  log "FAILED: a reproducer of the corpus fails and is not listed in known.txt (above)"
  exit 1
fi

seed_args=()
if [[ -n "${FUZZ_SEED:-}" ]]; then
  seed_args=(-seed "$FUZZ_SEED")
fi
log "fuzzing for $DURATION"
# shellcheck disable=SC2086
"$work/fuzzrun" -bin "$work/mcptrace" -duration "$DURATION" -minimize "${FUZZ_MINIMIZE:-20s}" \
  -out "$OUT" -corpus internal/hostile/fuzz/testdata/corpus "${seed_args[@]}" ${FUZZ_ARGS:-}
