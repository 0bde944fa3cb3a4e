package pool_test

// The pool side of the peer matrix: one default pool per check, its spans
// in memory and in an OTLP JSON-lines dump, and the comparisons of Stat,
// the spans and the analyzer with the server's ledger.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/internal/peers"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// matrixRun is one check's pool on one subject.
type matrixRun struct {
	subj   matrixSubject
	srv    matrixServer
	tools  toolset
	pool   *pool.Pool
	target *pool.Target
	rec    *telemetry.Recorder
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	dump   string
	cli    *cliBuild
	// concurrent is set by checks whose executions run at once: their
	// calls reach the server in an order the spans cannot show.
	concurrent bool

	closeOnce sync.Once
}

func newMatrixRun(t *testing.T, subj matrixSubject, srv matrixServer, cli *cliBuild) *matrixRun {
	t.Helper()
	m := &matrixRun{subj: subj, srv: srv, tools: srv.Tools(), rec: telemetry.NewRecorder(), cli: cli}
	m.dump = filepath.Join(t.TempDir(), "spans.jsonl")
	exp, err := telemetry.CreateFileExporter(m.dump)
	if err != nil {
		t.Fatal(err)
	}
	m.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(m.rec), sdktrace.WithSyncer(exp))
	m.tracer = m.tp.Tracer("peer-matrix")
	// The defaults, as a new user has them: only the spans are wired.
	m.pool, err = pool.New(pool.Options{TracerProvider: m.tp})
	if err != nil {
		t.Fatal(err)
	}
	m.target, err = pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL(), ProtocolVersion: subj.version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.closePool(t)
		_ = m.tp.Shutdown(context.Background())
	})
	return m
}

// closePool closes the pool once.
func (m *matrixRun) closePool(t *testing.T) {
	m.closeOnce.Do(func() {
		if err := m.pool.Close(); err != nil {
			t.Errorf("pool.Close: %v", err)
		}
	})
}

func (m *matrixRun) params(c call) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: c.name, Arguments: c.args}
}

// execution runs f on a new Execution under its own root span (one trace
// per execution, as the analyzer counts executions by default).
func (m *matrixRun) execution(t *testing.T, i int, f func(ctx context.Context, e *pool.Execution)) {
	ctx, span := m.tracer.Start(boundedContext(t), fmt.Sprintf("execution %d", i))
	e := m.pool.Execution()
	f(ctx, e)
	e.Close()
	span.End()
}

// call is one call on e; safe from any goroutine.
func (m *matrixRun) call(ctx context.Context, e *pool.Execution, c call) (string, error) {
	res, err := e.CallTool(ctx, m.target, m.params(c))
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.name, err)
	}
	return resultText(res), nil
}

// mustCall is call that fails the test; only from the test's goroutine.
func (m *matrixRun) mustCall(t *testing.T, ctx context.Context, e *pool.Execution, c call) string {
	t.Helper()
	res, err := e.CallTool(ctx, m.target, m.params(c))
	if err != nil {
		t.Fatalf("%s: %v%s", c.name, err, ledgerString(m.srv.Requests(t)))
	}
	return resultText(res)
}

func (m *matrixRun) leaseCall(t *testing.T, ctx context.Context, l pool.Lease, c call) string {
	t.Helper()
	res, err := l.CallTool(ctx, m.params(c))
	if err != nil {
		l.Release(err)
		t.Fatalf("%s on a held lease: %v%s", c.name, err, ledgerString(m.srv.Requests(t)))
	}
	return resultText(res)
}

// wantState holds call 2's answer in execution i: the state call 1 set
// where the revision has sessions; nothing kept where it has none.
func (m *matrixRun) wantState(t *testing.T, i int, got string) {
	t.Helper()
	want := m.tools.want(i)
	if !m.subj.sessions {
		want = m.tools.none
	}
	if strings.HasPrefix(got, want) {
		return
	}
	ledger := ""
	if !m.concurrent { // Requests may t.Fatal: only from the test's goroutine
		ledger = ledgerString(m.srv.Requests(t))
	}
	t.Errorf("execution %d: call 2 read %q, want %q (sessions: %v)%s", i, got, want, m.subj.sessions, ledger)
}

// warm makes one clean call so the key has an idle session.
func (m *matrixRun) warm(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := m.pool.CallTool(ctx, m.target, m.params(m.tools.echo)); err != nil {
		t.Fatalf("warm-up call: %v", err)
	}
}

