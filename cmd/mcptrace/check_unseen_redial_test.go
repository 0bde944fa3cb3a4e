package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// redialDump writes one pool scope's cold miss, then an invocation whose
// first attempt reused the session and whose second, the redial
// (plugin.mcp.attempt 2), dialed; it returns its path.
func redialDump(t *testing.T) string {
	t.Helper()
	d := dumptest.New()
	ss := d.Resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "pool-1")
	ms := time.Millisecond
	for i, attempts := range [][]bool{{false}, {true, false}} {
		start := time.Duration(i) * 200 * ms
		inv := d.Add(ss, dumptest.Span{Trace: uint64(i + 1), Name: spans.SpanInvoke, Start: start, End: start + 100*ms,
			Attrs: []any{spans.AttrCacheKey, "k"}})
		for n, hit := range attempts {
			at := start + time.Duration(n)*50*ms
			d.Add(ss, dumptest.Span{Trace: uint64(i + 1), Parent: inv, Name: spans.SpanAcquire, Start: at, End: at + ms,
				Attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, hit, spans.AttrAttempt, n + 1}})
		}
	}
	return d.Write(t)
}

// TestCheckCannotTellUnexplainedMissesFromUnseenRedials pins the verdict
// of no-unexplained-misses on a redial whose writer's vocabulary maps no
// attempt attribute: the redial reads as a first attempt that found the
// session its first attempt released, so it is filed unexplained, which
// is then only an upper bound, and the rule not applicable rather than
// failed (the pool span rules still pass). With the attempt mapped the redial is one and the
// rule passes.
func TestCheckCannotTellUnexplainedMissesFromUnseenRedials(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	noAttempt := filepath.Join(dir, "no-attempt.yaml")
	if err := os.WriteFile(noAttempt, []byte("vocabulary:\n  name: pool-without-attempts\n  base: mcptrace\n  attributes: {attempt: \"\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dump := redialDump(t)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
	}{
		{"no attempt mapped", []string{"--config", noAttempt}, 0,
			[]string{"not applicable: unexplained_misses = 1 is only an upper bound, which cannot decide", "no acquire span carries an attempt number",
				"PASS (3 passed, 3 not applicable)"}},
		{"attempt mapped", nil, 0, []string{"unexplained_misses = 0", "PASS (4 passed, 2 not applicable)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append(append([]string{"check", "--idle-ttl", "1h"}, tc.args...), dump)...)
			wantOutcome(t, code, out, errOut, tc.code, tc.stdout, nil)
		})
	}
}
