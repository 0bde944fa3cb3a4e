#!/usr/bin/env bash
# bench-hostile.sh measures the time per span of `mcptrace check`'s work
# (Load, Analyze, the built-in rules) on the hostile chain and fan-out shapes
# at 10k, 100k and 1M spans (BenchmarkHostileShapes in analyze/internal/engine), in
# interleaved rounds of one test binary (same GOMAXPROCS throughout), and
# prints min/median/max ns/span per size with the ratio of each size's
# median to the 10k median: flat (about 1) when every span costs the same
# whatever the depth or fan-out.
#
# Usage: scripts/bench-hostile.sh [ROUNDS] (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
GO=${GO:-go}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$GO" test -c -o "$work/analyze.test" ./analyze/internal/engine
echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) CPUs, GOMAXPROCS=${GOMAXPROCS:-$(nproc)}, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  (cd analyze/internal/engine && "$work/analyze.test" -test.run '^$' -test.bench 'BenchmarkHostileShapes' -test.benchtime 1s) |
    awk '/^BenchmarkHostileShapes/ { for (i = 1; i <= NF; i++) if ($(i+1) == "ns/span") print $1, $i }' >>"$work/results"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
sed -E 's/-[0-9]+ / /' "$work/results" | sort -k1,1 -k2,2n | awk '
  function flush() {
    if (cur == "") return
    m = a[int((c + 1) / 2)]
    med[cur] = m
    split(cur, p, "/"); base = p[1] "/" p[2] "/10000"
    printf "%-45s %10.0f %10.0f %10.0f", cur, a[1], m, a[c]
    if (base in med) printf " %8.2f", m / med[base]
    printf "\n"
  }
  BEGIN { printf "%-45s %10s %10s %10s %8s\n", "benchmark (ns/span)", "min", "median", "max", "ratio" }
  $1 != cur { flush(); cur = $1; c = 0 }
  { a[++c] = $2 }
  END { flush() }'