// ledgerCallsOf returns the tools/call entries of one tool.
func ledgerCallsOf(reqs []fixtures.Request, tool string) []fixtures.Request {
	var out []fixtures.Request
	for _, r := range ledgerCalls(reqs) {
		if r.Tool == tool {
			out = append(out, r)
		}
	}
	return out
}

// agree holds Stat and the spans against the server's ledger and returns
// the ledger: every dial the server completed is a successful handshake
// span and a Stat dial; every request a dial made is counted in
// Stat.HandshakeRequests; every tools/call that reached the server is a call
// span, with the session id the server saw, in order; every redial is an
// attempt-2 acquire; hits are acquire spans with cache_hit. Calls are
// compared in order, or as multisets when the check's executions ran at
// once.
func (m *matrixRun) agree(t *testing.T) []fixtures.Request {
	t.Helper()
	reqs := m.srv.Requests(t)
	st := m.pool.Stat()
	hs := m.spansNamed(spans.SpanHandshake)
	okHS := 0
	for _, s := range hs {
		if s.Status().Code != 2 { // codes.Error
			okHS++
		}
	}
	if lh := ledgerHandshakes(reqs, m.subj.revision); st.Dials-st.DialFailures != int64(lh) || okHS != lh {
		t.Errorf("the server completed %d handshakes; Stat: %d dials (%d failed); %d successful handshake spans%s", lh, st.Dials, st.DialFailures, okHS, ledgerString(reqs))
	}
	if lr := ledgerHandshakeRequests(reqs); st.HandshakeRequests != int64(lr) {
		t.Errorf("the server saw %d handshake requests, Stat.HandshakeRequests is %d%s", lr, st.HandshakeRequests, ledgerString(reqs))
	}
	var spanSessions, ledgerSess []string
	for _, s := range m.callSpansInOrder() {
		spanSessions = append(spanSessions, attr(s, spans.AttrSessionID))
	}
	for _, r := range ledgerCalls(reqs) {
		ledgerSess = append(ledgerSess, r.SessionID)
	}
	if m.concurrent {
		slices.Sort(spanSessions)
		slices.Sort(ledgerSess)
	}
	if !slices.Equal(spanSessions, ledgerSess) {
		t.Errorf("call spans' session ids %v, the server's tools/call session ids %v%s", short(spanSessions), short(ledgerSess), ledgerString(reqs))
	}
	acq := m.spansNamed(spans.SpanAcquire)
	hits, redials := 0, 0
	for _, s := range acq {
		if attr(s, spans.AttrCacheHit) == "true" {
			hits++
		}
		if attr(s, spans.AttrAttempt) == "2" {
			redials++
		}
	}
	if int64(len(acq)) != st.Acquires || int64(hits) != st.Hits || int64(redials) != st.Redials {
		t.Errorf("acquire spans %d (hits %d, attempt 2: %d); Stat acquires %d hits %d redials %d", len(acq), hits, redials, st.Acquires, st.Hits, st.Redials)
	}
	for _, s := range hs {
		if v := attr(s, spans.AttrProtocolVersion); s.Status().Code != 2 && v != m.subj.revision {
			t.Errorf("handshake span at revision %q, want %q (%s)", v, m.subj.revision, m.subj.describe())
		}
	}
	return reqs
}

func short(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id[:min(len(id), 8)]
	}
	return out
}

func (m *matrixRun) spansNamed(name string) []sdktrace.ReadOnlySpan {
	return recordedNamed(m.rec, name)
}

