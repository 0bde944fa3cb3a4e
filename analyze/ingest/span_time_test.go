package ingest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The largest span time the reader takes, and the first one past it, as
// decimal text (2^63-1 and 2^63 nanoseconds; 2^64-1 is OTLP's last).
const (
	lastNanos  = "9223372036854775807"
	pastNanos  = "9223372036854775808"
	lastUint64 = "18446744073709551615"
	// Jaeger's microseconds: the last that fits int64 nanoseconds, and one more.
	lastMicros = "9223372036854775"
	pastMicros = "9223372036854776"
)

// timeOTLPLine is an OTLP JSON line of one span (span id id) with the
// given start and end, written as JSON strings.
func timeOTLPLine(id int, start, end string) string {
	return fmt.Sprintf(`{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"p"},"spans":[`+
		`{"traceId":"00000000000000000000000000000001","spanId":"%016x","name":"plugin.mcp.invoke","kind":1,"startTimeUnixNano":"%s","endTimeUnixNano":"%s"}]}]}]}`, id, start, end)
}

// timeProtoRecord is a length-prefixed OTLP protobuf record of one span
// with the given times (fixed64 on the wire).
func timeProtoRecord(t *testing.T, id int, start, end string) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(rtTraceID(1))
	sp.SetSpanID(rtSpanID(uint64(id)))
	sp.SetName("plugin.mcp.invoke")
	for _, f := range []struct {
		s   string
		set func(pcommon.Timestamp)
	}{{start, sp.SetStartTimestamp}, {end, sp.SetEndTimestamp}} {
		v, err := strconv.ParseUint(f.s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		f.set(pcommon.Timestamp(v))
	}
	return bytes.Join(protoRecords(t, td), nil)
}

// timeJaegerTrace is a Jaeger trace of one span with the given startTime
// and duration (JSON numbers, in microseconds).
func timeJaegerTrace(id int, start, dur string) string {
	return fmt.Sprintf(`{"traceID":"1","processes":{"p1":{"serviceName":"svc","tags":[]}},"spans":[`+
		`{"traceID":"1","spanID":"%x","operationName":"plugin.mcp.invoke","references":[],"startTime":%s,"duration":%s,"processID":"p1","tags":[]}]}`, id, start, dur)
}

// timeTempoBatch is a Tempo ResourceSpans of one span with the given times.
func timeTempoBatch(id int, start, end string) string {
	return fmt.Sprintf(`{"resource":{"attributes":[]},"scopeSpans":[{"spans":[`+
		`{"traceId":"00000000000000000000000000000001","spanId":"%016x","name":"plugin.mcp.invoke","kind":"SPAN_KIND_INTERNAL","startTimeUnixNano":"%s","endTimeUnixNano":"%s"}]}]}`, id, start, end)
}

// TestSpanTimesPastInt64NanosecondsAreRefused pins the one range every
// format's span times must lie in, int64 Unix nanoseconds: a record with
// a time exactly at its end reads, one a nanosecond (or Jaeger
// microsecond) past it, or one before 1970 in Jaeger, is refused whole
// with a warning naming the cause, rather than read as a time that wraps
// to 1969 (or 1680, or 1970). Each input holds a good record, then the one
// tested; the projection decoders (a BatchSink) and pdata (a plain Sink)
// alike.
func TestSpanTimesPastInt64NanosecondsAreRefused(t *testing.T) {
	const good = "1777539654000000000"
	otlp := func(start, end string) []byte {
		return []byte(timeOTLPLine(1, good, good) + "\n" + timeOTLPLine(2, start, end) + "\n")
	}
	proto := func(start, end string) []byte {
		return append(timeProtoRecord(t, 1, good, good), timeProtoRecord(t, 2, start, end)...)
	}
	jaeger := func(start, dur string) []byte {
		return []byte(`{"data":[` + timeJaegerTrace(1, "1777539654000000", "1") + "," + timeJaegerTrace(2, start, dur) + `]}`)
	}
	tempo := func(start, end string) []byte {
		return []byte(`{"batches":[` + timeTempoBatch(1, good, good) + "," + timeTempoBatch(2, start, end) + `]}`)
	}
	cases := []struct {
		name    string
		data    []byte
		refused string // "" when the record reads; else what the warning says
	}{
		{"otlp json: start at the last nanosecond", otlp(lastNanos, lastNanos), ""},
		{"otlp json: start one past", otlp(pastNanos, pastNanos), "its start time, " + pastNanos},
		{"otlp json: start at uint64's last", otlp(lastUint64, good), "its start time, " + lastUint64},
		{"otlp json: end one past", otlp(good, pastNanos), "its end time, " + pastNanos},
		{"protobuf: start at the last nanosecond", proto(lastNanos, lastNanos), ""},
		{"protobuf: start one past", proto(pastNanos, pastNanos), "its start time, " + pastNanos},
		{"protobuf: end at uint64's last", proto(good, lastUint64), "its end time, " + lastUint64},
		{"tempo: start at the last nanosecond", tempo(lastNanos, lastNanos), ""},
		{"tempo: start one past", tempo(pastNanos, good), "its start time, " + pastNanos},
		{"jaeger: start at the last microsecond", jaeger(lastMicros, "0"), ""},
		{"jaeger: start one past", jaeger(pastMicros, "0"), "startTime is outside"},
		{"jaeger: start past uint64", jaeger("18446744073709551616", "0"), "startTime is outside"},
		{"jaeger: start as a float past int64", jaeger("1e30", "0"), "startTime is outside"},
		{"jaeger: start before 1970", jaeger("-1", "0"), "startTime is outside"},
		{"jaeger: end at the last microsecond", jaeger("1", "9223372036854774"), ""},
		{"jaeger: end one past", jaeger("1", lastMicros), "startTime + duration is outside"},
		{"jaeger: duration of int64's last", jaeger("1777539654000001", "9223372036854775807"), "startTime + duration is outside"},
	}
	for _, tc := range cases {
		for _, sink := range []string{"pdata", "batches"} {
			t.Run(tc.name+"/"+sink, func(t *testing.T) {
				in := readTimes(t, tc.data, sink == "batches")
				checkTimeVerdict(t, in, tc.refused)
			})
		}
	}
}

// readTimes reads data (non-strict) into a plain Sink or a BatchSink and
// returns its one input.
func readTimes(t *testing.T, data []byte, batches bool) Input {
	t.Helper()
	var sink Sink = SinkFunc(func(*Input, ptrace.Traces) error { return nil })
	if batches {
		sink = &batchSink{}
	}
	inputs, err := Read(t.Context(), []string{"-"}, ReadOptions{Stdin: bytes.NewReader(data), Keep: testKeep}, sink)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return inputs[0]
}

// checkTimeVerdict checks that in read both spans (refused "") or the
// first only, with one warning saying refused.
func checkTimeVerdict(t *testing.T, in Input, refused string) {
	t.Helper()
	if refused == "" {
		if in.Spans != 2 || in.Partial || len(in.Warnings) != 0 {
			t.Errorf("read %d spans (partial %v, warnings %q), want 2, whole", in.Spans, in.Partial, in.Warnings)
		}
		return
	}
	if in.Spans != 1 || !in.Partial || len(in.Warnings) != 1 {
		t.Fatalf("read %d spans (partial %v, warnings %q), want the first 1, partial, one warning", in.Spans, in.Partial, in.Warnings)
	}
	if w := in.Warnings[0]; !strings.Contains(w, refused) || !strings.Contains(w, "2262-04-11T23:47:16.854775807Z") {
		t.Errorf("warning %q does not say %q and name the range", w, refused)
	}
}
