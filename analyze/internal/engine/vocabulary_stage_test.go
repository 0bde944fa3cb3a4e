package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// TestVocabularyStageEventsGolden pins, per built-in vocabulary, the events
// its stage makes of a small story: spans in (the tracegen scenario, or the
// hand-built OpenLLMetry shape), events out, one line each, attributed, in
// testdata/vocabularies/<vocabulary>.events.txt. A reviewer reads the pair to
// know what a change to a vocabulary or the stage did; -update rewrites them.
func TestVocabularyStageEventsGolden(t *testing.T) {
	for _, tc := range []struct {
		vocabulary rulefmt.Profile
		build      func() ptrace.Traces
	}{
		{rulefmt.ProfileMcptrace, tracegen.TTLAndRedial},
		{rulefmt.ProfileAcquireOnMiss, tracegen.AcquireOnMiss},
		{rulefmt.ProfileSemconv, tracegen.Semconv},
		{rulefmt.ProfileOpenLLMetry, func() ptrace.Traces { return sessionSpanDump(true) }},
	} {
		t.Run(string(tc.vocabulary), func(t *testing.T) {
			cfg := rulefmt.Config{Profile: tc.vocabulary}.WithDefaults()
			idx := index.New(cfg.IndexOptions())
			idx.Add(tc.build())
			ev, err := vocab.Stage(context.Background(), idx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := renderEvents(idx, ev, measure.Attributed(ev, cfg))
			golden := filepath.Join("..", "..", "testdata", "vocabularies", string(tc.vocabulary)+".events.txt")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (go test ./analyze/internal/engine -run TestVocabularyStageEventsGolden -update): %v", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("events differ from %s (-want +got):\n%s", golden, d)
			}
		})
	}
}

// renderEvents writes the events one line each, times in milliseconds from
// the dump's first span, ids as the index's trace and span ids.
func renderEvents(x *index.Index, ev *record.Table, acquires []record.Acquire) string {
	lo, _, _ := x.Window()
	ms := func(ns int64) string { return fmt.Sprintf("%gms", float64(ns-lo.UnixNano())/1e6) }
	name := func(i int32) string {
		s := x.Span(i)
		return fmt.Sprintf("%s/%x %s", x.TraceID(s.Trace)[24:], s.ID, x.Names[s.Name])
	}
	str := func(id int32) string {
		if id < 0 {
			return "-"
		}
		return fmt.Sprintf("%q", ev.Strs[id])
	}
	var lines []string
	slices.SortFunc(acquires, func(a, b record.Acquire) int { return measure.CmpPairTime(a, b) })
	for _, a := range acquires {
		kind := "explicit"
		switch {
		case a.Inferred():
			kind = "inferred"
		case !a.Explicit:
			kind = "implied"
		}
		outcome := "hit"
		if !a.Hit {
			outcome = "miss:" + spans.MissReasons[a.Reason]
		}
		lines = append(lines, fmt.Sprintf("acquire %s %s start=%s lease_end=%s scope=%s key=%s session=%s %s redial=%t failed=%t",
			kind, name(a.At), ms(a.Start), ms(a.LeaseEnd), str(a.Scope), str(a.Key), str(a.Session), outcome, a.Redial, a.Failed))
	}
	for _, c := range ev.Calls {
		exec := "trace"
		if c.Exec != c.Trace {
			exec = name(c.Exec)
		}
		lines = append(lines, fmt.Sprintf("call %s start=%s exec=%s session=%s scope=%s revision=%s failed=%t",
			name(c.Span), ms(c.Start), exec, str(c.Session), str(c.Scope), str(c.Revision), c.Failed))
	}
	for _, h := range ev.Handshakes {
		lines = append(lines, fmt.Sprintf("handshake %s start=%s scope=%s session=%s revision=%s failed=%t",
			name(h.Span), ms(h.Start), str(h.Scope), str(h.Session), str(h.Revision), h.Failed))
	}
	lines = append(lines, fmt.Sprintf("pool_spans %d", ev.PoolSpans))
	return strings.Join(lines, "\n") + "\n"
}

// TestAnAcquireOrHandshakeIsNoInvocationOfItsOwn pins acquire-on-miss's
// implied hits under a vocabulary whose invocation selector also matches
// its acquire and handshake spans (every gw.* span): only a span that is
// an invocation and neither an acquire nor a handshake implies a hit by
// having no acquire child. The lease with a miss and the one without an
// acquire make two acquires, one hit; the acquire and the dial under the
// first are not invocations that reused a session.
func TestAnAcquireOrHandshakeIsNoInvocationOfItsOwn(t *testing.T) {
	cf, err := rulefmt.ParseConfig("mcptrace.yaml", []byte(`
vocabulary:
  name: overlapping-gateway
  calls: gw.tool.call
  invocations: {name_regex: '^gw\.(lease|pool\.get|dial)$'}
  acquires: {name: gw.pool.get}
  handshakes: [gw.dial]
  acquire_on_miss: true
`+gatewayAttributes))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "gw")
	lease := d.add(ss, sp{trace: 1, name: "gw.lease", start: 0, end: time.Second, attrs: []any{"gw.key", "k"}})
	get := d.add(ss, sp{trace: 1, parent: lease, name: "gw.pool.get", start: 0, end: 100 * time.Millisecond,
		attrs: []any{"gw.key", "k", "gw.reused", false, "gw.why", spans.MissCold}})
	d.add(ss, sp{trace: 1, parent: get, name: "gw.dial", kind: ptrace.SpanKindClient, start: 0, end: 100 * time.Millisecond, attrs: []any{"gw.session", "s1"}})
	d.add(ss, sp{trace: 1, parent: lease, name: "gw.tool.call", kind: ptrace.SpanKindClient, start: 100 * time.Millisecond, end: time.Second, attrs: []any{"gw.session", "s1"}})
	reuse := d.add(ss, sp{trace: 2, name: "gw.lease", start: 2 * time.Second, end: 3 * time.Second, attrs: []any{"gw.key", "k"}})
	d.add(ss, sp{trace: 2, parent: reuse, name: "gw.tool.call", kind: ptrace.SpanKindClient, start: 2 * time.Second, end: 3 * time.Second, attrs: []any{"gw.session", "s1"}})
	r := analyzeTD(t, rulefmt.Config{Vocabulary: cf.Vocabulary}, d.td)
	if r.Pool.Acquires != 2 || r.Pool.Hits != 1 || r.Pool.Misses != 1 {
		t.Errorf("acquires %d, hits %d, misses %d; want 2, 1, 1 (the miss and one implied hit)", r.Pool.Acquires, r.Pool.Hits, r.Pool.Misses)
	}
}