// callSpansInOrder returns the call spans by start time.
func (m *matrixRun) callSpansInOrder() []sdktrace.ReadOnlySpan {
	calls := m.spansNamed(spans.SpanCallTool)
	slices.SortStableFunc(calls, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return calls
}

// wantOneSessionPerExecution holds, for sequential executions of per calls
// each, that the server saw each execution's calls on one session.
func (m *matrixRun) wantOneSessionPerExecution(t *testing.T, reqs []fixtures.Request, per int) {
	t.Helper()
	if !m.subj.sessions {
		return
	}
	calls := ledgerCalls(reqs)
	for i := 0; i+per <= len(calls); i += per {
		for _, c := range calls[i+1 : i+per] {
			if c.SessionID != calls[i].SessionID {
				t.Errorf("execution %d rode sessions %s and %s%s", i/per, calls[i].SessionID, c.SessionID, ledgerString(reqs))
			}
		}
	}
}

// cliBuild builds cmd/mcptrace once per matrix, on first use.
type cliBuild struct {
	dir  string
	once sync.Once
	bin  string
	err  error
}

func (c *cliBuild) path(t *testing.T) string {
	t.Helper()
	c.once.Do(func() {
		root, err := peers.ModuleRoot()
		if err != nil {
			c.err = err
			return
		}
		c.bin = filepath.Join(c.dir, "mcptrace")
		cmd := exec.Command("go", "build", "-o", c.bin, "./cmd/mcptrace")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			c.err = fmt.Errorf("go build ./cmd/mcptrace: %w\n%s", err, out)
		}
	})
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.bin
}

// analyzed is what the matrix reads of `mcptrace analyze --format json`.
type analyzed struct {
	Pool struct {
		Acquires    int            `json:"acquires"`
		Hits        int            `json:"hits"`
		Misses      int            `json:"misses"`
		Handshakes  int            `json:"handshakes"`
		MissReasons map[string]int `json:"miss_reasons"`
	} `json:"pool"`
	Executions struct {
		Count        int `json:"count"`
		MultiSession int `json:"multi_session"`
		MaxSessions  int `json:"max_sessions"`
	} `json:"executions"`
}

// execCalls groups the ledger's tools/call entries by execution: ends[i] is
// the number of calls the ledger held when execution i had ended (the
// executions ran one after another).
func execCalls(reqs []fixtures.Request, ends []int) [][]fixtures.Request {
	calls := ledgerCalls(reqs)
	var out [][]fixtures.Request
	start := 0
	for _, end := range ends {
		out = append(out, calls[start:min(end, len(calls))])
		start = end
	}
	return out
}

// agreeAnalyze runs `mcptrace analyze` and `mcptrace check` on the dump the
// pool wrote and holds them against the ledger of sequential executions
// (execs: each one's tools/call entries): acquires, hits, misses and miss
// reasons as Stat counted them, handshakes as the server completed them,
// executions and the sessions each rode as the server saw them; the
// built-in rules hold.
func (m *matrixRun) agreeAnalyze(t *testing.T, reqs []fixtures.Request, execs [][]fixtures.Request) {
	t.Helper()
	if err := m.tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	bin := m.cli.path(t)
	out, err := exec.Command(bin, "analyze", "--format", "json", m.dump).Output()
	if err != nil {
		t.Fatalf("mcptrace analyze %s: %v\n%s", m.dump, err, stderrOf(err))
	}
	var a analyzed
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("mcptrace analyze output: %v\n%s", err, out)
	}
	st := m.pool.Stat()
	wantMulti, wantMax := 0, 0
	for _, calls := range execs {
		ids := map[string]bool{}
		for _, c := range calls {
			if c.SessionID != "" {
				ids[c.SessionID] = true
			}
		}
		if len(ids) > 1 {
			wantMulti++
		}
		wantMax = max(wantMax, len(ids))
	}
	got := fmt.Sprintf("acquires %d hits %d misses %d handshakes %d executions %d multi-session %d max sessions %d",
		a.Pool.Acquires, a.Pool.Hits, a.Pool.Misses, a.Pool.Handshakes, a.Executions.Count, a.Executions.MultiSession, a.Executions.MaxSessions)
	want := fmt.Sprintf("acquires %d hits %d misses %d handshakes %d executions %d multi-session %d max sessions %d",
		st.Acquires, st.Hits, st.Misses, ledgerHandshakes(reqs, m.subj.revision), len(execs), wantMulti, wantMax)
	if got != want {
		t.Errorf("mcptrace analyze on the dump:\n got  %s\n want %s (Stat and the server's ledger)%s", got, want, ledgerString(reqs))
	}
	for reason, k := range st.MissReasons {
		if a.Pool.MissReasons[reason] != int(k) {
			t.Errorf("analyze miss reason %s: %d, Stat %d", reason, a.Pool.MissReasons[reason], k)
		}
	}
	cmd := exec.Command(bin, "check", "--format", "json", m.dump)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Errorf("mcptrace check on the dump: %v (the built-in rules must hold)\n%s%s", err, stdout.String(), stderrOf(err))
	}
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
