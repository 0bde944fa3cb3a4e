// Package jaegertest runs a real Jaeger v2 server in tests: the jaeger
// binary of the version internal/jaegertest/tool pins (Binary), on
// 127.0.0.1 only, with in-memory storage, so a test can send it OTLP spans
// and query them back through its /api/v3 HTTP API, the API mcptrace's
// Jaeger client reads. A fake of that API would pin only what its author
// believed; this one answers as Jaeger does.
package jaegertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/internal/promtest"
)

// MaxTraces is the in-memory store's capacity in traces: past it the
// oldest are evicted. It is also the largest query.num_traces Jaeger
// accepts (a larger one is a 500).
const MaxTraces = 100000

// startTimeout bounds the wait for a started Jaeger to answer: it is ready
// in a second or two when idle, far longer under a loaded machine's tests.
const startTimeout = 60 * time.Second

// stopGrace is how long a stopping Jaeger has after SIGTERM before it is
// killed.
const stopGrace = 10 * time.Second

// startAttempts bounds Start's tries with new ports, since a port found
// free can be taken before Jaeger binds it.
const startAttempts = 3

// errPortTaken marks a start that failed because a port was taken.
var errPortTaken = errors.New("a port was taken")

// Jaeger is a running Jaeger v2 server that Start started for one test.
type Jaeger struct {
	queryURL string
	otlpHTTP string
	otlpGRPC string
	logPath  string
	pid      int
}

// QueryURL is the base URL of Jaeger's query HTTP server
// (http://127.0.0.1:PORT); the API is under /api/v3.
func (j *Jaeger) QueryURL() string { return j.queryURL }

// OTLPHTTPEndpoint is host:port of the OTLP/HTTP receiver; traces go to
// /v1/traces there (SendOTLPJSON), as for any OTLP/HTTP exporter.
func (j *Jaeger) OTLPHTTPEndpoint() string { return j.otlpHTTP }

// OTLPGRPCEndpoint is host:port of the OTLP/gRPC receiver, for a test that
// exports through the OTel SDK's gRPC exporter (insecure).
func (j *Jaeger) OTLPGRPCEndpoint() string { return j.otlpGRPC }

// LogPath is the file that holds Jaeger's stdout and stderr; a failed
// test shows its end in the test log.
func (j *Jaeger) LogPath() string { return j.logPath }

// Start runs Jaeger (Binary) for the test on free ports of 127.0.0.1 and
// returns once its query API and OTLP/HTTP receiver answer. It stops the
// server when the test ends (SIGTERM, then SIGKILL after a grace period)
// and, if the test failed, logs the end of the server's output. A port
// taken before Jaeger bound it is retried with new ports.
func Start(t testing.TB) *Jaeger {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	var err error
	for attempt := range startAttempts {
		var j *Jaeger
		j, err = startOnce(t, bin, dir, attempt)
		if err == nil {
			return j
		}
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	t.Fatalf("jaegertest: %v", err)
	return nil
}

// startOnce is one try of Start, its files named for attempt. On an error
// the process is stopped already.
func startOnce(t testing.TB, bin, dir string, attempt int) (*Jaeger, error) {
	ports := [4]int{}
	for i := range ports {
		ports[i] = promtest.FreePort(t)
	}
	j := &Jaeger{
		queryURL: fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		otlpHTTP: fmt.Sprintf("127.0.0.1:%d", ports[2]),
		otlpGRPC: fmt.Sprintf("127.0.0.1:%d", ports[3]),
		logPath:  filepath.Join(dir, fmt.Sprintf("jaeger-%d.log", attempt)),
	}
	cfg := filepath.Join(dir, fmt.Sprintf("config-%d.yaml", attempt))
	if err := os.WriteFile(cfg, []byte(config(ports)), 0o644); err != nil {
		return nil, fmt.Errorf("write the config: %w", err)
	}
	p, err := launch(bin, cfg, j.logPath)
	if err != nil {
		return nil, err
	}
	j.pid = p.cmd.Process.Pid
	if err := j.waitReady(p); err != nil {
		p.stop()
		return nil, j.startError(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("jaeger's output (%s), its end:\n%s", j.logPath, j.logTail(60))
		}
	})
	t.Cleanup(p.stop)
	return j, nil
}

// startError is err with the end of Jaeger's output, marked errPortTaken
// when the output says a port was in use.
func (j *Jaeger) startError(err error) error {
	tail := j.logTail(40)
	if strings.Contains(tail, "address already in use") {
		err = fmt.Errorf("%w: %w", errPortTaken, err)
	}
	return fmt.Errorf("start jaeger: %w\n%s", err, tail)
}

// logTail returns the last n lines of Jaeger's output.
func (j *Jaeger) logTail(n int) string {
	b, err := os.ReadFile(j.logPath)
	if err != nil {
		return fmt.Sprintf("(no output: %v)", err)
	}
	if len(b) == 0 {
		return "(empty)"
	}
	return lastLines(string(b), n)
}

// process is a started jaeger: done closes when it has exited, with err
// its exit.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	once sync.Once
}

// launch starts bin with the config file cfg, its output to logPath.
func launch(bin, cfg, logPath string) (*process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create jaeger's log: %w", err)
	}
	defer log.Close() // the child holds its own descriptor
	cmd := exec.Command(bin, "--config", "file:"+cfg)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop ends the process, SIGTERM first so Jaeger shuts down as in
// production, SIGKILL after stopGrace, and waits for it, so no process
// outlives its test. Calls after the first do nothing.
func (p *process) stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopGrace):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}
