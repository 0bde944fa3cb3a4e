package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// scopesJSONL is an OTLP JSON lines dump of n acquires, each its own trace
// and each in its own pool scope (a distinct plugin.mcp.pool.id), 100 to a
// line.
func scopesJSONL(n int) []byte {
	var b bytes.Buffer
	for lo := 0; lo < n; lo += 100 {
		b.WriteString(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},"scopeSpans":[{"scope":{"name":"p"},"spans":[`)
		for i := lo; i < min(lo+100, n); i++ {
			if i > lo {
				b.WriteByte(',')
			}
			t := int64(1777539654000000000) + int64(i)*1000
			fmt.Fprintf(&b, `{"traceId":"%032x","spanId":"%016x","name":"plugin.mcp.connection.acquire","kind":1,"startTimeUnixNano":"%d","endTimeUnixNano":"%d",`+
				`"attributes":[{"key":"plugin.mcp.cache_hit","value":{"boolValue":false}},{"key":"plugin.mcp.cache_key","value":{"stringValue":"k"}},{"key":"plugin.mcp.pool.id","value":{"stringValue":"p%d"}}]}`,
				i+1, i+1, t, t+500, i)
		}
		b.WriteString("]}]}]}\n")
	}
	return b.Bytes()
}

// TestManyPoolScopesStopAtTheMemoryBudget pins that the state each
// distinct pool scope keeps (its replay, figures, report row) counts
// against the memory budget on every engine: a dump of thousands of
// scopes of one acquire each, whose open traces are tiny, stops with
// ErrMemoryLimit naming the scopes and a remedy under a small budget, and
// is read whole under one that holds them.
func TestManyPoolScopesStopAtTheMemoryBudget(t *testing.T) {
	const n = 4000 // some 9 MiB of per-scope state
	data := scopesJSONL(n)
	path := filepath.Join(t.TempDir(), "scopes.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		src  ingest.Source
		eng  EngineOptions
	}{
		{"speculative batch, a file", ingest.Files{path}, EngineOptions{Shards: 2}},
		{"held batch, stdin", ingest.Files{"-"}, EngineOptions{Shards: 2}},
		{"stream", ingest.Files{path}, EngineOptions{Shards: 2, Window: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, budget := range []int64{8 << 20, 64 << 20} {
				ropts := ReadOptions{MaxMemory: budget, Stdin: bytes.NewReader(data)}
				r, _, err := AnalyzeStream(context.Background(), tc.src, rulefmt.Config{}, LoadOptions{Read: ropts}, tc.eng)
				if budget == 64<<20 {
					if err != nil || r.Pool.Scopes != n {
						t.Errorf("%d MiB budget: %v, want the %d scopes reported", budget>>20, err, n)
					}
					continue
				}
				if r != nil || !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "too many distinct pool scopes") || !strings.Contains(err.Error(), "--scope-attr") {
					t.Errorf("%d MiB budget: %v, want ErrMemoryLimit naming the pool scopes and --scope-attr", budget>>20, err)
				}
			}
		})
	}
}

// TestManyPoolScopesStopAtTheMemoryBudgetOnOneIndex is
// TestManyPoolScopesStopAtTheMemoryBudget for the index engine (the HTML
// report's events, or rules): its index takes half of the budget, and the
// state across traces its measures build must fit the other half.
func TestManyPoolScopesStopAtTheMemoryBudgetOnOneIndex(t *testing.T) {
	const n = 4000
	path := filepath.Join(t.TempDir(), "scopes.jsonl")
	if err := os.WriteFile(path, scopesJSONL(n), 0o644); err != nil {
		t.Fatal(err)
	}
	rules := rulefmt.BuiltinRules(rulefmt.Config{})
	for _, tc := range []struct {
		name string
		opts RunOptions
	}{
		{"events", RunOptions{Events: true}},
		{"rules", RunOptions{Rules: rules}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, budget := range []int64{8 << 20, 64 << 20} {
				opts := tc.opts
				opts.Load.Read.MaxMemory = budget
				run, err := AnalyzeDumps(context.Background(), ingest.Files{path}, rulefmt.Config{}, opts)
				if run.Choice.Kind != EngineIndex {
					t.Fatalf("the run chose engine %v, want the index engine", run.Choice.Kind)
				}
				if budget == 64<<20 {
					if err != nil || run.Analysis.Report.Pool.Scopes != n {
						t.Errorf("%d MiB budget: %v, want the %d scopes reported", budget>>20, err, n)
					}
					continue
				}
				if !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "too many distinct pool scopes") {
					t.Errorf("%d MiB budget: %v, want ErrMemoryLimit naming the pool scopes", budget>>20, err)
				}
			}
		})
	}
}

// scopeTraces returns n acquires in n pool scopes, one trace each.
func scopeTraces(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		sp := ss.AppendEmpty()
		sp.SetName(spans.SpanAcquire)
		sp.SetTraceID(pcommon.TraceID{0: 1, 15: byte(i), 14: byte(i >> 8)})
		sp.SetSpanID(pcommon.SpanID{7: byte(i + 1), 6: byte((i + 1) >> 8)})
		sp.SetStartTimestamp(pcommon.Timestamp(1_000_000 * (i + 1)))
		sp.SetEndTimestamp(pcommon.Timestamp(1_000_000*(i+1) + 500))
		sp.Attributes().PutBool(spans.AttrCacheHit, false)
		sp.Attributes().PutStr(spans.AttrCacheKey, "k")
		sp.Attributes().PutStr(spans.AttrPoolID, fmt.Sprintf("pool-%d", i))
	}
	return td
}

// TestScopeStateChargeBoundary pins where the engine's check of its
// state across traces stops a run at Flush: at exactly the limit it goes
// on, one byte under it the run stops naming the pool scopes.
func TestScopeStateChargeBoundary(t *testing.T) {
	const n = 300
	flush := func(limit int64) (*Engine, error) {
		e, err := NewEngine(rulefmt.Config{}, EngineOptions{Shards: 1})
		if err != nil {
			t.Fatal(err)
		}
		e.memLimit = limit
		if err := e.Add(scopeTraces(n)); err != nil {
			t.Fatal(err)
		}
		return e, e.Flush()
	}
	e, err := flush(0)
	if err != nil {
		t.Fatal(err)
	}
	charge := e.pairBytes.Load()
	if charge < n*2<<10 {
		t.Fatalf("%d scopes charged %d bytes, want at least 2 KiB each", n, charge)
	}
	for _, tc := range []struct {
		name  string
		limit int64
		stops bool
	}{
		{"at the limit", charge, false},
		{"one byte past it", charge - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := flush(tc.limit)
			stopped := errors.Is(err, ErrMemoryLimit) && strings.Contains(err.Error(), fmt.Sprintf("hold %d scopes", n))
			if stopped != tc.stops || (!tc.stops && err != nil) {
				t.Errorf("limit %d for a charge of %d: %v, want stopped %v", tc.limit, charge, err, tc.stops)
			}
		})
	}
}

// TestBudgetErrorNamesWhatOutgrewTheBudget pins the cause the budget's
// error names: the distinct pool scopes or keys when the state across
// traces holds most of what was charged and grows with them (each named
// by whichever weighs more), else the open traces and the acquires, whose
// remedy is to bound the open traces.
func TestBudgetErrorNamesWhatOutgrewTheBudget(t *testing.T) {
	const limit = 100 << 20
	for _, tc := range []struct {
		name string
		m    int64
		st   stateParts
		want string
	}{
		{"scopes weigh more", 200 << 20, stateParts{bytes: 150 << 20, scopes: 50_000, pairs: 50_000}, "too many distinct pool scopes"},
		{"scopes and keys weigh the same", 200 << 20, stateParts{bytes: 150 << 20, scopes: 1, pairs: measure.ScopeBytes / measure.PairBytes}, "too many distinct pool scopes"},
		{"keys weigh one pair more", 200 << 20, stateParts{bytes: 150 << 20, scopes: 1, pairs: measure.ScopeBytes/measure.PairBytes + 1}, "too many distinct pool keys"},
		{"the state exactly half", 200 << 20, stateParts{bytes: 100 << 20, scopes: 50_000, pairs: 50_000}, "bound the open traces"},
		{"the waiting acquires half the state", 200 << 20, stateParts{bytes: 150 << 20, pending: 75 << 20, scopes: 50_000, pairs: 50_000}, "bound the open traces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := budgetError("the spans read", tc.m, limit, tc.st)
			if !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("budgetError = %v, want ErrMemoryLimit naming %q", err, tc.want)
			}
		})
	}
}
