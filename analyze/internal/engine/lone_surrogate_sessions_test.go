package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// twoSessionsOneExecution is a client written in the OpenTelemetry MCP
// conventions (no pool spans: a session's first call is its miss): one
// execution calling TOOL on session SESSA and then on SESSB, and a later
// execution calling on SESSA again. Told apart: 3 acquires, 2 misses, 1
// hit, 2 handshakes, an execution of 2 sessions. Read as one session: 1
// miss, 2 hits, no execution of more than one session.
func twoSessionsOneExecution() ptrace.Traces {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "agent", spans.ResourceServiceInstanceID, "agent-1")
	call := func(trace, parent uint64, start time.Duration, session string) {
		d.add(ss, sp{trace: trace, parent: parent, name: spans.MethodToolsCall + " TOOL", start: start, end: start + 100*time.Millisecond,
			kind: ptrace.SpanKindClient, attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrGenAIToolName, "TOOL",
				spans.AttrSessionID, session, spans.AttrServerAddress, "mcp.example"}})
	}
	root := d.add(ss, sp{trace: 1, name: "agent.run", start: 0, end: 2 * time.Second})
	call(1, root, 100*time.Millisecond, "SESSA")
	call(1, root, time.Second, "SESSB")
	root = d.add(ss, sp{trace: 2, name: "agent.run", start: 10 * time.Second, end: 12 * time.Second})
	call(2, root, 10100*time.Millisecond, "SESSA")
	return d.td
}

// TestSessionsThatMayDifferOnlyInLoneSurrogatesAreBounds pins that where
// escaped lone UTF-16 surrogates (read as U+FFFD by every reader) may
// have merged two session identities, the figures that count distinct
// sessions say so, in every JSON encoding and on the load and the stream
// path: the sessions of an execution are lower bounds, and for a writer
// whose acquires are inferred from the sessions, misses and handshakes
// lower bounds, hits and the hit rate upper bounds, the causes but cold
// not measurable. A lone surrogate elsewhere, or U+FFFD written as such,
// leaves them measurable.
func TestSessionsThatMayDifferOnlyInLoneSurrogatesAreBounds(t *testing.T) {
	for _, tc := range []struct {
		name, sessA, sessB, tool string
		merged                   bool
		read                     int // the sessions of the first execution, and the misses, as read
	}{
		{"sessions differing only in lone surrogates", `s\ud800`, `s\udbff`, "t", true, 1},
		{"one session holding a lone surrogate", `s\udc00`, `s`, "t", true, 2},
		{"valid sessions", "sa", "sb", "t", false, 2},
		{"a lone surrogate in the tool name only", "sa", "sb", `t\ud800`, false, 2},
		{"U+FFFD written as such", `s\ufffd`, "sb", "t", false, 2},
	} {
		repl := strings.NewReplacer("SESSA", tc.sessA, "SESSB", tc.sessB, "TOOL", tc.tool)
		for name, doc := range loneDocs(t, twoSessionsOneExecution()) {
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, []byte(repl.Replace(string(doc))), 0o644); err != nil {
				t.Fatal(err)
			}
			for run, analyze := range map[string]func() (*report.Report, error){
				"load": func() (*report.Report, error) {
					cfg := rulefmt.Config{Profile: rulefmt.ProfileAuto}.WithDefaults()
					x, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Read: ReadOptions{Strict: true}, Index: cfg.IndexOptions()})
					if err != nil {
						return nil, err
					}
					return Analyze(asDump(x), cfg)
				},
				"stream": func() (*report.Report, error) {
					r, _, err := AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{Profile: rulefmt.ProfileAuto}, LoadOptions{Read: ReadOptions{Strict: true}}, EngineOptions{})
					return r, err
				},
			} {
				t.Run(tc.name+"/"+name+"/"+run, func(t *testing.T) {
					r, err := analyze()
					if err != nil {
						t.Fatal(err)
					}
					checkMergedSessionFigures(t, r, tc.merged, tc.read)
				})
			}
		}
	}
}

// semconvFigures are what the figures checkMergedSessionFigures checks
// are worth for this writer without lone surrogates: measurable but the
// handshakes (no handshake span) and what an unseen redial may move.
var semconvFigures = func() map[string]report.Measurability {
	m := map[string]report.Measurability{"handshakes": report.LowerBound, "unexplained_misses": report.UpperBound,
		report.MissCauseFigure(spans.MissUnexplained): report.UpperBound, report.MissCauseFigure(spans.MissAfterFailure): report.NotMeasurable}
	for _, name := range []string{"multi_session_executions", "max_sessions_per_execution", "misses", "excess_misses", "hits", "hit_rate",
		"acquires_per_handshake", report.MissCauseFigure(spans.MissCold), "acquires", "keys", "cold_start_floor"} {
		m[name] = report.Measurable
	}
	return m
}()

// checkMergedSessionFigures checks the figures counting sessions of r
// against merged (the session identities may have merged: each a bound
// or not measurable, for the lone surrogates; else measurable), and the
// sessions read of the first execution, and the misses, against read.
func checkMergedSessionFigures(t *testing.T, r *report.Report, merged bool, read int) {
	t.Helper()
	if r.Writer == nil || r.Writer.Vocabulary != string(rulefmt.ProfileSemconv) || r.Pool.Acquires != 3 {
		t.Fatalf("writer %+v, acquires %d: want semconv's 3 calls read", r.Writer, r.Pool.Acquires)
	}
	for name, want := range map[string]report.Measurability{
		"multi_session_executions": report.LowerBound, "max_sessions_per_execution": report.LowerBound,
		"misses": report.LowerBound, "handshakes": report.LowerBound, "excess_misses": report.LowerBound,
		"hits": report.UpperBound, "hit_rate": report.UpperBound, "acquires_per_handshake": report.UpperBound,
		"unexplained_misses":                           report.NotMeasurable,
		report.MissCauseFigure(spans.MissCold):         report.LowerBound,
		report.MissCauseFigure(spans.MissAfterFailure): report.NotMeasurable,
		report.MissCauseFigure(spans.MissUnexplained):  report.NotMeasurable,
		"acquires": report.Measurable, "keys": report.Measurable, "cold_start_floor": report.Measurable,
	} {
		f := r.FigureOf(name)
		lone := strings.Contains(f.Why, "lone UTF-16 surrogates")
		switch {
		case !merged || want == report.Measurable:
			// Without the lone surrogates, as the writer shows: no handshake
			// span, no attempt on an acquire span.
			if base := semconvFigures[name]; f.State != base || lone {
				t.Errorf("%s is %s (%s), want %s", name, f.State, f.Why, base)
			}
		case f.State != want || !lone || !strings.Contains(f.Why, "session identity"):
			t.Errorf("%s is %s (%q), want %s for the merged sessions", name, f.State, f.Why, want)
		}
	}
	if r.Executions.MaxSessions != read || r.Pool.Misses != read {
		t.Errorf("max sessions %d, misses %d: want %d", r.Executions.MaxSessions, r.Pool.Misses, read)
	}
}
