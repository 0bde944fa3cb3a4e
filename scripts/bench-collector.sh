#!/usr/bin/env bash
# bench-collector.sh measures one otelcol-mcptrace process (collector/build.sh)
# and writes the figures into BENCHMARKS.md under "## Collector distribution",
# leaving the other sections as they are:
#
#   1. throughput: spans/s one collector sustains on GOMAXPROCS=2 with the
#      mcptrace connector pipeline (collector/config.yaml's shape: OTLP in,
#      traces -> mcptrace -> metrics to the Prometheus exporter and findings
#      to the debug exporter, the connector's wait 1s so traces are
#      finalized and analysed during the run) against the same binary with
#      only a debug exporter (verbosity basic); ROUNDS interleaved rounds of
#      WARMUP + DURATION each, min/median/max. The load generator
#      (collector/scaleout/otlpload) sends the tracegen benchmark workload
#      over OTLP gRPC as fast as the collector accepts it, SENDERS requests
#      in flight. Throughput is read from the collector itself: its own
#      telemetry's otelcol_receiver_accepted_spans, and for the connector
#      the traces it finalized (mcptrace_traces_finalized_total) times the
#      workload's spans per trace;
#   2. memory per open trace: the collector with the connector's wait at
#      10m and hold_complete holds every trace it gets; RSS (VmRSS) with none, after OPEN
#      traces and after 2 x OPEN, MEM_ROUNDS rounds:
#      (RSS(2N) - RSS(0)) / 2N and the slope (RSS(2N) - RSS(N)) / N.
#
# The load generator runs on the same 2 cores as the collector (and so do
# other engineers' jobs on a shared machine): the load average is recorded
# before and after.
#
# Usage: scripts/bench-collector.sh
#   env: ROUNDS=5 WARMUP=3s DURATION=10s SENDERS=4 OPEN=20000 MEM_ROUNDS=3
#        OUT=BENCHMARKS.md BENCH_SKIP_BUILD=1 (reuse collector/_build)
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib/benchmarks.sh
ROUNDS=${ROUNDS:-5}
WARMUP=${WARMUP:-3s}
DURATION=${DURATION:-10s}
SENDERS=${SENDERS:-4}
OPEN=${OPEN:-20000}
MEM_ROUNDS=${MEM_ROUNDS:-3}
OUT=${OUT:-BENCHMARKS.md}
export GOMAXPROCS=2

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
log() { printf 'bench-collector: %s\n' "$*" >&2; }
ensure_jq

if [ "${BENCH_SKIP_BUILD:-}" = 1 ]; then
	bin=collector/_build/otelcol-mcptrace/otelcol-mcptrace
else
	log "building otelcol-mcptrace"
	bin=$(collector/build.sh | tail -1)
fi
[ -x "$bin" ] || { log "no collector binary at $bin"; exit 1; }
log "building the load generator"
(cd collector && go build -o "$tmp/otlpload" ./scaleout/otlpload)

freeport() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

cat >"$tmp/connector.yaml" <<'EOF'
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${env:BENCH_OTLP_PORT}
connectors:
  mcptrace:
    wait: ${env:BENCH_WAIT}
    hold_complete: ${env:BENCH_HOLD}
    max_open_traces: 1000000
exporters:
  prometheus:
    endpoint: 127.0.0.1:${env:BENCH_PROM_PORT}
  debug:
    verbosity: basic
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [mcptrace]
    metrics:
      receivers: [mcptrace]
      exporters: [prometheus]
    logs:
      receivers: [mcptrace]
      exporters: [debug]
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: ${env:BENCH_TEL_PORT}
EOF
cat >"$tmp/debug.yaml" <<'EOF'
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${env:BENCH_OTLP_PORT}
exporters:
  debug:
    verbosity: basic
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [debug]
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: ${env:BENCH_TEL_PORT}
EOF

