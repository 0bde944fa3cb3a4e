// Command otlpload sends the benchmark workload of internal/tracegen (the
// pool's default vocabulary, executions of two invocations, about 900 spans
// per export request) over OTLP gRPC to a collector on 127.0.0.1, as fast
// as the collector accepts it, for scripts/bench-collector.sh.
//
// It pre-generates -batches requests once and sends them round after
// round, giving every round new trace ids and times an hour later, so the
// collector never sees a trace id twice and each (pool, key) pair's
// history moves forward. -senders requests are in flight at once.
//
// Two modes:
//
//   - throughput (-duration): send for -warmup + -duration; around the
//     measured window it reads the collector's own telemetry (-telemetry,
//     otelcol_receiver_accepted_spans) and, with -finalized, the
//     connector's mcptrace_traces_finalized_total, and prints one JSON
//     object with the spans per second each saw in the window;
//   - count (-traces N): send N traces (whole requests, so at least N),
//     print how many spans and traces went, and exit.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "otlpload:", err)
		os.Exit(1)
	}
}

type options struct {
	endpoint, telemetry, finalized string
	batches, senders, traces       int
	warmup, duration               time.Duration
}

func run() error {
	var o options
	flag.StringVar(&o.endpoint, "endpoint", "127.0.0.1:4317", "OTLP gRPC endpoint of the collector (127.0.0.1 only)")
	flag.StringVar(&o.telemetry, "telemetry", "", "URL of the collector's own metrics (otelcol_receiver_accepted_spans)")
	flag.StringVar(&o.finalized, "finalized", "", "URL of the Prometheus exporter with the connector's mcptrace_traces_finalized_total; empty: no connector")
	flag.IntVar(&o.batches, "batches", 64, "export requests to pre-generate (about 900 spans each)")
	flag.IntVar(&o.senders, "senders", 4, "requests in flight at once")
	flag.IntVar(&o.traces, "traces", 0, "count mode: send this many traces, then exit")
	flag.DurationVar(&o.warmup, "warmup", 3*time.Second, "throughput mode: send this long before the window")
	flag.DurationVar(&o.duration, "duration", 0, "throughput mode: the measured window")
	flag.Parse()
	if !strings.HasPrefix(o.endpoint, "127.0.0.1:") && !strings.HasPrefix(o.endpoint, "localhost:") {
		return fmt.Errorf("-endpoint %q: only 127.0.0.1 or localhost", o.endpoint)
	}
	if (o.traces > 0) == (o.duration > 0) {
		return errors.New("give one of -traces N (count mode) or -duration D (throughput mode)")
	}
	if o.duration > 0 && o.telemetry == "" {
		return errors.New("throughput mode needs -telemetry")
	}
	if o.batches < 1 || o.batches > maxBatches {
		return fmt.Errorf("-batches %d: want 1 to %d, so that one round of the requests spans less than the hour each round moves the times on", o.batches, maxBatches)
	}
	if o.duration > 5*time.Minute || o.warmup > time.Minute {
		return errors.New("-duration at most 5m and -warmup at most 1m: the load is bounded")
	}

	tpl, err := generate(o.batches)
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(o.endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dial %s: %w", o.endpoint, err)
	}
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)

	if o.traces > 0 {
		spans, traces, err := sendCount(client, tpl, o)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]int64{"spans": spans, "traces": traces})
	}
	return throughput(client, tpl, o)
}

// template is one pre-generated request and what it holds.
type template struct {
	td            ptrace.Traces
	spans, traces int
}

func generate(n int) ([]template, error) {
	var out []template
	_, err := tracegen.BenchBatches(n*900, func(td ptrace.Traces) error {
		ids := map[pcommon.TraceID]bool{}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					ids[ss.At(j).Spans().At(k).TraceID()] = true
				}
			}
		}
		out = append(out, template{td: td, spans: td.SpanCount(), traces: len(ids)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("generate the workload: %w", err)
	}
	return out, nil
}

// roundShift is how far each round moves the times: past the whole
// template's span of time. BenchBatches spaces executions 50 ms apart,
// with a pause of 6 minutes every 5,120 executions, and puts 128 in a
// request: maxBatches requests span about 51 minutes.
const (
	roundShift = time.Hour
	maxBatches = 200
)

