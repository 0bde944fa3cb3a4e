package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// baselineKeys are a baseline's required figures: the key's path and the
// figure (report.Report.Figures) whose not_measurable state excuses a
// null there ("" when nothing excuses one).
var baselineKeys = []struct{ path, figure string }{
	{"pool.acquires", "acquires"},
	{"pool.hits", "hits"},
	{"pool.misses", "misses"},
	{"pool.excess_misses", "excess_misses"},
	{"pool.miss_reasons", ""},
	{"pool.latency_ms", ""},
	{"executions.count", "executions"},
	{"executions.multi_session", "multi_session_executions"},
	{"executions.max_sessions", "max_sessions_per_execution"},
}

// baselineText is the smallest baseline the gate accepts, with the key
// at path null (none: "") and the figures named not measurable.
func baselineText(nullPath string, notMeasurable ...string) string {
	val := func(path, v string) string {
		if path == nullPath {
			return "null"
		}
		return v
	}
	figs := make([]string, 0, len(notMeasurable))
	for _, f := range notMeasurable {
		figs = append(figs, fmt.Sprintf(`%q: {"state": "not_measurable", "why": "w"}`, f))
	}
	return fmt.Sprintf(`{"schema": "mcptrace.analysis/v1", "spans": 3, "traces": 1,
"pool": {"acquires": %s, "hits": %s, "hit_rate": 0.75, "misses": %s, "excess_misses": %s, "miss_reasons": %s, "latency_ms": %s},
"executions": {"count": %s, "multi_session": %s, "max_sessions": %s},
"figures": {%s}}`,
		val("pool.acquires", "4"), val("pool.hits", "3"), val("pool.misses", "1"), val("pool.excess_misses", "0"),
		val("pool.miss_reasons", `{"cold": 1}`), val("pool.latency_ms", "{}"),
		val("executions.count", "1"), val("executions.multi_session", "0"), val("executions.max_sessions", "1"),
		strings.Join(figs, ", "))
}

// TestABaselineMayLackOnlyTheFiguresItSaysAreNotMeasurable pins which
// figure excuses which null key: a null figure is read as the truth only
// where the baseline's own figures say that very figure was not
// measurable; another figure's state excuses nothing, and the miss
// reasons and latencies are never excused.
func TestABaselineMayLackOnlyTheFiguresItSaysAreNotMeasurable(t *testing.T) {
	if _, err := DecodeBaseline(strings.NewReader(baselineText("")), "b.json"); err != nil {
		t.Fatalf("the whole baseline: %v", err)
	}
	for _, k := range baselineKeys {
		t.Run(k.path, func(t *testing.T) {
			var others []string
			for _, o := range baselineKeys {
				if o.figure != "" && o.figure != k.figure {
					others = append(others, o.figure)
				}
			}
			_, err := DecodeBaseline(strings.NewReader(baselineText(k.path, others...)), "b.json")
			if want := fmt.Sprintf("key %q is missing or null", k.path); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrNotBaseline) {
				t.Errorf("null %s, every other figure not measurable: err = %v, want ErrNotBaseline saying %s", k.path, err, want)
			}
			if k.figure == "" {
				return
			}
			for _, state := range []string{"lower_bound", "upper_bound", "measurable"} {
				text := strings.Replace(baselineText(k.path), `"figures": {}`, fmt.Sprintf(`"figures": {%q: {"state": %q}}`, k.figure, state), 1)
				if _, err := DecodeBaseline(strings.NewReader(text), "b.json"); err == nil {
					t.Errorf("null %s with %s %s: accepted, want refused", k.path, k.figure, state)
				}
			}
			if _, err := DecodeBaseline(strings.NewReader(baselineText(k.path, k.figure)), "b.json"); err != nil {
				t.Errorf("null %s with %s not measurable: %v, want accepted", k.path, k.figure, err)
			}
		})
	}
}

// TestReadingABaselineIsBoundedAndCancelable pins ReadBaselineFrom's
// limit (a baseline of exactly the limit is read, one byte more refused;
// 0 is no bound) and its context (a done context stops the read with the
// context's error, before the text is judged).
func TestReadingABaselineIsBoundedAndCancelable(t *testing.T) {
	text := baselineText("")
	n := int64(len(text))
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		limit int64
		want  error // nil: read
	}{
		{"no bound", context.Background(), 0, nil},
		{"exactly the limit", context.Background(), n, nil},
		{"a byte past the limit", context.Background(), n - 1, ErrBaselineTooLarge},
		{"a done context", canceled, 0, context.Canceled},
		{"a done context under a limit", canceled, n, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := ReadBaselineFrom(tc.ctx, strings.NewReader(text), "b.json", tc.limit)
			switch {
			case tc.want == nil && (err != nil || rep == nil || rep.Spans != 3):
				t.Fatalf("ReadBaselineFrom = %v, %v; want the report", rep, err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("ReadBaselineFrom err = %v, want %v", err, tc.want)
			case tc.want != nil && !strings.Contains(err.Error(), "b.json"):
				t.Errorf("err %q does not name the file", err)
			}
		})
	}
}

// TestABaselineIsToldByItsFirstBytesOnly pins LooksLikeBaseline and
// IsBaseline: the schema key must start within the first SniffLen bytes,
// and a file that cannot be opened is no baseline.
func TestABaselineIsToldByItsFirstBytesOnly(t *testing.T) {
	head := `{"schema": "mcptrace.analysis/v1"`
	if !LooksLikeBaseline([]byte(head)) {
		t.Error("a report's head is not told a baseline")
	}
	late := []byte(strings.Repeat(" ", SniffLen) + head)
	if LooksLikeBaseline(late) {
		t.Error("a schema past the first SniffLen bytes is told a baseline")
	}
	if LooksLikeBaseline(nil) {
		t.Error("no bytes are told a baseline")
	}
	dir := t.TempDir()
	if IsBaseline(filepath.Join(dir, "absent.json")) {
		t.Error("a file that does not exist is told a baseline")
	}
	path := filepath.Join(dir, "b.json")
	if err := os.WriteFile(path, []byte(strings.Repeat(" ", SniffLen-len(head))+head+"}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsBaseline(path) {
		t.Error("a baseline whose schema ends at the SniffLen-th byte is not told one")
	}
}
