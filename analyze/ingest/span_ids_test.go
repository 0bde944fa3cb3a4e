package ingest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// idOTLPLine is an OTLP JSON line of one span (span id id) whose traceId
// member is tid as written (nil: no traceId member).
func idOTLPLine(id int, tid *string) string {
	member := ""
	if tid != nil {
		member = fmt.Sprintf(`"traceId":%q,`, *tid)
	}
	return fmt.Sprintf(`{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"p"},"spans":[`+
		`{%s"spanId":"%016x","name":"plugin.mcp.invoke","kind":1,"startTimeUnixNano":"1777539654000000000","endTimeUnixNano":"1777539654000000001"}]}]}]}`, member, id)
}

// idProtoRecord is a length-prefixed OTLP protobuf record of one span of
// trace id n (0: the all-zero id, which the wire leaves out).
func idProtoRecord(t *testing.T, id int, n uint64) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(rtTraceID(n))
	sp.SetSpanID(rtSpanID(uint64(id)))
	sp.SetName("plugin.mcp.invoke")
	sp.SetStartTimestamp(1777539654000000000)
	sp.SetEndTimestamp(1777539654000000001)
	return bytes.Join(protoRecords(t, td), nil)
}

// idJaegerTrace is a Jaeger trace of one span whose traceID is tid.
func idJaegerTrace(id int, tid string) string {
	return fmt.Sprintf(`{"traceID":%q,"processes":{"p1":{"serviceName":"svc","tags":[]}},"spans":[`+
		`{"traceID":%q,"spanID":"%x","operationName":"plugin.mcp.invoke","references":[],"startTime":1777539654000000,"duration":1,"processID":"p1","tags":[]}]}`, tid, tid, id)
}

// idTempoBatch is a Tempo ResourceSpans of one span whose traceId is tid.
func idTempoBatch(id int, tid string) string {
	return fmt.Sprintf(`{"resource":{"attributes":[]},"scopeSpans":[{"spans":[`+
		`{"traceId":%q,"spanId":"%016x","name":"plugin.mcp.invoke","kind":"SPAN_KIND_INTERNAL","startTimeUnixNano":"1777539654000000000","endTimeUnixNano":"1777539654000000001"}]}]}`, tid, id)
}

// TestSpansWithAnInvalidTraceIDAreLeftOutWithOneWarning pins the one rule
// on trace ids every format's spans pass: a span whose trace id is all
// zeros (W3C Trace Context and OTLP's invalid id), empty, missing, or
// Jaeger's "0" is left out, never merged with the others into one trace;
// the input is partial and one warning counts them and names the first.
// The id one above zero reads. Each input holds a good span of trace 1,
// then two spans of the id tested; the projection decoders (a BatchSink)
// and pdata (a plain Sink) alike.
func TestSpansWithAnInvalidTraceIDAreLeftOutWithOneWarning(t *testing.T) {
	const one, zero = "00000000000000000000000000000001", "00000000000000000000000000000000"
	str := func(s string) *string { return &s }
	otlp := func(tid *string) []byte {
		return []byte(idOTLPLine(1, str(one)) + "\n" + idOTLPLine(2, tid) + "\n" + idOTLPLine(3, tid) + "\n")
	}
	proto := func(n uint64) []byte {
		return bytes.Join([][]byte{idProtoRecord(t, 1, 1), idProtoRecord(t, 2, n), idProtoRecord(t, 3, n)}, nil)
	}
	jaeger := func(tid string) []byte {
		return []byte(`{"data":[` + idJaegerTrace(1, "1") + "," + idJaegerTrace(2, tid) + "," + idJaegerTrace(3, tid) + `]}`)
	}
	tempo := func(tid string) []byte {
		return []byte(`{"batches":[` + idTempoBatch(1, one) + "," + idTempoBatch(2, tid) + "," + idTempoBatch(3, tid) + `]}`)
	}
	cases := []struct {
		name string
		data []byte
		left bool // the two spans are left out
	}{
		{"otlp json: the id one above zero", otlp(str(one)), false},
		{"otlp json: all zeros", otlp(str(zero)), true},
		{"otlp json: empty", otlp(str("")), true},
		{"otlp json: no traceId", otlp(nil), true},
		{"protobuf: the id one above zero", proto(1), false},
		{"protobuf: all zeros (left off the wire)", proto(0), true},
		{"jaeger: 1", jaeger("1"), false},
		{"jaeger: 0", jaeger("0"), true},
		{"jaeger: all zeros", jaeger(zero), true},
		{"tempo: the id one above zero", tempo(one), false},
		{"tempo: all zeros", tempo(zero), true},
		{"tempo: base64 of all zeros", tempo("AAAAAAAAAAAAAAAAAAAAAA=="), true},
		{"tempo: empty", tempo(""), true},
	}
	for _, tc := range cases {
		for _, sink := range []string{"pdata", "batches"} {
			t.Run(tc.name+"/"+sink, func(t *testing.T) {
				in := readTimes(t, tc.data, sink == "batches")
				if !tc.left {
					if in.Spans != 3 || in.Partial || len(in.Warnings) != 0 {
						t.Errorf("read %d spans (partial %v, warnings %q), want 3, whole", in.Spans, in.Partial, in.Warnings)
					}
					return
				}
				if in.Spans != 1 || !in.Partial || len(in.Warnings) != 1 {
					t.Fatalf("read %d spans (partial %v, warnings %q), want the good 1, partial, one warning", in.Spans, in.Partial, in.Warnings)
				}
				for _, want := range []string{"span 0000000000000002 has an all-zero or empty trace id", "spans left out for an invalid trace id in this input: 2"} {
					if !strings.Contains(in.Warnings[0], want) {
						t.Errorf("warning %q does not say %q", in.Warnings[0], want)
					}
				}
			})
		}
	}
}

// TestAnInputOfOnlyInvalidTraceIDsIsAnError pins the two refusals: strict
// mode refuses the first span with an invalid trace id, and an input whose
// every span has one read nothing usable: both are the read's error,
// naming the cause, as a record that cannot be read is.
func TestAnInputOfOnlyInvalidTraceIDsIsAnError(t *testing.T) {
	const one, zero = "00000000000000000000000000000001", "00000000000000000000000000000000"
	for _, tc := range []struct {
		name   string
		data   string
		strict bool
	}{
		{"strict, one invalid among good", idOTLPLine(1, new(string(one))) + "\n" + idOTLPLine(2, new(string(zero))) + "\n", true},
		{"every span invalid", idOTLPLine(1, new(string(zero))) + "\n" + idOTLPLine(2, new(string(zero))) + "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(t.Context(), []string{"-"}, ReadOptions{Stdin: strings.NewReader(tc.data), Keep: testKeep, Strict: tc.strict}, &batchSink{})
			if err == nil || !strings.Contains(err.Error(), "expected "+expectedTraceID) {
				t.Errorf("read: %v, want the invalid trace id named", err)
			}
		})
	}
}
