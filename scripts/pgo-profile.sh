#!/usr/bin/env bash
# pgo-profile.sh writes cmd/mcptrace/default.pgo, the CPU profile the go
# command builds mcptrace with: `go build`, `go install` and `go run` of a
# main package read the default.pgo in its directory (-pgo=auto, their
# default) and optimise the hot paths it shows (inlining, devirtualising).
# The profile is of the reader BENCHMARKS.md's "Versus other tools" times:
# `mcptrace analyze --format json` over internal/tracegen's benchmark
# workload, as OTLP JSON lines and as length-prefixed protobuf, ROUNDS runs
# of each, merged into one profile. The binary profiled is built with
# -pgo=off, so the profile depends on the code alone, not on the profile it
# replaces.
#
# Rerun it when the reader or the engine changes much: a stale profile
# still builds, but optimises less (cmd/mcptrace's TestDefaultPGOProfilesTheReader
# fails when the functions that hold most of its samples are gone).
#
# Usage: scripts/pgo-profile.sh   (env: SPANS=4000000 ROUNDS=2
#        OUT=cmd/mcptrace/default.pgo)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/benchmarks.sh source-path=SCRIPTDIR disable=SC1091
. scripts/lib/benchmarks.sh
SPANS=${SPANS:-4000000}
ROUNDS=${ROUNDS:-2}
OUT=${OUT:-cmd/mcptrace/default.pgo}

log() { printf 'pgo-profile: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

case $SPANS in '' | *[!0-9]*) die "SPANS must be a whole number of spans, not \"$SPANS\"" ;; esac
case $ROUNDS in '' | *[!0-9]* | 0) die "ROUNDS must be a whole number above 0, not \"$ROUNDS\"" ;; esac
[ -d "$(dirname "$OUT")" ] || die "OUT: no directory $(dirname "$OUT")"

tmp=$(mktemp -d)
dumps_shm=""
next="" # the new profile beside OUT until it is moved over OUT
trap 'rm -rf "$tmp" ${dumps_shm:+"$dumps_shm"} ${next:+"$next"}' EXIT

log "building mcptrace (-pgo=off) and the generator"
go build -pgo=off -o "$tmp/mcptrace" ./cmd/mcptrace
go build -o "$tmp/gen" ./internal/tracegen/gen

dumps_dir "$SPANS"
log "generating $SPANS spans as OTLP JSON lines and length-prefixed protobuf"
"$tmp/gen" -bench "$SPANS" -encoding otlp-jsonl -o "$dumps/bench.jsonl"
"$tmp/gen" -bench "$SPANS" -encoding otlp-proto -o "$dumps/bench.pb"
warm_dumps "$dumps/bench.jsonl" "$dumps/bench.pb"

profiles=()
for r in $(seq "$ROUNDS"); do
	for f in jsonl pb; do
		log "round $r of $ROUNDS: profiling analyze of bench.$f"
		p="$tmp/$f.$r.prof"
		"$tmp/mcptrace" analyze --format json --cpuprofile "$p" "$dumps/bench.$f" >/dev/null
		profiles+=("$p")
	done
done

# Merged, then moved over OUT from beside it: OUT is whole or as it was.
go tool pprof -proto "${profiles[@]}" >"$tmp/merged.pgo" 2>"$tmp/pprof.err" ||
	die "merging the profiles failed: $(tail -n1 "$tmp/pprof.err")"
next=$(mktemp -p "$(dirname "$OUT")" ".$(basename "$OUT").XXXXXX")
cp "$tmp/merged.pgo" "$next"
chmod 644 "$next"
mv -f "$next" "$OUT"
next=""
log "wrote $OUT ($(wc -c <"$OUT") bytes, ${#profiles[@]} runs of $SPANS spans)"
