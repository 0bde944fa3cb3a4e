package pool_test

// The cross-check of the two vocabularies: one run of the pool with
// Options.SemconvCallSpans, exported to an OTLP JSON-lines dump, read by the
// analyzer under its default vocabulary and under semconv, must give the
// same pool figures, and those must be the fixture's own (its ledger's
// sessions and initialize requests) and the pool's Stat. This external
// test reads the dump with analyze, as the live demo's tests do: analyze
// never imports pool (internal/archtest), the arrow here is a test's.

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// semconvRun is the pool with SemconvCallSpans on a fixture, every span
// written to a dump, and a tracer for the executions' root spans.
type semconvRun struct {
	srv    *fixtures.Server
	pool   *pool.Pool
	target *pool.Target
	tp     *sdktrace.TracerProvider
	dump   string
}

func newSemconvRun(t *testing.T) *semconvRun {
	t.Helper()
	srv, err := fixtures.Start(fixtures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	r := &semconvRun{srv: srv, dump: filepath.Join(t.TempDir(), "semconv.jsonl")}
	exp, err := telemetry.CreateFileExporter(r.dump)
	if err != nil {
		t.Fatal(err)
	}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = r.tp.Shutdown(context.Background()) })
	// Negotiated: the first handshake probes server/discover and falls
	// back to initialize, the later ones go straight to initialize.
	r.pool, err = pool.New(pool.Options{SemconvCallSpans: true, TracerProvider: r.tp, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.pool.Close() })
	r.target = mustTarget(t, srv.URL())
	return r
}

// execution runs fn under a root span of its own: one trace, one execution.
func (r *semconvRun) execution(name string, fn func(ctx context.Context)) {
	ctx, root := r.tp.Tracer("semconv-figures").Start(context.Background(), name)
	fn(ctx)
	root.End()
}

func (r *semconvRun) call(t *testing.T, ctx context.Context, tool string, args map[string]any) {
	t.Helper()
	if _, err := r.pool.CallTool(ctx, r.target, &mcp.CallToolParams{Name: tool, Arguments: args}); err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
}

// workload is hits and misses of every kind the pool has with no clock:
// a cold start, reuse across executions, a concurrent lease, a session the
// server forgot after it was pooled (the call's 404 and one redial) and a
// session it forgot right after its handshake (a fresh session's redial).
func (r *semconvRun) workload(t *testing.T) {
	ws := func(i int) map[string]any { return map[string]any{"workspace": fmt.Sprintf("ws-%d", i)} }
	for i := range 3 { // cold, then hits
		r.execution(fmt.Sprintf("exec-%d", i), func(ctx context.Context) {
			r.call(t, ctx, fixtures.ToolSelectWorkspace, ws(i))
			r.call(t, ctx, fixtures.ToolGetWorkspace, nil)
		})
	}
	// A lease held by one execution while another calls: a concurrent
	// miss, a second session.
	r.execution("held", func(ctx context.Context) {
		held, err := r.pool.Acquire(ctx, r.target)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := held.CallTool(ctx, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "held"}}); err != nil {
			t.Fatal(err)
		}
		r.execution("concurrent", func(ctx context.Context) {
			r.call(t, ctx, fixtures.ToolEcho, map[string]any{"text": "beside"})
		})
		held.Release(nil)
	})
	// Both pooled sessions held, each by an execution of its own, while a
	// third execution's call dials (a concurrent miss) a session the
	// server forgets right after its handshake (/_fixture/forget-next):
	// the redial of a fresh session.
	r.execution("held-a", func(ctx context.Context) {
		a := r.hold(t, ctx)
		r.execution("held-b", func(ctx context.Context) {
			b := r.hold(t, ctx)
			r.srv.ForgetNextSessions(1)
			r.execution("forgotten-fresh", func(ctx context.Context) {
				r.call(t, ctx, fixtures.ToolEcho, map[string]any{"text": "fresh"})
			})
			b.Release(nil)
		})
		a.Release(nil)
	})
	// The server forgets every pooled session: the next call reuses one,
	// gets 404 and is redialed once; the execution's second call reuses
	// the redialed session.
	r.srv.ForgetSessions()
	r.execution("forgotten-pooled", func(ctx context.Context) {
		r.call(t, ctx, fixtures.ToolSelectWorkspace, ws(9))
		r.call(t, ctx, fixtures.ToolGetWorkspace, nil)
	})
}

