package ingest

import (
	"bytes"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// nullSpanJSON is one span of OTLP JSON with non-zero ids; with a string
// value quote, its attribute holds quote (for a "null" that is text).
func nullSpanJSON(id int, quote string) string {
	return fmt.Sprintf(`{"traceId":"00000000000000000000000000000001","spanId":"%016x","name":"plugin.mcp.invoke","kind":1,`+
		`"startTimeUnixNano":"1777539654000000000","endTimeUnixNano":"1777539654100000000",`+
		`"attributes":[{"key":"x","value":{"stringValue":"%s"}}]}`, id, quote)
}

// TestNullArrayElementsAreSkipped pins that a null element of an OTLP
// JSON request's resourceSpans, scopeSpans or spans array (of a Tempo
// document's too) is skipped: it holds no span, and must not be read as
// one with zero ids, on the projection path (a BatchSink) as on pdata's.
func TestNullArrayElementsAreSkipped(t *testing.T) {
	sp1, sp2 := nullSpanJSON(1, "v"), nullSpanJSON(2, "v")
	scope := func(spans string) string { return `{"scope":{"name":"p"},"spans":[` + spans + `]}` }
	res := func(scopes string) string { return `{"resource":{"attributes":[]},"scopeSpans":[` + scopes + `]}` }
	line := func(rss string) string { return `{"resourceSpans":[` + rss + `]}` + "\n" }
	cases := []struct {
		name  string
		data  string
		spans int
	}{
		{"no null", line(res(scope(sp1 + "," + sp2))), 2},
		{"a null span first", line(res(scope("null," + sp1 + "," + sp2))), 2},
		{"a null span last, spaced", line(res(scope(sp1 + " ,\t null "))), 1},
		{"only a null span", line(res(scope("null"))) + line(res(scope(sp1))), 1},
		{"a null scope", line(res("null," + scope(sp1))), 1},
		{"a null resource", line("null," + res(scope(sp1))), 1},
		{"null as text after a comma", line(res(scope(nullSpanJSON(1, ",null")))), 1},
		{"a document: a null resource and span", "{\n\"resourceSpans\": [null, " + res(scope("null,"+sp1)) + "]\n}\n", 1},
		{"tempo: a null span", `{"batches":[` + res(scope("null,"+sp1)) + `]}`, 1},
		{"tempo: a null scope", `{"batches":[` + res("null,"+scope(sp1)) + `]}`, 1},
	}
	for _, tc := range cases {
		for _, batches := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batches=%v", tc.name, batches), func(t *testing.T) {
				in, zero := readNullCase(t, []byte(tc.data), batches)
				if in.Spans != tc.spans || zero != 0 || in.Partial || len(in.Warnings) != 0 {
					t.Errorf("read %d spans (%d with a zero span id; partial %v, warnings %q), want %d, none zero, whole",
						in.Spans, zero, in.Partial, in.Warnings, tc.spans)
				}
			})
		}
	}
}

// readNullCase reads data (non-strict) into a BatchSink or a plain Sink
// and returns its input and how many spans it read with a zero span id.
func readNullCase(t *testing.T, data []byte, batches bool) (Input, int) {
	t.Helper()
	zero := 0
	var sink Sink = SinkFunc(func(_ *Input, td ptrace.Traces) error {
		forEachTestSpan(td, func(sp ptrace.Span) {
			if sp.SpanID().IsEmpty() {
				zero++
			}
		})
		return nil
	})
	if batches {
		sink = &zeroIDSink{zero: &zero}
	}
	inputs, err := Read(t.Context(), []string{"-"}, ReadOptions{Stdin: bytes.NewReader(data), Keep: testKeep}, sink)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return inputs[0], zero
}

// zeroIDSink is a BatchSink counting the spans it gets with a zero span
// id, on either path.
type zeroIDSink struct{ zero *int }

func (s *zeroIDSink) ConsumeTraces(_ *Input, td ptrace.Traces) error {
	forEachTestSpan(td, func(sp ptrace.Span) {
		if sp.SpanID().IsEmpty() {
			*s.zero++
		}
	})
	return nil
}

func (s *zeroIDSink) ConsumeBatch(_ *Input, b *Batch) error {
	for i := range b.Spans {
		if b.Spans[i].SpanID.IsEmpty() {
			*s.zero++
		}
	}
	return nil
}

// TestFastPathTakesNullElements pins that the projection decoder reads a
// line with null elements itself, as pdata (through unmarshalOTLPJSON)
// reads it, rather than giving the line up to pdata.
func TestFastPathTakesNullElements(t *testing.T) {
	sp := nullSpanJSON(1, "v")
	for name, line := range map[string]string{
		"a null span":     `{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"p"},"spans":[null,` + sp + `]}]}]}`,
		"a null scope":    `{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[null,{"scope":{"name":"p"},"spans":[` + sp + `]}]}]}`,
		"a null resource": `{"resourceSpans":[null,{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"p"},"spans":[` + sp + `]}]}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			if !checkFastMatchesPdata(t, []byte(line)) {
				t.Errorf("the projection decoder gave up on the line")
			}
		})
	}
}
