#!/usr/bin/env bash
# Builds the Jaeger v2 server the tests run (internal/jaegertest) from the
# version internal/jaegertest/tool/go.mod pins, into the cache path the
# tests look in, and prints that path. A second run finds the binary and
# only prints it. CI runs it once before the tests, since a cold build
# (about ten minutes on two cores) could outlast a test's deadline.
#
# The path is $XDG_CACHE_HOME (else ~/.cache)/mcptrace/jaeger-<first 16 hex
# of the SHA-256 of the tool module's go.sum>/jaeger, as Go's
# os.UserCacheDir and jaegertest.CachePath have it on Linux; a new pin
# builds anew. The build goes to a temporary directory beside it and is
# renamed into place under the lock file the tests take too, so no test
# ever runs a half-written binary.
#
#   scripts/jaeger-build.sh    # prints e.g. /root/.cache/mcptrace/jaeger-37d6b05d17e9857b/jaeger
set -euo pipefail
cd "$(dirname "$0")/../internal/jaegertest/tool"

key=$(sha256sum go.sum | cut -c1-16)
dir="${XDG_CACHE_HOME:-$HOME/.cache}/mcptrace/jaeger-$key"
bin="$dir/jaeger"

build() {
  if [ -x "$bin" ]; then return; fi
  tmp=$(mktemp -d "$dir/.build-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  GOWORK=off go build -buildvcs=false -o "$tmp/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger >&2
  mv -f "$tmp/jaeger" "$bin"
}

if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  if command -v flock >/dev/null; then
    exec 9>"$bin.lock"
    flock 9
  fi
  build
fi
echo "$bin"
