#!/usr/bin/env bash
# fuzz.sh runs every Go fuzz target of the module (every `func FuzzXxx` in a
# _test.go file) for the same time each, one after the other:
#
#   go test -run='^$' -fuzz='^FuzzXxx$' -fuzztime=TIME ./package
#
# Usage:
#   scripts/fuzz.sh [TIME] [FILTER]
#     TIME    how long each target runs, as -fuzztime takes it (default 10s;
#             CI runs `scripts/fuzz.sh 5s`, a nightly or a pre-release check
#             `scripts/fuzz.sh 10m`)
#     FILTER  an extended regular expression: only targets whose name
#             matches run (e.g. `scripts/fuzz.sh 1m 'Config|Selector'`)
#
# A crash is written by go test to the package's testdata/fuzz/FuzzXxx/
# directory: commit that file with the fix, and plain `go test` replays it as
# a regression test from then on. The script goes on with the other targets
# and exits 1 if any target failed, listing them. Each target's exec count
# is listed at the end. Environment: FUZZ_PARALLEL sets -parallel (default:
# every CPU); FUZZ_MINIMIZE sets -fuzzminimizetime (default 1s: go test's
# default of 60s spends a short run minimizing each new input instead of
# exploring from it).
#
# A target that fails with only "context deadline exceeded" and writes no
# failing input is not a finding: it is a race in the Go toolchain's fuzz
# coordinator at the end of a -fuzztime duration (go.dev/issue/75804, fixed
# in Go 1.27; this module builds with 1.26). Such a run is run once more;
# if that flakes the same way too, it is listed as a toolchain flake and
# does not fail the script. Any failure that writes an input, or says
# anything else, fails it.
set -euo pipefail

cd "$(dirname "$0")/.."
TIME=${1:-10s}
FILTER=${2:-.}
GO=${GO:-go}
MINIMIZE=${FUZZ_MINIMIZE:-1s}

log() { printf 'fuzz: %s\n' "$*" >&2; }

if [[ "$TIME" == "-h" || "$TIME" == "--help" ]]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

# Every fuzz target as "package-dir target", sorted for a stable order.
# Directories go ignores (testdata, vendor, names starting with . or _)
# are not searched.
mapfile -t targets < <(
  find . \( -name testdata -o -name vendor -o -name '.?*' -o -name '_*' \) -prune -o -name '*_test.go' -print |
    xargs -r grep -HoE '^func Fuzz[A-Za-z0-9_]*\(' |
    sed -E 's#^\./##; s#^(.*):func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#' |
    while read -r file name; do printf '%s %s\n' "$(dirname "$file")" "$name"; done |
    sort -u
)
# The filter is matched against the target's name.
selected=()
for t in "${targets[@]}"; do
  if [[ "${t#* }" =~ $FILTER ]]; then
    selected+=("$t")
  fi
done
if [[ ${#selected[@]} -eq 0 ]]; then
  log "no fuzz target matches '$FILTER'"
  exit 2
fi

parallel=()
if [[ -n "${FUZZ_PARALLEL:-}" ]]; then
  parallel=(-parallel "$FUZZ_PARALLEL")
fi

# corpus lists the target's committed and new failing inputs, so a run that
# wrote one can be told from a run that did not.
corpus() { ls -1 "$1/testdata/fuzz/$2" 2>/dev/null || true; }
# deadline_race says whether a failed run's only complaint is the
# coordinator's own "context deadline exceeded" (go.dev/issue/75804): the
# FAIL line followed by that message and nothing but go test's summary.
deadline_race() {
  awk '
    /^--- FAIL: / { fail = 1; next }
    fail && /^ +context deadline exceeded$/ { race = 1; next }
    fail && /^(FAIL|exit status [0-9]+|FAIL\t.*|ok .*)$/ { next }
    fail && NF { other = 1 }
    END { exit !(fail && race && !other) }
  ' "$1"
}

log "${#selected[@]} targets, $TIME each"
failed=()
flaked=()
execs=()
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in "${selected[@]}"; do
  dir=${t%% *}
  name=${t#* }
  log "== $name (./$dir)"
  for attempt in 1 2; do
    before=$(corpus "$dir" "$name")
    if "$GO" test -run='^$' -fuzz="^${name}\$" -fuzztime="$TIME" -fuzzminimizetime="$MINIMIZE" "${parallel[@]}" "./$dir" 2>&1 | tee "$out"; then
      break
    fi
    if [[ "$(corpus "$dir" "$name")" == "$before" ]] && deadline_race "$out"; then
      if [[ $attempt -eq 1 ]]; then
        log "$name: 'context deadline exceeded' with no failing input written: the toolchain's end-of-fuzztime race (go.dev/issue/75804); running it once more"
        continue
      fi
      flaked+=("$name (./$dir)")
      log "$name: the toolchain's end-of-fuzztime race again, no failing input written; listed as a flake, not a failure"
      break
    fi
    failed+=("$name (./$dir)")
    log "FAILED: $name: the failing input is under $dir/testdata/fuzz/$name/"
    break
  done
  # The last progress line says how many inputs ran: "... execs: N (...)".
  n=$(grep -oE 'execs: [0-9]+' "$out" | tail -n 1 | grep -oE '[0-9]+' || true)
  execs+=("$name: ${n:-?} execs")
done
log "execs in $TIME per target:"
printf '  %s\n' "${execs[@]}" >&2

if [[ ${#flaked[@]} -gt 0 ]]; then
  log "${#flaked[@]} targets hit the toolchain's end-of-fuzztime race twice (go.dev/issue/75804), with no failing input:"
  printf '  %s\n' "${flaked[@]}" >&2
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  log "${#failed[@]} of ${#selected[@]} targets failed:"
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
log "all ${#selected[@]} targets ran $TIME without a failure"