# start CONFIG WAIT [HOLD]: starts the collector on free ports (HOLD, default
# false, is the connector's hold_complete), waits (bounded)
# until it is ready; sets pid, otlp, tel, promurl.
start() {
	local config=$1 wait=$2 hold=${3:-false} i
	otlp=$(freeport) tel=$(freeport) prom=$(freeport)
	promurl=http://127.0.0.1:$prom/metrics
	BENCH_OTLP_PORT=$otlp BENCH_TEL_PORT=$tel BENCH_PROM_PORT=$prom BENCH_WAIT=$wait BENCH_HOLD=$hold \
		"$bin" --config "file:$tmp/$config" >"$tmp/collector.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	for i in $(seq 600); do
		grep -q 'Everything is ready' "$tmp/collector.log" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1 # polling for readiness, bounded to 60 s
	done
	log "collector ($config) did not start:"
	tail -20 "$tmp/collector.log" >&2
	exit 1
}
stop() {
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
# metric URL NAME: the sum of NAME's series (with or without _total) at URL.
metric() { curl -fsS "$1" | awk -v n="$2" '$1 == n || $1 == n "_total" || index($1, n "{") == 1 || index($1, n "_total{") == 1 { s += $NF; f = 1 } END { if (!f) exit 1; printf "%.0f\n", s }'; }

minimum() { sort -g | head -n1; }
maximum() { sort -g | tail -n1; }
stats() { local f=$1; printf '%s (%s – %s)' "$(median <"$f")" "$(minimum <"$f")" "$(maximum <"$f")"; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$tmp/conn" ; : >"$tmp/conn_acc" ; : >"$tmp/dbg" ; : >"$tmp/ratio"
for r in $(seq "$ROUNDS"); do
	start connector.yaml 1s
	"$tmp/otlpload" -endpoint "127.0.0.1:$otlp" -senders "$SENDERS" -warmup "$WARMUP" -duration "$DURATION" \
		-telemetry "http://127.0.0.1:$tel/metrics" -finalized "$promurl" >"$tmp/conn.json"
	stop
	start debug.yaml 1s
	"$tmp/otlpload" -endpoint "127.0.0.1:$otlp" -senders "$SENDERS" -warmup "$WARMUP" -duration "$DURATION" \
		-telemetry "http://127.0.0.1:$tel/metrics" >"$tmp/dbg.json"
	stop
	c=$(jq '.finalized_spans_per_s | floor' "$tmp/conn.json")
	ca=$(jq '.accepted_spans_per_s | floor' "$tmp/conn.json")
	d=$(jq '.accepted_spans_per_s | floor' "$tmp/dbg.json")
	spt=$(jq '.spans_per_trace * 100 | round / 100' "$tmp/conn.json")
	echo "$c" >>"$tmp/conn"
	echo "$ca" >>"$tmp/conn_acc"
	echo "$d" >>"$tmp/dbg"
	awk -v c="$c" -v d="$d" 'BEGIN { printf "%.3f\n", c / d }' >>"$tmp/ratio"
	log "round $r: connector $c spans/s finalized ($ca accepted), debug only $d spans/s"
done

: >"$tmp/per_trace" ; : >"$tmp/slope"
for r in $(seq "$MEM_ROUNDS"); do
	start connector.yaml 10m true
	rss0=$(rss_kib)
	sent=0
	for step in 1 2; do
		out=$("$tmp/otlpload" -endpoint "127.0.0.1:$otlp" -senders "$SENDERS" -traces "$OPEN")
		sent=$((sent + $(jq .spans <<<"$out")))
		traces=$(jq .traces <<<"$out")
		accepted=0
		for i in $(seq 600); do
			accepted=$(metric "http://127.0.0.1:$tel/metrics" otelcol_receiver_accepted_spans || echo 0)
			[ "$accepted" -ge "$sent" ] && break
			sleep 0.1 # polling the collector's own counter, bounded to 60 s
		done
		if [ "$accepted" -lt "$sent" ]; then log "memory round $r: the collector accepted $accepted of $sent spans"; exit 1; fi
		eval "rss$step=\$(rss_kib)"
		eval "traces$step=\$traces"
	done
	fin=$(metric "$promurl" mcptrace_traces_finalized_total || echo 0)
	stop
	if [ "$fin" != 0 ]; then log "memory round $r: $fin traces finalized before the measurement"; exit 1; fi
	n=$((traces1 + traces2))
	awk -v a="$rss2" -v b="$rss0" -v n="$n" 'BEGIN { printf "%.0f\n", (a - b) * 1024 / n }' >>"$tmp/per_trace"
	awk -v a="$rss2" -v b="$rss1" -v n="$traces2" 'BEGIN { printf "%.0f\n", (a - b) * 1024 / n }' >>"$tmp/slope"
	log "memory round $r: RSS $((rss0 / 1024)) MiB empty, $((rss1 / 1024)) MiB at $traces1 open traces, $((rss2 / 1024)) MiB at $n"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

version=$("$bin" --version 2>/dev/null | head -1)
cat >"$tmp/section.md" <<EOF
## Collector distribution

\`scripts/bench-collector.sh\` on $(date -u +%Y-%m-%d), $version, Go $(go env GOVERSION | sed 's/^go//'),
GOMAXPROCS=2 for the collector and for the load generator, which share the
machine's 2 cores with each other and with anything else running (the load
average, 1, 5 and 15 min: $load_before before, $load_after after). Figures are
median (min – max) over $ROUNDS interleaved rounds of $WARMUP warm-up +
$DURATION measured.

Workload: the tracegen benchmark batches (executions of two invocations,
64 pools × 4 keys, $spt spans per trace, about 900 spans per request),
sent over OTLP gRPC by \`collector/scaleout/otlpload\` with $SENDERS
requests in flight, each round of the templates with new trace ids and
times.

| Pipeline | spans/s |
| --- | --- |
| OTLP → debug exporter (basic), accepted by the receiver | $(stats "$tmp/dbg") |
| OTLP → mcptrace (metrics → Prometheus exporter, findings → debug), finalized and analysed | $(stats "$tmp/conn") |
| the same, accepted by the receiver | $(stats "$tmp/conn_acc") |
| connector / debug only, per round | $(stats "$tmp/ratio") |

The connector pipeline is collector/config.yaml's shape with \`wait: 1s\`
(a trace whose root has arrived is finalized at once, any other after the
wait): both legs (metrics and logs)
buffer and analyse every trace, each on its own. Its rate is the traces
the connector finalized in the window times the spans per trace; the
receiver's accepted rate is shown beside it (the connector buffers what it
accepts and analyses it in its sweeps).

Memory per open trace (\`wait: 10m\` and \`hold_complete: true\`, so nothing
is finalized, complete traces included; the same
two-leg config, so every trace is held twice), process RSS, GOGC default,
$MEM_ROUNDS rounds; OPEN=$OPEN traces sent twice, in whole requests of
about 900 spans:

| | bytes per open trace |
| --- | --- |
| (RSS with N = $n open traces − RSS empty) / N | $(stats "$tmp/per_trace") |
| (RSS at N − RSS at $traces1) / $traces2 | $(stats "$tmp/slope") |

RSS includes garbage the Go runtime has not collected or returned yet, so
it is what the operating system sees, not the live heap.

Reproduce: \`scripts/bench-collector.sh\` (env ROUNDS, WARMUP, DURATION,
SENDERS, OPEN, MEM_ROUNDS; BENCH_SKIP_BUILD=1 reuses collector/_build).
EOF
write_section "$OUT" "Collector distribution" "$tmp/section.md"
log "wrote the Collector distribution section of $OUT"
