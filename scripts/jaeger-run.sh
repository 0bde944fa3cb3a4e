#!/usr/bin/env bash
# Runs a Jaeger v2 on 127.0.0.1 with its in-memory storage, for trying
# `mcptrace analyze --jaeger` by hand: the version and configuration the
# tests run (internal/jaegertest/jaeger.yaml), built once by
# scripts/jaeger-build.sh. It runs in the foreground until interrupted;
# its spans live as long as it does.
#
#   scripts/jaeger-run.sh &
#   mcptrace demo --mode pooled --otlp-endpoint http://127.0.0.1:4318
#   mcptrace analyze --jaeger http://127.0.0.1:16686 --service mcptrace-demo-pooled --since 1h --settle 0s
#
# Ports (environment, defaults): QUERY_HTTP_PORT=16686 (the query API,
# /api/v3), QUERY_GRPC_PORT=16685, OTLP_HTTP_PORT=4318, OTLP_GRPC_PORT=4317;
# MAX_TRACES=100000 (the storage's capacity, and the most a page may ask).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$("$root/scripts/jaeger-build.sh")
cfg=$(mktemp "${TMPDIR:-/tmp}/mcptrace-jaeger-XXXXXX.yaml")
trap 'rm -f "$cfg"' EXIT
sed -e "s/\${QUERY_HTTP_PORT}/${QUERY_HTTP_PORT:-16686}/" \
    -e "s/\${QUERY_GRPC_PORT}/${QUERY_GRPC_PORT:-16685}/" \
    -e "s/\${OTLP_HTTP_PORT}/${OTLP_HTTP_PORT:-4318}/" \
    -e "s/\${OTLP_GRPC_PORT}/${OTLP_GRPC_PORT:-4317}/" \
    -e "s/\${MAX_TRACES}/${MAX_TRACES:-100000}/" \
    "$root/internal/jaegertest/jaeger.yaml" >"$cfg"
echo "jaeger: query API http://127.0.0.1:${QUERY_HTTP_PORT:-16686}, OTLP/HTTP http://127.0.0.1:${OTLP_HTTP_PORT:-4318}" >&2
"$bin" --config "file:$cfg" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$cfg"' EXIT INT TERM
wait "$pid"