// hold acquires a lease (a hit on an idle session here) and calls on it.
func (r *semconvRun) hold(t *testing.T, ctx context.Context) pool.Lease {
	t.Helper()
	l, err := r.pool.Acquire(ctx, r.target)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.CallTool(ctx, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "held"}}); err != nil {
		l.Release(err)
		t.Fatal(err)
	}
	return l
}

// poolFigures are the pool figures the cross-check compares;
// execFigures the executions' session counts, which need the calls read.
type poolFigures struct{ Acquires, Hits, Misses, Handshakes, Keys int }
type execFigures struct{ Executions, MultiSession, MaxSessions int }

// TestSemconvCallSpansGiveTheSameFiguresUnderEitherVocabulary runs the
// workload once with SemconvCallSpans and reads its dump twice, under the
// default vocabulary and under semconv: acquires, hits, misses,
// handshakes, keys and the executions' session counts must be equal, and
// equal to the world's: the fixture's ledger (one handshake per session it
// issued, one initialize each), the pool's Stat, and the executions the
// workload ran (two of which met a forgotten session and its redial, so
// their calls span two sessions). Under the default vocabulary the miss
// causes must be Stat's too. Under semconv they cannot be: a conventions
// call span says nothing of attempts or of how long a lease was held, so
// the two redials read as after_failure (the 404 call before each is a
// failed lease of the pair) and the two concurrent misses, whose other
// lease was held across the dial by an execution but whose calls on it
// had ended, read as unexplained; the test pins the total only.
func TestSemconvCallSpansGiveTheSameFiguresUnderEitherVocabulary(t *testing.T) {
	r := newSemconvRun(t)
	r.workload(t)
	st := r.pool.Stat()
	if err := r.pool.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}

	sessions := len(r.srv.SessionIDs())
	if inits := r.srv.Initializes(); inits != sessions || st.Redials != 2 || st.MissReasons[spans.MissConcurrent] != 2 || int(st.Misses) != sessions {
		t.Fatalf("the workload did not run as planned: %d initializes for %d sessions, %d misses, %d redials, miss reasons %v",
			inits, sessions, st.Misses, st.Redials, st.MissReasons)
	}
	wantPool := poolFigures{Acquires: int(st.Acquires), Hits: int(st.Hits), Misses: sessions, Handshakes: r.srv.Initializes(), Keys: 1}
	// Every root span is an execution with calls; the two that met a
	// forgotten session called on it and on its redial.
	wantExec := execFigures{Executions: 9, MultiSession: 2, MaxSessions: 2}
	for _, profile := range []rulefmt.Profile{rulefmt.ProfileDefault, rulefmt.ProfileSemconv} {
		t.Run(string(profile), func(t *testing.T) {
			rep, err := analyze.AnalyzeFiles(context.Background(), []string{r.dump}, rulefmt.Config{Profile: profile}, ingest.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p := rep.Pool
			if got := (poolFigures{p.Acquires, p.Hits, p.Misses, p.Handshakes, p.Keys}); got != wantPool {
				t.Errorf("pool figures under %s:\n got  %+v\n want %+v (Stat; the fixture issued %d sessions, %d initialize)", profile, got, wantPool, sessions, r.srv.Initializes())
			}
			e := rep.Executions
			if got := (execFigures{e.Count, e.MultiSession, e.MaxSessions}); got != wantExec {
				t.Errorf("executions under %s:\n got  %+v\n want %+v (the workload's; 0 executions: the calls named %q were not read as calls)",
					profile, got, wantExec, spans.SemconvSpanName(spans.MethodToolsCall, "<tool>"))
			}
			var total int
			for _, n := range p.MissReasons {
				total += n
			}
			if total != p.Misses {
				t.Errorf("miss reasons %v sum to %d, want the %d misses", p.MissReasons, total, p.Misses)
			}
			if profile == rulefmt.ProfileDefault {
				for reason, n := range st.MissReasons {
					if p.MissReasons[reason] != int(n) && reason != spans.MissEvicted {
						t.Errorf("miss reason %s: %d under %s, Stat %d", reason, p.MissReasons[reason], profile, n)
					}
				}
			}
		})
	}
}
