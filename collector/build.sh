#!/usr/bin/env bash
# Build the otelcol-mcptrace Collector distribution with the OpenTelemetry
# Collector Builder (ocb). ocb is pinned to the core release the manifest
# uses (the version of its otlpreceiver line: v0.165.0 for manifest.yaml),
# installed with go install into collector/_build/bin.
#
#   collector/build.sh                                   # otelcol-mcptrace
#   collector/build.sh scale-out/router-manifest.yaml    # the routing tier
#
# Sources and binaries go under collector/_build/ (gitignored); the last
# line printed is the path of the binary. Needs Go and the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")"

manifest=${1:-manifest.yaml}
if [ ! -f "$manifest" ]; then
  echo "build.sh: no manifest $manifest (relative to collector/)" >&2
  exit 2
fi
OCB_VERSION=$(sed -n 's#^ *- gomod: go.opentelemetry.io/collector/receiver/otlpreceiver \(v[0-9][0-9.]*\).*#\1#p' "$manifest" | head -1)
if [ -z "$OCB_VERSION" ]; then
  echo "build.sh: $manifest has no otlpreceiver line to pin ocb's version by" >&2
  exit 2
fi

bin=$PWD/_build/bin/ocb-$OCB_VERSION
mkdir -p "$bin"
if [ ! -x "$bin/builder" ]; then
  echo "== install ocb $OCB_VERSION into $bin"
  GOBIN=$bin go install "go.opentelemetry.io/collector/cmd/builder@$OCB_VERSION"
fi

echo "== build $manifest with $("$bin/builder" version 2>&1)"
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