// request returns the template's copy for round r: trace ids carry the
// round in their first eight bytes (the generator's counter is in the
// last eight), times move r hours on.
func request(t template, round uint64) ptrace.Traces {
	td := ptrace.NewTraces()
	t.td.CopyTo(td)
	shift := pcommon.Timestamp(round * uint64(roundShift))
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		ss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			sp := ss.At(j).Spans()
			for k := 0; k < sp.Len(); k++ {
				s := sp.At(k)
				id := s.TraceID()
				binary.BigEndian.PutUint64(id[:8], 0x6c6f616400000000|round)
				s.SetTraceID(id)
				s.SetStartTimestamp(s.StartTimestamp() + shift)
				s.SetEndTimestamp(s.EndTimestamp() + shift)
			}
		}
	}
	return td
}

// sender runs senders goroutines taking request numbers from next until
// stop says so; each sent request adds to spans and traces.
func sender(client ptraceotlp.GRPCClient, tpl []template, senders int, stop func(n int64) bool, spans, traces *atomic.Int64) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1) - 1
				if stop(n) {
					return
				}
				t := tpl[n%int64(len(tpl))]
				td := request(t, uint64(n/int64(len(tpl))))
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
				cancel()
				if err != nil {
					errs <- fmt.Errorf("request %d: %w", n, err)
					return
				}
				spans.Add(int64(t.spans))
				traces.Add(int64(t.traces))
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func sendCount(client ptraceotlp.GRPCClient, tpl []template, o options) (int64, int64, error) {
	var spans, traces atomic.Int64
	// Whole requests: stop once the requests taken hold o.traces traces.
	per := int64(tpl[0].traces)
	need := (int64(o.traces) + per - 1) / per
	err := sender(client, tpl, o.senders, func(n int64) bool { return n >= need }, &spans, &traces)
	return spans.Load(), traces.Load(), err
}

// result is what throughput mode prints.
type result struct {
	WindowSeconds         float64 `json:"window_seconds"`
	SentSpansPerSecond    float64 `json:"sent_spans_per_s"`
	AcceptedSpansPerSec   float64 `json:"accepted_spans_per_s"`
	FinalizedTracesPerSec float64 `json:"finalized_traces_per_s,omitempty"`
	FinalizedSpansPerSec  float64 `json:"finalized_spans_per_s,omitempty"`
	SpansPerTrace         float64 `json:"spans_per_trace"`
}

func throughput(client ptraceotlp.GRPCClient, tpl []template, o options) error {
	var spans, traces atomic.Int64
	// The senders stop once the window is read, or at a hard bound.
	var stop atomic.Bool
	bound := time.Now().Add(o.warmup + o.duration + 30*time.Second)
	done := make(chan error, 1)
	go func() {
		done <- sender(client, tpl, o.senders, func(int64) bool { return stop.Load() || time.Now().After(bound) }, &spans, &traces)
	}()
	select {
	case err := <-done:
		return fmt.Errorf("the load stopped during the warm-up: %v", err)
	case <-time.After(o.warmup):
	}
	read := func() (t time.Time, sent, accepted, finalized float64, err error) {
		t, sent = time.Now(), float64(spans.Load())
		if accepted, err = scrape(o.telemetry, "otelcol_receiver_accepted_spans"); err != nil {
			return
		}
		if o.finalized != "" {
			finalized, err = scrape(o.finalized, "mcptrace_traces_finalized_total")
		}
		return
	}
	t0, s0, a0, f0, err := read()
	if err != nil {
		return err
	}
	select {
	case err := <-done:
		return fmt.Errorf("the load stopped during the window: %v", err)
	case <-time.After(o.duration):
	}
	t1, s1, a1, f1, err := read()
	stop.Store(true)
	if err != nil {
		return err
	}
	if err := <-done; err != nil {
		return err
	}
	w := t1.Sub(t0).Seconds()
	perTrace := float64(spans.Load()) / float64(traces.Load())
	r := result{WindowSeconds: w, SentSpansPerSecond: (s1 - s0) / w, AcceptedSpansPerSec: (a1 - a0) / w, SpansPerTrace: perTrace}
	if o.finalized != "" {
		r.FinalizedTracesPerSec = (f1 - f0) / w
		r.FinalizedSpansPerSec = r.FinalizedTracesPerSec * perTrace
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// scrape sums every series of the metric name (any suffix such as _total)
// in the Prometheus text exposition at url.
func scrape(url, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("scrape %s: status %s", url, resp.Status)
	}
	sum, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		rest = strings.TrimPrefix(rest, "_total")
		if !(strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ")) {
			continue
		}
		value := rest
		if i := strings.LastIndex(line, "}"); i >= 0 {
			value = line[i+1:]
		}
		f := strings.Fields(value)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("scrape %s: %q: %w", url, line, err)
		}
		sum += v
		found = true
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("scrape %s: %w", url, err)
	}
	if !found {
		return 0, fmt.Errorf("scrape %s: no %s series", url, name)
	}
	return sum, nil
}
