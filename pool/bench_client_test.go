package pool_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

// fixtureChildEnv, set in the environment of this test binary, makes
// TestMain serve a fixture (printing its URL, until stdin closes) instead of
// running tests: the server of BenchmarkCallToolClientCPU, in its own
// process so the client's CPU and allocations are measured alone. Its value
// is the fixture's latency (a duration such as "1ms", or "0").
const fixtureChildEnv = "MCPTRACE_POOL_BENCH_FIXTURE"

// serveFixtureChild is the child side of fixtureChildEnv.
func serveFixtureChild() int {
	latency, err := time.ParseDuration(os.Getenv(fixtureChildEnv))
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixture child: %s=%q: want a duration such as 1ms or 0\n", fixtureChildEnv, os.Getenv(fixtureChildEnv))
		return 2
	}
	srv, err := fixtures.Start(fixtures.Options{Latency: latency})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixture child:", err)
		return 1
	}
	fmt.Println(srv.URL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "fixture child: close:", err)
		return 1
	}
	return 0
}

// startFixtureProcess runs a fixture with the latency in a child process of
// this binary and returns its URL; the child ends with the benchmark.
func startFixtureProcess(b *testing.B, latency time.Duration) string {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), fixtureChildEnv+"="+latency.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start the fixture process: %v", err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("read the fixture process's URL: %v", err)
	}
	return strings.TrimSpace(line)
}

// processCPU is the user plus system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCallToolClientCPU measures what tracing costs the client alone:
// the fixture runs in another process, so the process's CPU time (rusage)
// and allocations are the pool's, the SDK client's and the tracer's, not the
// server decoding _meta. Blocks of calls take turns between three sides,
// which one goes first rotating, and each side's CPU and allocations are
// summed over its blocks: untraced (no tracer), propagated (the same pool
// under a remote parent span: only the trace context in _meta, which the
// MCP SDK client encodes and decodes again), traced (the real SDK tracer
// with the batch span processor: three spans per call and the trace context
// in _meta) and traced-sync (the same with a synchronous span processor over
// the same discarding exporter: the difference to traced is the batch
// processor handing every ended span to its goroutine).
func BenchmarkCallToolClientCPU(b *testing.B) {
	benchClientCPU(b, 0)
}

// BenchmarkCallToolClientCPUIdle is BenchmarkCallToolClientCPU with the
// server answering every request after 1 ms (the fixture's latency): the
// client then parks while it waits, on every side alike, so the CPU it
// spends waiting (the Go scheduler spinning for work, more of it when the
// server takes longer, as it does to decode _meta) drops out and what is
// compared is the client's own work per call.
func BenchmarkCallToolClientCPUIdle(b *testing.B) {
	benchClientCPU(b, time.Millisecond)
}

func benchClientCPU(b *testing.B, latency time.Duration) {
	const block = 20
	url := startFixtureProcess(b, latency)
	target, err := pool.NewTarget(pool.TargetConfig{Endpoint: url})
	if err != nil {
		b.Fatal(err)
	}
	untraced := newBenchPool(b, pool.Options{})
	traced := newBenchPool(b, pool.Options{TracerProvider: sdkTracer(b)})
	syncTP := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSyncer(discardExporter{}))
	b.Cleanup(func() { _ = syncTP.Shutdown(context.Background()) })
	tracedSync := newBenchPool(b, pool.Options{TracerProvider: syncTP})
	bare := context.Background()
	type side struct {
		p   *pool.Pool
		ctx context.Context
	}
	sides := [4]side{{untraced, bare}, {untraced, remoteParent(bare)}, {traced, bare}, {tracedSync, bare}}
	params := &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "hi"}}
	run := func(s side) {
		for range block {
			res, err := s.p.CallTool(s.ctx, target, params)
			if err != nil {
				b.Fatal(err)
			}
			if got := resultText(res); got != "hi" {
				b.Fatalf("echo answered %q", got)
			}
		}
	}
	for _, p := range sides {
		run(p) // cold dials and connections are not what is compared
	}
	var cpu [4]time.Duration
	var mallocs [4]uint64
	var calls [4]int
	var ms runtime.MemStats
	n := 0
	for b.Loop() {
		for j := range sides {
			i := (n + j) % len(sides)
			runtime.ReadMemStats(&ms)
			m0 := ms.Mallocs
			c0 := processCPU(b)
			run(sides[i])
			cpu[i] += processCPU(b) - c0
			runtime.ReadMemStats(&ms)
			mallocs[i] += ms.Mallocs - m0
			calls[i] += block
		}
		n++
	}
	b.StopTimer()
	per := func(i int) float64 { return float64(cpu[i].Nanoseconds()) / float64(calls[i]) }
	b.ReportMetric(per(0), "untraced-cpu-ns/call")
	b.ReportMetric(per(1), "propagated-cpu-ns/call")
	b.ReportMetric(per(2), "traced-cpu-ns/call")
	b.ReportMetric(per(2)/per(0), "cpu-ratio")
	b.ReportMetric(per(1)/per(0), "propagated-cpu-ratio")
	b.ReportMetric(per(3)/per(0), "sync-cpu-ratio")
	b.ReportMetric(float64(mallocs[0])/float64(calls[0]), "untraced-allocs/call")
	b.ReportMetric(float64(mallocs[1])/float64(calls[1]), "propagated-allocs/call")
	b.ReportMetric(float64(mallocs[2])/float64(calls[2]), "traced-allocs/call")
}

// BenchmarkCallToolClient is BenchmarkCallToolClientCPU one side at a time,
// for profiling: the fixture runs in another process, so -memprofile and
// -cpuprofile of a sub-benchmark show the client alone. untraced has no
// tracer; propagated calls the same pool under a remote parent span (only
// the trace context in _meta); traced has the real SDK tracer. allocs/op of
// traced minus untraced is what tracing adds to a call, exactly.
func BenchmarkCallToolClient(b *testing.B) {
	url := startFixtureProcess(b, 0)
	for _, tc := range []struct {
		name   string
		traced bool
		parent bool
	}{
		{"untraced", false, false},
		{"propagated", false, true},
		{"traced", true, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			target, err := pool.NewTarget(pool.TargetConfig{Endpoint: url})
			if err != nil {
				b.Fatal(err)
			}
			po := pool.Options{}
			if tc.traced {
				po.TracerProvider = sdkTracer(b)
			}
			p := newBenchPool(b, po)
			ctx := context.Background()
			if tc.parent {
				ctx = remoteParent(ctx)
			}
			params := &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "hi"}}
			call := func() {
				res, err := p.CallTool(ctx, target, params)
				if err != nil {
					b.Fatal(err)
				}
				if got := resultText(res); got != "hi" {
					b.Fatalf("echo answered %q", got)
				}
			}
			call() // the cold dial is not what is measured
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
		})
	}
}
