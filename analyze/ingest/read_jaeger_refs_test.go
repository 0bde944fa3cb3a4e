package ingest

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestJaegerParentIsFirstChildOfElseFirstFollowsFromInTheSameTrace pins
// how a span's references become its parent and links, the way Jaeger's
// model reads a parent: the first CHILD_OF reference in the span's own
// trace, else the first FOLLOWS_FROM reference in its own trace, else
// none; the reference kinds in any case. Every other reference is a link,
// in the references' order, and the one chosen as parent is not.
func TestJaegerParentIsFirstChildOfElseFirstFollowsFromInTheSameTrace(t *testing.T) {
	const abc, def = "abc", "def" // abc is the span's own trace
	type ref struct{ kind, trace, span string }
	cases := []struct {
		name string
		refs []ref
		want string // parent span id, then the links as trace/span
	}{
		{"no reference, no parent", nil, "parent= links=[]"},
		{"only FOLLOWS_FROM in the same trace: it is the parent",
			[]ref{{"FOLLOWS_FROM", abc, "1"}}, "parent=1 links=[]"},
		{"FOLLOWS_FROM then CHILD_OF: CHILD_OF wins, FOLLOWS_FROM a link",
			[]ref{{"FOLLOWS_FROM", abc, "1"}, {"CHILD_OF", abc, "2"}}, "parent=2 links=[abc/1]"},
		{"CHILD_OF then FOLLOWS_FROM: CHILD_OF wins, FOLLOWS_FROM a link",
			[]ref{{"CHILD_OF", abc, "2"}, {"FOLLOWS_FROM", abc, "1"}}, "parent=2 links=[abc/1]"},
		{"FOLLOWS_FROM to another trace: no parent",
			[]ref{{"FOLLOWS_FROM", def, "9"}}, "parent= links=[def/9]"},
		{"CHILD_OF to another trace: no parent",
			[]ref{{"CHILD_OF", def, "9"}}, "parent= links=[def/9]"},
		{"CHILD_OF to another trace, FOLLOWS_FROM in the same: FOLLOWS_FROM is the parent",
			[]ref{{"CHILD_OF", def, "9"}, {"FOLLOWS_FROM", abc, "1"}}, "parent=1 links=[def/9]"},
		{"the first of two FOLLOWS_FROM in the same trace is the parent",
			[]ref{{"FOLLOWS_FROM", def, "8"}, {"FOLLOWS_FROM", abc, "1"}, {"FOLLOWS_FROM", abc, "2"}, {"FOLLOWS_FROM", def, "9"}},
			"parent=1 links=[def/8 abc/2 def/9]"},
		{"the first of two CHILD_OF in the same trace is the parent",
			[]ref{{"CHILD_OF", abc, "1"}, {"CHILD_OF", abc, "2"}}, "parent=1 links=[abc/2]"},
		{"reference kinds in any case",
			[]ref{{"follows_from", abc, "1"}, {"Follows_From", abc, "2"}}, "parent=1 links=[abc/2]"},
		{"a child_of in any case wins over an earlier FOLLOWS_FROM",
			[]ref{{"FOLLOWS_FROM", abc, "1"}, {"child_of", abc, "2"}}, "parent=2 links=[abc/1]"},
		{"an unknown kind is never the parent",
			[]ref{{"PARENT", abc, "1"}, {"", abc, "2"}}, "parent= links=[abc/1 abc/2]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			refs := make([]string, len(tc.refs))
			for i, r := range tc.refs {
				refs[i] = fmt.Sprintf(`{"refType":%q,"traceID":%q,"spanID":%q}`, r.kind, r.trace, r.span)
			}
			doc := `{"data":[{"traceID":"abc","spans":[{"traceID":"abc","spanID":"f","operationName":"s","startTime":1,"duration":1,"references":[` +
				strings.Join(refs, ",") + `]}],"processes":{}}]}`
			_, batches, err := readBytes(t, []byte(doc), ReadOptions{Strict: true, Format: FormatJaeger})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, td := range batches {
				forEachTestSpan(td, func(sp ptrace.Span) { got = append(got, refsOf(sp)) })
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// refsOf is a span's parent and links with the ids' leading zeros dropped,
// as the test writes them.
func refsOf(sp ptrace.Span) string {
	short := func(s string) string { return strings.TrimLeft(s, "0") }
	links := make([]string, 0, sp.Links().Len())
	for i := 0; i < sp.Links().Len(); i++ {
		l := sp.Links().At(i)
		links = append(links, short(l.TraceID().String())+"/"+short(l.SpanID().String()))
	}
	parent := ""
	if !sp.ParentSpanID().IsEmpty() {
		parent = short(sp.ParentSpanID().String())
	}
	return fmt.Sprintf("parent=%s links=[%s]", parent, strings.Join(links, " "))
}
