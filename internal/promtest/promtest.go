// Package promtest runs a real Prometheus server in tests: the Debian
// prometheus binary on 127.0.0.1, scraping one target every second, and
// instant queries against its HTTP API. The dashboards' query tests use it
// (the pool dashboard in package dashboards, the fleet dashboard in the
// collector module), so both run their queries on the same real server.
package promtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/internal/realpart"
)

// Binary is where Debian's prometheus package installs the server.
const Binary = "/usr/bin/prometheus"

// Find returns the Prometheus binary, or skips the test with how to install
// it; under CI (CI=true) a missing binary fails instead, since .ci/run
// installs it.
func Find(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(Binary); err == nil {
		return Binary
	}
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	realpart.Missing(t, realpart.Prometheus, "no Prometheus server binary ("+Binary+") to run the dashboards' queries against real data")
	return ""
}

// FreePort returns a port on 127.0.0.1 that was free a moment ago, for a
// process the test starts to listen on. It is chosen below the kernel's
// ephemeral range (see ephemeralFloor), never from it: a port the kernel
// hands out for a listener on :0 is also one it hands out as the local
// port of an outgoing connection, so between this call and the process's
// bind a dial anywhere on the machine could take it (and a client
// redialling the port before its server is up could connect to itself),
// and the server would fail with "address already in use". No port is
// returned twice in one test binary.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := freePort(rand.IntN)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// freePorts holds the ports FreePort gave out in this process.
var freePorts = struct {
	mu    sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// portFloor is the lowest port FreePort picks: above the registered
// services most machines run.
const portFloor = 10000

// freePort picks ports below the ephemeral range with pick (rand.IntN, or
// a test's sequence) until one binds on 127.0.0.1, a bounded number of
// tries.
func freePort(pick func(int) int) (int, error) {
	lo := ephemeralFloor()
	if lo <= portFloor+100 {
		return 0, fmt.Errorf("the ephemeral port range starts at %d, leaving no ports below it over %d to choose from", lo, portFloor)
	}
	freePorts.mu.Lock()
	defer freePorts.mu.Unlock()
	var lastErr error
	for range 200 {
		p := portFloor + pick(lo-portFloor)
		if freePorts.given[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			lastErr = err
			continue
		}
		_ = ln.Close()
		freePorts.given[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("no free port on 127.0.0.1 in [%d, %d) after 200 tries (last: %v)", portFloor, lo, lastErr)
}

// ephemeralFloor is the lowest port of the kernel's range of local ports
// for outgoing connections and listeners on port 0 (Linux's
// /proc/sys/net/ipv4/ip_local_port_range), or Linux's default, 32768,
// where the file cannot be read.
func ephemeralFloor() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil || lo <= 0 {
		return 32768
	}
	return lo
}

// LockedBuffer collects the output of a process a test started, safe for
// the process's writers and the test reading it in a failure message at once.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it is the process's stdout and stderr.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Server is a running Prometheus: Base is its API's base URL.
type Server struct {
	Base string
	out  *LockedBuffer
}

// Log returns what the server printed so far, for failure messages.
func (s *Server) Log() string { return s.out.String() }

// Start runs Prometheus on 127.0.0.1 scraping targets (host:port each) at
// metricsPath every second, with its storage in a temporary directory, and
// kills it when the test ends. It returns once the server is ready, and
// fails the test when the server exits or is not ready within 30 s.
func Start(t testing.TB, bin, metricsPath string, targets ...string) *Server {
	t.Helper()
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: mcptrace
    metrics_path: %s
    static_configs:
      - targets: [%s]
`, metricsPath, quoted(targets))
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", FreePort(t))
	out := &LockedBuffer{}
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	s := &Server{Base: "http://" + addr, out: out}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if code, _, err := Get(ctx, s.Base+"/-/ready"); err == nil && code == http.StatusOK {
			return s
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("prometheus exited before it was ready: %v\n%s", err, out)
		case <-ctx.Done():
			t.Fatalf("prometheus not ready on %s after 30s\n%s", addr, out)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// quoted is targets as a YAML flow sequence's items.
func quoted(targets []string) string {
	q := make([]string, len(targets))
	for i, t := range targets {
		q[i] = strconv.Quote(t)
	}
	return strings.Join(q, ", ")
}

// Get fetches u and returns the status code and body.
func Get(ctx context.Context, u string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// ErrBadQuery marks a query Prometheus refuses (bad_data: it does not
// parse or cannot be evaluated): retrying cannot help.
var ErrBadQuery = errors.New("query rejected")

// Sample is one series of an instant query's answer: its labels and value
// (a scalar answer is one sample without labels).
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query runs expr at the current time and returns the series it returned.
// A query Prometheus rejects returns an error wrapping ErrBadQuery.
func (s *Server) Query(ctx context.Context, expr string) ([]Sample, error) {
	return s.QueryAt(ctx, expr, time.Time{})
}

// QueryAt runs expr evaluated at instant at (the current time when at is
// zero), so that several queries see the same range windows.
func (s *Server) QueryAt(ctx context.Context, expr string, at time.Time) ([]Sample, error) {
	u := s.Base + "/api/v1/query?query=" + url.QueryEscape(expr)
	if !at.IsZero() {
		u += "&time=" + strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)
	}
	code, body, err := Get(ctx, u)
	if err != nil {
		return nil, err
	}
	var r struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("status %d, undecodable answer %q: %w", code, body, err)
	}
	if r.Status != "success" {
		if r.ErrorType == "bad_data" {
			return nil, fmt.Errorf("%w: %s: %s", ErrBadQuery, r.ErrorType, r.Error)
		}
		return nil, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	switch r.Data.ResultType {
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(r.Data.Result, &v); err != nil {
			return nil, fmt.Errorf("scalar answer %s: %w", r.Data.Result, err)
		}
		f, err := value(v[1])
		return []Sample{{Value: f}}, err
	case "vector":
		var vs []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(r.Data.Result, &vs); err != nil {
			return nil, fmt.Errorf("vector answer %s: %w", r.Data.Result, err)
		}
		out := make([]Sample, 0, len(vs))
		for _, x := range vs {
			f, err := value(x.Value[1])
			if err != nil {
				return nil, err
			}
			out = append(out, Sample{Metric: x.Metric, Value: f})
		}
		return out, nil
	}
	return nil, fmt.Errorf("answer of type %q, want a vector or a scalar: %s", r.Data.ResultType, r.Data.Result)
}

// value decodes a sample value, which the API sends as a string ("NaN",
// "+Inf" included).
func value(v any) (float64, error) {
	s, ok := v.(string)
	if !ok {
		return math.NaN(), fmt.Errorf("sample value %v is not a string", v)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN(), fmt.Errorf("sample value %q: %w", s, err)
	}
	return f, nil
}
