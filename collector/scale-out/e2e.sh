#!/usr/bin/env bash
# End-to-end test of the scale-out tier: builds otelcol-mcptrace and the
# routing collector with collector/build.sh (into collector/_build/; warm
# caches make that seconds), builds the mcptrace CLI, then runs the test
# package collector/scaleout against them: real processes on 127.0.0.1,
# a Debian Prometheus (/usr/bin/prometheus: apt-get install prometheus)
# scraping both backends. See collector/scaleout/doc.go.
#
#   collector/scale-out/e2e.sh            # build, then test
#   E2E_SKIP_BUILD=1 collector/scale-out/e2e.sh   # reuse collector/_build
#
# Extra arguments go to go test (e.g. -run TestScaleOutBackendKill).
# Exits non-zero when a build or the test fails; the test fails (never
# skips) when a binary is missing.
set -euo pipefail
collector=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$collector/.." && pwd)

secs() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(secs)" 'BEGIN { printf "%.1f", b - a }'; }

build() {
  local manifest=$1 t0 out
  t0=$(secs)
  if [ "${E2E_SKIP_BUILD:-}" = 1 ]; then
    local dir name
    dir=$(sed -n 's/^ *output_path: *//p' "$collector/$manifest" | head -1)
    name=$(sed -n 's/^ *name: *//p' "$collector/$manifest" | head -1)
    out="$collector/$dir/$name"
  else
    out=$("$collector/build.sh" "$manifest" | tail -1)
  fi
  if [ ! -x "$out" ]; then
    echo "e2e.sh: no binary $out for $manifest" >&2
    exit 1
  fi
  echo "== $manifest: $out ($(elapsed "$t0") s)" >&2
  echo "$out"
}

collector_bin=$(build manifest.yaml)
router_bin=$(build scale-out/router-manifest.yaml)

# Every shipped config must load in the binary that runs it (the
# connector's Validate names a bad field).
for cfg in config.yaml scale-out/backend-1.yaml scale-out/backend-2.yaml; do
  "$collector_bin" validate --config "$collector/$cfg"
done
"$router_bin" validate --config "$collector/scale-out/router.yaml"
echo "== shipped configs validate" >&2

t0=$(secs)
cli=$(mktemp -d)/mcptrace
trap 'rm -rf "$(dirname "$cli")"' EXIT
(cd "$root" && go build -o "$cli" ./cmd/mcptrace)
echo "== mcptrace CLI ($(elapsed "$t0") s)" >&2

t0=$(secs)
cd "$collector"
MCPTRACE_E2E=1 \
  MCPTRACE_E2E_COLLECTOR="$collector_bin" \
  MCPTRACE_E2E_ROUTER="$router_bin" \
  MCPTRACE_E2E_CLI="$cli" \
  go test -count=1 -timeout 5m -v "$@" ./scaleout/
echo "== e2e test: $(elapsed "$t0") s" >&2
