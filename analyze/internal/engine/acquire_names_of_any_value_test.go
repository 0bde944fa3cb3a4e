package engine

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestAnAcquiresScopeAndKeyOfAnyValueAreNamed pins that every Acquire
// handed out (the HTML report's EachAcquire and ReadAcquires, the two
// replays' inputs) names its scope and key, whatever their value: the
// boolean false (the first text of the dump's table) as much as a text.
func TestAnAcquiresScopeAndKeyOfAnyValueAreNamed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		scope, key any
		wantScope  string
		wantKey    string
	}{
		{"a scope that is the boolean false", false, "k", "false", "k"},
		{"a key that is the boolean false", "p", false, "p", "false"},
		{"texts", "p", "k", "p", "k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := dumptest.New()
			ss := b.Resource(spans.ResourceServiceName, "agent")
			for i := range 2 {
				at := time.Duration(i) * 10 * time.Second
				inv := b.Add(ss, dumptest.Span{Trace: uint64(i + 1), Name: spans.SpanInvoke, Start: at, End: at + time.Second,
					Attrs: []any{spans.AttrCacheKey, tc.key}})
				b.Add(ss, dumptest.Span{Trace: uint64(i + 1), Parent: inv, Name: spans.SpanAcquire, Start: at, End: at + time.Millisecond,
					Attrs: []any{spans.AttrPoolID, tc.scope, spans.AttrCacheKey, tc.key, spans.AttrCacheHit, i > 0}})
			}
			cfg := rulefmt.Config{}
			want := []Acquire{
				{Scope: tc.wantScope, HasScope: true, Key: tc.wantKey, HasKey: true, Service: "agent", HasService: true,
					Start: dumptest.T0.UnixNano(), LeaseEnd: dumptest.T0.Add(time.Second).UnixNano(), Attempt: 1, Cause: spans.MissCold},
				{Scope: tc.wantScope, HasScope: true, Key: tc.wantKey, HasKey: true, Service: "agent", HasService: true,
					Start: dumptest.T0.Add(10 * time.Second).UnixNano(), LeaseEnd: dumptest.T0.Add(11 * time.Second).UnixNano(), Attempt: 1, Hit: true},
			}

			d := NewDump(cfg.IndexOptions())
			d.Add(b.Traces())
			ev, err := NewReportEvents(d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []Acquire
			ev.EachAcquire(func(a *Acquire) { got = append(got, *a) })
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("EachAcquire (-want +got):\n%s", diff)
			}

			got = nil
			if _, err := ReadAcquires(context.Background(), ingest.Files{b.Write(t)}, cfg, LoadOptions{}, func(a *Acquire) { got = append(got, *a) }); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ReadAcquires (-want +got):\n%s", diff)
			}
		})
	}
}
