package htmlreport

import (
	"context"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

var update = flag.Bool("update", false, "rewrite the golden data in ../testdata/htmlreport")

// tracesDir holds the scenario dumps, seen from analyze/ (where the tests
// run: see TestMain).
const tracesDir = "../testdata/traces"

// TestMain runs the tests from analyze/, where the golden data was written:
// the report echoes its input paths, so they read as they always have. It
// fails the tests if a goroutine outlives them (the readers decode in
// parallel).
func TestMain(m *testing.M) {
	if err := os.Chdir(".."); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m)
}

// scenarioConfig returns the configuration a scenario is analyzed with: its
// profile, and the cold-init measure for the seed 003 stories (as
// analyze's own scenario tests configure it).
func scenarioConfig(t testing.TB, name string) rulefmt.Config {
	t.Helper()
	cf, err := rulefmt.ParseConfig("cold-init.yaml", []byte(tracegen.ColdInitMeasureYAML))
	if err != nil {
		t.Fatalf("parse cold-init config: %v", err)
	}
	cfg := rulefmt.Config{Measures: cf.Measures}
	cfg.Profile = rulefmt.Profile(tracegen.ScenarioProfile(name))
	return cfg
}

// analyzed loads one dump strictly and returns its analysis and its
// report events, as the CLI builds them for the HTML report.
func analyzed(t testing.TB, path string, cfg rulefmt.Config) (*report.Report, *analyze.ReportEvents) {
	t.Helper()
	idx, _, err := analyze.Load(context.Background(), []string{path}, analyze.LoadOptions{Index: cfg.IndexOptions(), Read: analyze.ReadOptions{Strict: true}})
	if err != nil {
		t.Fatalf("Load %s: %v", path, err)
	}
	r, err := analyze.Analyze(idx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := analyze.NewReportEvents(idx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, ev
}

// t0 is the base time of hand-built test dumps.
var t0 = time.Date(2026, time.May, 1, 12, 0, 0, 0, time.UTC)

// dump builds a small OTLP dump by hand for a test that pins one behaviour.
type dump struct {
	td     ptrace.Traces
	nextID uint64
}

func newDump() *dump { return &dump{td: ptrace.NewTraces(), nextID: 1} }

// resource starts a resource with the given attribute pairs and returns its
// span slice.
func (d *dump) resource(kv ...string) ptrace.SpanSlice {
	rs := d.td.ResourceSpans().AppendEmpty()
	for i := 0; i+1 < len(kv); i += 2 {
		rs.Resource().Attributes().PutStr(kv[i], kv[i+1])
	}
	return rs.ScopeSpans().AppendEmpty().Spans()
}

// sp describes one span; attrs are key, value pairs (string or bool).
type sp struct {
	trace, parent uint64
	name          string
	start, end    time.Duration // offsets from t0
	kind          ptrace.SpanKind
	attrs         []any
}

// add appends s to ss with the next free span id, which it returns.
func (d *dump) add(ss ptrace.SpanSlice, s sp) uint64 {
	id := d.nextID
	d.nextID++
	x := ss.AppendEmpty()
	var tid pcommon.TraceID
	binary.BigEndian.PutUint64(tid[8:], s.trace)
	x.SetTraceID(tid)
	x.SetSpanID(spanID(id))
	if s.parent != 0 {
		x.SetParentSpanID(spanID(s.parent))
	}
	x.SetName(s.name)
	x.SetKind(s.kind)
	x.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(s.start)))
	x.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(s.end)))
	for i := 0; i+1 < len(s.attrs); i += 2 {
		k := s.attrs[i].(string)
		switch v := s.attrs[i+1].(type) {
		case string:
			x.Attributes().PutStr(k, v)
		case bool:
			x.Attributes().PutBool(k, v)
		default:
			panic("unsupported attribute type in test")
		}
	}
	return id
}

func spanID(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

// write writes the dump as one OTLP JSON line into a new file of dir.
func (d *dump) write(t testing.TB) string {
	t.Helper()
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(d.td)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dump.otlp.jsonl")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
