package engine

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestASessionIdOfAnyValueMakesItsFirstCallTheMiss pins that, where the
// acquires are inferred from the calls (no pool spans), every call that
// carries an mcp.session.id belongs to that session, whatever its value:
// one that is the boolean false or true (the first values of the dump's
// string table) as much as a text. Each session's first call is its miss
// and its one handshake, its later calls hits.
func TestASessionIdOfAnyValueMakesItsFirstCallTheMiss(t *testing.T) {
	for _, id := range []any{false, true, "s-1", 0} {
		t.Run(fmt.Sprint(id), func(t *testing.T) {
			b := dumptest.New()
			ss := b.Resource(spans.ResourceServiceName, "agent")
			for i := range 3 {
				at := time.Duration(i) * time.Second
				b.Add(ss, dumptest.Span{Trace: uint64(i + 1), Name: "tools/call list_logs", Kind: ptrace.SpanKindClient,
					Start: at, End: at + 500*time.Millisecond,
					Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, id}})
			}
			d := NewDump(rulefmt.Config{Profile: rulefmt.ProfileSemconv}.IndexOptions())
			d.Add(b.Traces())
			r, err := Analyze(d, rulefmt.Config{Profile: rulefmt.ProfileSemconv})
			if err != nil {
				t.Fatal(err)
			}
			p := r.Pool
			if p.Acquires != 3 || p.Hits != 2 || p.Misses != 1 || p.Handshakes != 1 {
				t.Errorf("acquires %d, hits %d, misses %d, handshakes %d; want 3, 2, 1, 1", p.Acquires, p.Hits, p.Misses, p.Handshakes)
			}
		})
	}
}

// TestAnExecutionCountsASessionIdOfAnyValue pins that the executions
// measure counts each distinct mcp.session.id of an execution's calls,
// the boolean false (the first value of the dump's string table) as much
// as a text.
func TestAnExecutionCountsASessionIdOfAnyValue(t *testing.T) {
	for _, tc := range []struct {
		name          string
		sessions      []any
		max, multiple int
	}{
		{"false then a text: two sessions", []any{false, "s-1"}, 2, 1},
		{"a text then false: two sessions", []any{"s-1", false}, 2, 1},
		{"false twice: one session", []any{false, false}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := dumptest.New()
			ss := b.Resource(spans.ResourceServiceName, "agent")
			for i, id := range tc.sessions {
				at := time.Duration(i) * time.Second
				b.Add(ss, dumptest.Span{Trace: 1, Name: "tools/call list_logs", Kind: ptrace.SpanKindClient,
					Start: at, End: at + 500*time.Millisecond,
					Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, id}})
			}
			cfg := rulefmt.Config{Profile: rulefmt.ProfileSemconv}
			d := NewDump(cfg.IndexOptions())
			d.Add(b.Traces())
			r, err := Analyze(d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if e := r.Executions; e.Count != 1 || e.MaxSessions != tc.max || e.MultiSession != tc.multiple {
				t.Errorf("executions %d, max sessions %d, multi-session %d; want 1, %d, %d", e.Count, e.MaxSessions, e.MultiSession, tc.max, tc.multiple)
			}
		})
	}
}
