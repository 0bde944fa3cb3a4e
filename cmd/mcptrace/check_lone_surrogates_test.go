package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// twoMissesDump writes one pool scope's two misses, a second apart, on
// keys a and b (OTLP JSON lines, written as given: escapes stay escapes)
// and returns its path.
func twoMissesDump(t *testing.T, a, b string) string {
	t.Helper()
	d := dumptest.New()
	ss := d.Resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "pool-1")
	for i, key := range []string{"KEYA", "KEYB"} {
		start := time.Duration(i) * time.Second
		inv := d.Add(ss, dumptest.Span{Trace: uint64(i + 1), Name: spans.SpanInvoke, Start: start, End: start + 50*time.Millisecond,
			Attrs: []any{spans.AttrCacheKey, key}})
		d.Add(ss, dumptest.Span{Trace: uint64(i + 1), Parent: inv, Name: spans.SpanAcquire, Start: start, End: start + 10*time.Millisecond,
			Attrs: []any{spans.AttrCacheKey, key, spans.AttrCacheHit, false}})
	}
	path := d.Write(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw = []byte(strings.NewReplacer("KEYA", a, "KEYB", b).Replace(string(raw)))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckCannotTellKeysThatDifferOnlyInLoneSurrogates pins the verdict
// on two misses whose keys differ only in an escaped lone surrogate:
// every reader reads both as one key, so the second miss would read as
// unexplained and fail the rule. It is incomplete instead (exit 3), the
// rule not applicable for the lone surrogates; the same dump with two
// keys passes, with one key fails.
func TestCheckCannotTellKeysThatDifferOnlyInLoneSurrogates(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, []byte("rules:\n  - id: misses-only-cold\n    scope: dump\n    expect:\n"+
		"      - {of: unexplained_misses, op: \"==\", than: 0}\n      - {of: excess_misses, op: \"<=\", than: 0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, a, b string
		code       int
		stdout     []string
	}{
		{"keys differing only in lone surrogates", `a\ud800`, `a\udbff`, 3,
			[]string{"not applicable: unexplained_misses is not measurable: the inputs held 4 escaped lone UTF-16 surrogates", "INCOMPLETE"}},
		{"two keys", "a1", "a2", 0, []string{"unexplained_misses = 0, excess_misses = 0", "PASS"}},
		{"one key", "a1", "a1", 1, []string{"unexplained_misses = 1, excess_misses = 1", "FAIL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "check", "--config", rules, twoMissesDump(t, tc.a, tc.b))
			wantOutcome(t, code, out, errOut, tc.code, tc.stdout, nil)
		})
	}
}
