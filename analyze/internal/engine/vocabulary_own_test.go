package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestAUsersVocabularyIsFirstClass reads a server-side corpus dump with a
// user's own vocabulary block: its spans count as recognised and
// settings.vocabulary names it, as a built-in's would; a mapping that
// gives the calls no session makes the session figures not measurable,
// naming the key to add, instead of counting calls without a session as
// none.
func TestAUsersVocabularyIsFirstClass(t *testing.T) {
	tests := []struct {
		name, yaml string
		recognised int
		sessionOK  bool
	}{
		{"no session mapped", "name: my-writer\ncalls: {name_regex: '^tools/call '}\n", 15, false},
		{"session mapped", "name: my-writer\ncalls: {name_regex: '^tools/call '}\nsession: {attribute: mcp.session.id}\ncapabilities: {side: server}\n", 15, true},
		{"reads nothing", "name: my-writer\ncalls: no.such.span\n", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := rulefmt.ParseVocabulary("v.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			doc := corpusAnalysis(t, corpusDir+"/shinzo/pooled.jsonl", rulefmt.Config{Vocabulary: v})
			wantVocab := "my-writer"
			if tt.recognised == 0 {
				wantVocab = "none"
			}
			if got := jsonPath(doc, "settings", "vocabulary"); got != wantVocab {
				t.Errorf("settings.vocabulary = %v, want %s", got, wantVocab)
			}
			if got, _ := jsonPath(doc, "recognition", "recognised_spans").(float64); int(got) != tt.recognised {
				t.Errorf("recognition.recognised_spans = %v, want %d", got, tt.recognised)
			}
			state, _ := jsonPath(doc, "figures", "acquires", "state").(string)
			why, _ := jsonPath(doc, "figures", "acquires", "why").(string)
			if tt.sessionOK != (state != "not_measurable") {
				t.Errorf("acquires declared %q (%s), session mapped %v", state, why, tt.sessionOK)
			}
			if !tt.sessionOK && tt.recognised > 0 && !strings.Contains(why, "add vocabulary.session") {
				t.Errorf("acquires not measurable without naming the key to add: %q", why)
			}
			if got := jsonPath(doc, "pool", "acquires"); !tt.sessionOK && got != nil {
				t.Errorf("pool.acquires = %v without a session mapped, want null", got)
			}
		})
	}
}

// TestWriterShowsWhatItsSpansCarry pins what the spans themselves decide
// of a writer whose vocabulary reads both sides (semconv): a call of
// server kind makes it the server (no refused attempt seen); a client's
// inferred acquires have a target identity only where a call carries the
// server's address; handshake spans count only where the dump holds one.
func TestWriterShowsWhatItsSpansCarry(t *testing.T) {
	call := func(kind ptrace.SpanKind, attrs ...any) sp {
		return sp{trace: 1, name: "tools/call echo", kind: kind, end: time.Second,
			attrs: append([]any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, "s1"}, attrs...)}
	}
	tests := []struct {
		name      string
		spans     []sp
		shows     []string
		lacks     []string
		side      rulefmt.Side
		handshake report.Measurability
	}{
		{"a client call without the server's address", []sp{call(ptrace.SpanKindClient)},
			[]string{"refused_attempts"}, []string{"target_identity", "handshake_spans"}, rulefmt.SideClient, report.LowerBound},
		{"a client call carrying it", []sp{call(ptrace.SpanKindClient, spans.AttrServerAddress, "mcp.example")},
			[]string{"target_identity", "refused_attempts"}, []string{"handshake_spans"}, rulefmt.SideClient, report.LowerBound},
		{"a server's call: its own sessions, no refused attempt", []sp{call(ptrace.SpanKindServer)},
			[]string{"target_identity"}, []string{"refused_attempts"}, rulefmt.SideServer, report.LowerBound},
		{"an initialize span read", []sp{call(ptrace.SpanKindClient), {trace: 2, name: "initialize", kind: ptrace.SpanKindClient, end: time.Second,
			attrs: []any{spans.AttrMethodName, "initialize"}}},
			[]string{"handshake_spans"}, nil, rulefmt.SideClient, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceName, "gw")
			for _, s := range tt.spans {
				d.add(ss, s)
			}
			r := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileSemconv}, d.td)
			for _, c := range tt.shows {
				if !slices.Contains(r.Writer.Shows, c) {
					t.Errorf("writer shows %v, want %s", r.Writer.Shows, c)
				}
			}
			for _, c := range tt.lacks {
				if slices.Contains(r.Writer.Shows, c) {
					t.Errorf("writer shows %v, want no %s", r.Writer.Shows, c)
				}
			}
			if r.Writer.Side != tt.side {
				t.Errorf("side %s, want %s", r.Writer.Side, tt.side)
			}
			if got := r.Figures["handshakes"].State; got != tt.handshake {
				t.Errorf("handshakes declared %q, want %q", got, tt.handshake)
			}
		})
	}
}
