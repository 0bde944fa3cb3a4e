package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestACallCarryingAServerAddressOfAnyValueShowsTheTarget pins that a
// client's inferred acquires have a target identity once a call carries
// server.address, whatever its value: the boolean false (the first value
// of the dump's string table) as much as a text.
func TestACallCarryingAServerAddressOfAnyValueShowsTheTarget(t *testing.T) {
	for _, addr := range []any{false, true, "mcp.example"} {
		t.Run(fmt.Sprint(addr), func(t *testing.T) {
			b := dumptest.New()
			ss := b.Resource(spans.ResourceServiceName, "agent")
			b.Add(ss, dumptest.Span{Trace: 1, Name: "tools/call echo", Kind: ptrace.SpanKindClient, End: time.Second,
				Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, "s1", spans.AttrServerAddress, addr}})
			cfg := rulefmt.Config{Profile: rulefmt.ProfileSemconv}
			d := NewDump(cfg.IndexOptions())
			d.Add(b.Traces())
			r, err := Analyze(d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.Writer == nil || !slices.Contains(r.Writer.Shows, "target_identity") {
				t.Errorf("writer %+v: want it to show target_identity", r.Writer)
			}
		})
	}
}
