package engine

import (
	"bytes"
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
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// twoColdKeys is two invocations a second apart in one pool scope, each
// a miss on its own key (KEYA, KEYB) calling tool TOOL: both cold when
// the keys are two, the second unexplained when they read as one.
func twoColdKeys() ptrace.Traces {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "SCOPE")
	for i, key := range []string{"KEYA", "KEYB"} {
		start := time.Duration(i) * time.Second
		d.invocation(ss, lease{trace: uint64(i + 1), start: start, end: start + 100*time.Millisecond, key: key, hit: false,
			handshake: true, session: "s-" + key, invokeKV: []any{spans.AttrToolName, "TOOL"}})
	}
	return d.td
}

// loneDocs writes td in every JSON encoding a reader of its own reads:
// OTLP JSON lines, one OTLP JSON document, Jaeger, and Tempo's two
// shapes.
func loneDocs(t *testing.T, td ptrace.Traces) map[string][]byte {
	t.Helper()
	var m ptrace.JSONMarshaler
	line, err := m.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	var doc, jaeger, tempo, tempo2 bytes.Buffer
	if err := errorsOf(tracegen.WriteJaeger(&jaeger, td), tracegen.WriteTempoBatches(&tempo, td), tracegen.WriteTempoTrace(&tempo2, td)); err != nil {
		t.Fatal(err)
	}
	doc.WriteString("{\n\"resourceSpans\": ")
	doc.Write(line[len(`{"resourceSpans":`):])
	return map[string][]byte{
		"otlp.jsonl":    append(line, '\n'),
		"otlp.json":     doc.Bytes(),
		"jaeger.json":   jaeger.Bytes(),
		"tempo.json":    tempo.Bytes(),
		"tempo-v2.json": tempo2.Bytes(),
	}
}

func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestKeysThatMayDifferOnlyInLoneSurrogatesShowNoTargetIdentity pins that
// an escaped lone UTF-16 surrogate, which every reader reads as U+FFFD,
// takes the target identity away wherever a pool scope or key holds
// U+FFFD: two keys that differed only there read as one, and the second
// one's cold miss as unexplained. The figures that tell keys apart are
// then not measurable (or bounds), with the lone surrogates as the
// reason, in every JSON encoding and on both the load and the stream
// path. A lone surrogate elsewhere (a tool name), or U+FFFD written as
// such, leaves the keys as they are: measurable.
func TestKeysThatMayDifferOnlyInLoneSurrogatesShowNoTargetIdentity(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		keyA, keyB, scope, tool string
		identity                bool // target identity shown, every figure measurable
	}{
		{"keys differing only in lone surrogates", `k\ud800`, `k\udbff`, "pool-1", "t", false},
		{"a high and a low lone surrogate", `k\ud800`, `k\udc00`, "pool-1", "t", false},
		{"one key holding a lone surrogate", `k\ud800`, `k`, "pool-1", "t", false},
		{"a scope holding a lone surrogate", "ka", "kb", `pool\udfff`, "t", false},
		{"valid keys", "ka", "kb", "pool-1", "t", true},
		{"a surrogate pair in a key", `k\ud83d\ude00`, "kb", "pool-1", "t", true},
		{"a lone surrogate in the tool name only", "ka", "kb", "pool-1", `t\ud800`, true},
		{"U+FFFD written as such", `k\ufffd`, "kb", "pool-1", "t", true},
	} {
		repl := strings.NewReplacer("KEYA", tc.keyA, "KEYB", tc.keyB, "SCOPE", tc.scope, "TOOL", tc.tool)
		for name, doc := range loneDocs(t, twoColdKeys()) {
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, []byte(repl.Replace(string(doc))), 0o644); err != nil {
				t.Fatal(err)
			}
			for run, analyze := range map[string]func() (*report.Report, error){
				"load": func() (*report.Report, error) {
					cfg := rulefmt.Config{}.WithDefaults()
					x, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Read: ReadOptions{Strict: true}, Index: cfg.IndexOptions()})
					if err != nil {
						return nil, err
					}
					return Analyze(asDump(x), cfg)
				},
				"stream": func() (*report.Report, error) {
					r, _, err := AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{}, LoadOptions{Read: ReadOptions{Strict: true}}, EngineOptions{})
					return r, err
				},
			} {
				t.Run(tc.name+"/"+name+"/"+run, func(t *testing.T) {
					r, err := analyze()
					if err != nil {
						t.Fatal(err)
					}
					checkLoneFigures(t, r, tc.identity)
				})
			}
		}
	}
}

// checkLoneFigures checks r's target identity and the figures that need
// it against identity (shown, every figure measurable), and that the
// reason names the lone surrogates when it is not.
func checkLoneFigures(t *testing.T, r *report.Report, identity bool) {
	t.Helper()
	if r.Pool.Acquires != 2 || r.Pool.Misses != 2 {
		t.Fatalf("acquires %d, misses %d: want the 2 misses read", r.Pool.Acquires, r.Pool.Misses)
	}
	if got := r.Shows().Has(rulefmt.CapTargetIdentity); got != identity {
		t.Errorf("target identity shown %v, want %v (writer %+v)", got, identity, r.Writer)
	}
	for name, lost := range map[string]report.Measurability{
		"unexplained_misses": report.NotMeasurable, "keys": report.LowerBound,
		"cold_start_floor": report.LowerBound, "excess_misses": report.UpperBound,
		report.MissCauseFigure(spans.MissCold): report.LowerBound, report.MissCauseFigure(spans.MissTTL): report.NotMeasurable,
		report.MissCauseFigure(spans.MissUnexplained): report.NotMeasurable,
	} {
		f := r.FigureOf(name)
		switch {
		case identity && !f.Exact():
			t.Errorf("%s is %s (%s), want measurable", name, f.State, f.Why)
		case !identity && (f.State != lost || !strings.Contains(f.Why, "lone UTF-16 surrogates")):
			t.Errorf("%s is %s (%q), want %s for the lone surrogates", name, f.State, f.Why, lost)
		}
	}
}
