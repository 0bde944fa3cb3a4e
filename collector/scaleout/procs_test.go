package scaleout

// Real processes for the end-to-end test: the collectors, Prometheus, an
// OTLP capture receiver, and the mcptrace CLI.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // the collectors' OTLP exporters compress with gzip

	"github.com/mcptrace/mcptrace/internal/promtest"
)

// Environment the test reads. The e2e driver (collector/scale-out/e2e.sh)
// sets the binaries; without them the test skips, with them it runs and a
// missing binary fails it.
const (
	envCollector = "MCPTRACE_E2E_COLLECTOR" // otelcol-mcptrace
	envRouter    = "MCPTRACE_E2E_ROUTER"    // otelcol-mcptrace-router
	envCLI       = "MCPTRACE_E2E_CLI"       // mcptrace; built from the checkout when unset
	envRequire   = "MCPTRACE_E2E"           // "1": the binaries must be given (CI)
)

// prometheusBinary is where Debian's prometheus package installs the server.
const prometheusBinary = "/usr/bin/prometheus"

// binaries are the programs the test runs.
type binaries struct {
	collector, router, cli, prometheus string
}

// findBinaries returns the binaries, or skips when the test was not asked
// to run; once asked (a variable set), anything missing fails it.
func findBinaries(t *testing.T) binaries {
	t.Helper()
	b := binaries{collector: os.Getenv(envCollector), router: os.Getenv(envRouter), cli: os.Getenv(envCLI)}
	if b.collector == "" && b.router == "" && os.Getenv(envRequire) != "1" {
		t.Skipf("end-to-end test not asked for: set %s and %s to the binaries collector/build.sh builds (collector/scale-out/e2e.sh does)", envCollector, envRouter)
	}
	for _, c := range []struct{ name, env, path string }{
		{"otelcol-mcptrace", envCollector, b.collector},
		{"otelcol-mcptrace-router", envRouter, b.router},
	} {
		if c.path == "" {
			t.Fatalf("%s: %s is not set; build it with collector/build.sh (collector/scale-out/e2e.sh does both)", c.name, c.env)
		}
		if st, err := os.Stat(c.path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			t.Fatalf("%s: %s=%s is not an executable file (%v); build it with collector/build.sh", c.name, c.env, c.path, err)
		}
	}
	if _, err := os.Stat(prometheusBinary); err != nil {
		t.Fatalf("no Prometheus server at %s (%v): apt-get install prometheus", prometheusBinary, err)
	}
	b.prometheus = prometheusBinary
	if b.cli == "" {
		b.cli = buildCLI(t)
	} else if _, err := os.Stat(b.cli); err != nil {
		t.Fatalf("%s=%s: %v", envCLI, b.cli, err)
	}
	return b
}

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// buildCLI builds the mcptrace CLI of this checkout once per test binary,
// into a directory removed by TestMain.
func buildCLI(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		out := filepath.Join(scratchDir, "mcptrace")
		cmd := exec.Command("go", "build", "-o", out, "./cmd/mcptrace")
		cmd.Dir = filepath.Join("..", "..") // the main module's root
		if b, err := cmd.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("go build ./cmd/mcptrace: %v\n%s", err, b)
			return
		}
		cliPath = out
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

// scratchDir holds what outlives one test (the CLI build).
var scratchDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcptrace-scaleout-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	scratchDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a process the test started.
type proc struct {
	name   string
	cmd    *exec.Cmd
	out    *promtest.LockedBuffer
	exited chan struct{}
	err    error
}

// startProc starts bin with args and extra environment; the test's cleanup
// kills it if it still runs.
func startProc(t *testing.T, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, out: &promtest.LockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s (%s): %v", name, bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s output (last 4 KiB):\n%s", p.name, tail(p.out.String(), 4096))
		}
	})
	return p
}

// kill sends SIGKILL and waits for the process to go.
func (p *proc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// readyLine is what a Collector logs once every component started.
const readyLine = "Everything is ready. Begin running and processing data."

// waitLog waits (bounded) for line in the process's output; it fails the
// test when the process exits first or the bound passes.
func (p *proc) waitLog(t *testing.T, line string, bound time.Duration) {
	t.Helper()
	deadline := time.After(bound)
	for !strings.Contains(p.out.String(), line) {
		select {
		case <-p.exited:
			t.Fatalf("%s exited (%v) before logging %q:\n%s", p.name, p.err, line, tail(p.out.String(), 4096))
		case <-deadline:
			t.Fatalf("%s did not log %q within %s:\n%s", p.name, line, bound, tail(p.out.String(), 4096))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// capture is an OTLP gRPC traces receiver that keeps what it is sent, in
// arrival order: what one backend received, as the backend's second traces
// pipeline forwards it.
type capture struct {
	ptraceotlp.UnimplementedGRPCServer
	addr   string
	srv    *grpc.Server
	traces received[ptrace.Traces]
	logs   *logCapture
}

// received keeps what a receiver was sent, in arrival order.
type received[T any] struct {
	mu      sync.Mutex
	batches []T
}

func (r *received[T]) add(x T) {
	r.mu.Lock()
	r.batches = append(r.batches, x)
	r.mu.Unlock()
}

// all returns the batches received so far.
func (r *received[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.batches...)
}

// logCapture is the capture's OTLP gRPC logs receiver: the acquire
// records one backend's pair tier received.
type logCapture struct {
	plogotlp.UnimplementedGRPCServer
	received[plog.Logs]
}

// Export keeps a copy of the request's logs.
func (c *logCapture) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	ld := plog.NewLogs()
	req.Logs().CopyTo(ld)
	c.add(ld)
	return plogotlp.NewExportResponse(), nil
}

func startCapture(t *testing.T) *capture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &capture{addr: ln.Addr().String(), srv: grpc.NewServer(), logs: &logCapture{}}
	ptraceotlp.RegisterGRPCServer(c.srv, c)
	plogotlp.RegisterGRPCServer(c.srv, c.logs)
	go func() { _ = c.srv.Serve(ln) }()
	t.Cleanup(c.srv.Stop)
	return c
}

// Export keeps a copy of the request's traces.
func (c *capture) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	td := ptrace.NewTraces()
	req.Traces().CopyTo(td)
	c.traces.add(td)
	return ptraceotlp.NewExportResponse(), nil
}

// received returns the trace batches received so far.
func (c *capture) received() []ptrace.Traces { return c.traces.all() }

// sender sends OTLP gRPC export requests to one endpoint.
type sender struct {
	conn   *grpc.ClientConn
	client ptraceotlp.GRPCClient
}

func newSender(t *testing.T, addr string) *sender {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &sender{conn: conn, client: ptraceotlp.NewGRPCClient(conn)}
}

// send exports td and returns the receiver's answer, bounded by timeout.
func (s *sender) send(td ptrace.Traces, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := s.client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
	if err != nil {
		return err
	}
	if ps := resp.PartialSuccess(); ps.RejectedSpans() > 0 {
		return fmt.Errorf("%d spans rejected: %s", ps.RejectedSpans(), ps.ErrorMessage())
	}
	return nil
}

// errNotYet marks a poll that should be retried.
var errNotYet = errors.New("not yet")

// poll calls f until it returns nil or an error other than errNotYet,
// every 250 ms, for at most bound; it returns f's last error.
func poll(bound time.Duration, f func() error) error {
	deadline := time.Now().Add(bound)
	for {
		err := f()
		if err == nil || !errors.Is(err, errNotYet) || time.Now().After(deadline) {
			return err
		}
		<-time.After(250 * time.Millisecond) // the polling interval
	}
}
