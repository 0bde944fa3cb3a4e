#!/usr/bin/env bash
# bench-jaeger.sh measures `mcptrace analyze --jaeger` on a real Jaeger v2
# (scripts/jaeger-run.sh, its in-memory storage) holding a generated
# time-ordered workload of the pool's spans (internal/tracegen, SPANS of
# them, 1M by default), sent to its OTLP/HTTP receiver a request at a time:
#   - the peak RSS of analyze over windows holding a quarter, a half and
#     all of the spans: memory must stay flat, since each page is handed to
#     the engine as it arrives and a window is never held;
#   - the fetch's spans per second beside `mcptrace analyze` of the same
#     spans from the dump file, whose figures it must equal;
# and writes them into BENCHMARKS.md under "## Reading from Jaeger",
# leaving the other sections as they are. The machine's load is stated.
#
# Usage: scripts/bench-jaeger.sh   (env: SPANS=1000000 OUT=BENCHMARKS.md PAGE_TRACES=2000)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/benchmarks.sh
SPANS=${SPANS:-1000000}
OUT=${OUT:-BENCHMARKS.md}
PAGE_TRACES=${PAGE_TRACES:-2000}
export QUERY_HTTP_PORT=${QUERY_HTTP_PORT:-36686} QUERY_GRPC_PORT=${QUERY_GRPC_PORT:-36685} OTLP_HTTP_PORT=${OTLP_HTTP_PORT:-34318} OTLP_GRPC_PORT=${OTLP_GRPC_PORT:-34317}
export MAX_TRACES=${MAX_TRACES:-1000000}

tmp=$(mktemp -d)
jpid=
cleanup() {
	if [ -n "$jpid" ]; then kill "$jpid" 2>/dev/null || true; wait "$jpid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
# rate SPANS SECONDS: thousands of spans a second, n/a when the time is
# not a positive figure (never a rate over a made-up time).
rate() { with_verdict 'BEGIN { if (!isfigure(n) || !isfigure(s) || s <= 0) print "n/a"; else printf "%.0fk", n / s / 1000 }' -v n="$1" -v s="$2"; }
log() { printf 'bench-jaeger: %s\n' "$*" >&2; }
for tool in jq curl; do
	command -v "$tool" >/dev/null || { log "installing $tool"; apt-get install -y "$tool" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "$tool" >/dev/null; }; }
done

log "building mcptrace and jaeger"
go build -o "$tmp/mcptrace" ./cmd/mcptrace
scripts/jaeger-build.sh >/dev/null
log "generating $SPANS spans as OTLP JSON lines"
go run ./internal/tracegen/gen -bench "$SPANS" -encoding otlp-jsonl -o "$tmp/bench.jsonl"

scripts/jaeger-run.sh 2>"$tmp/jaeger.log" &
jpid=$!
query=http://127.0.0.1:$QUERY_HTTP_PORT
for _ in $(seq 100); do curl -sf "$query/api/v3/services" >/dev/null && break; sleep 0.2; done

log "sending the dump to Jaeger's OTLP/HTTP receiver"
while IFS= read -r line; do
	printf '%s' "$line" | curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary @- "http://127.0.0.1:$OTLP_HTTP_PORT/v1/traces"
done <"$tmp/bench.jsonl"

/usr/bin/time -f '%e %M %U %S' -o "$tmp/file.time" "$tmp/mcptrace" analyze --format json "$tmp/bench.jsonl" >"$tmp/file.json"
spans=$(jq .spans "$tmp/file.json")
[ "$spans" -gt 0 ] || { log "the dump held no span"; exit 1; }
service=$(head -c 100000 "$tmp/bench.jsonl" | grep -o '"service.name","value":{"stringValue":"[^"]*"' | head -1 | sed 's/.*"stringValue":"//; s/"$//')
start=$(jq -r .window.start "$tmp/file.json")
end_ns=$(( $(date -d "$(jq -r .window.end "$tmp/file.json")" +%s) + 1 ))
start_s=$(date -d "$start" +%s)
load=$(cut -d' ' -f1-3 /proc/loadavg)
rows=""
for quarter in 1 2 4; do
	end=$(( start_s + (end_ns - start_s) * quarter / 4 ))
	[ "$quarter" = 4 ] && end=$end_ns
	/usr/bin/time -f '%e %M %U %S' -o "$tmp/j.time" "$tmp/mcptrace" analyze --format json --jaeger "$query" --service "$service" \
		--start "$start" --end "$(date -u -d "@$end" +%FT%TZ)" --settle 0s --page-traces "$PAGE_TRACES" >"$tmp/j$quarter.json"
	read -r wall rss user sys <"$tmp/j.time"
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
	n=$(jq .spans "$tmp/j$quarter.json")
	pages=$(jq '.inputs[0].backend.pages' "$tmp/j$quarter.json")
	rows+="| $quarter/4 of the window | $n | $pages | $wall s | $(rate "$n" "$wall") | $cpu s | $(( rss / 1024 )) MiB |"$'\n'
	log "window $quarter/4: $n spans, $pages pages, $wall s, $(( rss / 1024 )) MiB"
done
same=no
if [ "$(jq -S 'del(.inputs)' "$tmp/j4.json")" = "$(jq -S 'del(.inputs)' "$tmp/file.json")" ]; then same=yes; fi
read -r fwall frss fuser fsys <"$tmp/file.time"
fcpu=$(awk -v u="$fuser" -v s="$fsys" 'BEGIN { printf "%.1f", u + s }')

cat >"$tmp/section.md" <<MD
## Reading from Jaeger

\`scripts/bench-jaeger.sh\`: $spans generated spans of the pool (one service,
time-ordered) sent to a Jaeger v2 ($(basename "$(dirname "$(scripts/jaeger-build.sh)")"), in-memory storage)
and read back by \`mcptrace analyze --jaeger\` in pages of $PAGE_TRACES traces,
over windows holding a quarter, a half and all of them. Measured on
$(date -u +%F), $(nproc) cores, load $load.

| window | spans | pages | wall | spans/s | mcptrace's CPU | peak RSS |
|---|---:|---:|---:|---:|---:|---:|
${rows}| the same spans from the dump file | $spans | – | $fwall s | $(rate "$spans" "$fwall") | $fcpu s | $(( frss / 1024 )) MiB |

Peak RSS stays flat as the window grows: each page is decoded and handed to
the engine as it arrives. The whole window's figures equal the file's: $same.
The wall time beyond mcptrace's own CPU is the backend's: Jaeger's memory
storage walks every trace it holds for each page, then encodes the page as
JSON, which mcptrace decodes through pdata (a file's JSON lines take the
projection decoder).
MD
write_section "$OUT" "Reading from Jaeger" "$tmp/section.md"
log "wrote the section into $OUT"
