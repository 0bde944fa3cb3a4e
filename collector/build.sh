#!/usr/bin/env bash
# Build the otelcol-mcptrace Collector distribution with the OpenTelemetry
# Collector Builder (ocb), pinned to the release the manifest uses.
#
#   collector/build.sh                                   # otelcol-mcptrace
#   collector/build.sh scale-out/router-manifest.yaml    # the routing tier
#
# Sources and binaries go under collector/_build/ (gitignored); the last
# line printed is the path of the binary. Needs Go and the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")"

OCB_VERSION=v0.165.0
manifest=${1:-manifest.yaml}
if [ ! -f "$manifest" ]; then
  echo "build.sh: no manifest $manifest (relative to collector/)" >&2
  exit 2
fi

bin=$PWD/_build/bin
mkdir -p "$bin"
if [ "$("$bin/builder" version 2>/dev/null || true)" != "ocb version $OCB_VERSION" ]; then
  echo "== install ocb $OCB_VERSION into $bin"
  GOBIN=$bin go install "go.opentelemetry.io/collector/cmd/builder@$OCB_VERSION"
fi

echo "== build $manifest"
"$bin/builder" --config "$manifest"

# ocb prints the binary's path in its log; recompute it from the manifest so
# the last line is just the path.
out=$(sed -n 's/^ *output_path: *//p' "$manifest" | head -1)
name=$(sed -n 's/^ *name: *//p' "$manifest" | head -1)
if [ -z "$out" ] || [ -z "$name" ] || [ ! -x "$out/$name" ]; then
  echo "build.sh: cannot find the binary ($out/$name) named by $manifest" >&2
  exit 1
fi
echo "== built:"
echo "$(cd "$out" && pwd)/$name"
