package ingest

import (
	"encoding/hex"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// expectedTraceID is what a span whose trace id is invalid was expected to
// hold.
const expectedTraceID = "a valid trace id on every span (not all zeros)"

// noTraceIDs counts the spans of one record left out for an invalid trace
// id; first places the first of them (nil: none).
type noTraceIDs struct {
	n     int
	first *ReadError
}

// dropInvalidTraceIDs wraps a format's decoder: a span whose trace id is
// invalid is taken out of the decoded record and counted in its result.
// W3C Trace Context and OTLP define the all-zero id as invalid, and every
// reader decodes an empty id (or Jaeger's "0") to it: such an id says
// nothing about which spans belong together, and taking it as one trace
// would merge unrelated executions into one. It is the one place every
// format's spans pass (the projection decoders' and pdata's alike), as
// refuseFarTimes is.
func dropInvalidTraceIDs(path string, decode func(rec) result) func(rec) result {
	return func(r rec) result {
		res := decode(r)
		if res.prob != nil {
			return res
		}
		var first pcommon.SpanID
		if res.batch != nil {
			res.noTrace.n, first = dropBatchInvalid(res.batch)
		} else if res.td.SpanCount() > 0 {
			res.noTrace.n, first = dropTracesInvalid(res.td)
		}
		if res.noTrace.n > 0 {
			res.noTrace.first = &ReadError{Path: path, Line: r.line, Offset: r.off, Expected: expectedTraceID,
				Err: r.placed(fmt.Errorf("span %s has an all-zero or empty trace id, which W3C Trace Context and OTLP define as invalid: it cannot say which spans belong together, so the span is left out; the exporter must write the span's real trace id", hex.EncodeToString(first[:])))}
		}
		return res
	}
}

// dropBatchInvalid removes the spans of b with an invalid trace id,
// keeping the others in order, and returns how many it removed and the
// span id of the first. Their attributes stay in b.Attrs, unreferenced.
func dropBatchInvalid(b *Batch) (n int, first pcommon.SpanID) {
	k := 0
	for i := range b.Spans {
		if b.Spans[i].TraceID.IsEmpty() {
			if n == 0 {
				first = b.Spans[i].SpanID
			}
			n++
			continue
		}
		if k != i {
			b.Spans[k] = b.Spans[i]
		}
		k++
	}
	if n > 0 {
		clear(b.Spans[k:])
		b.Spans = b.Spans[:k]
	}
	return n, first
}

// dropTracesInvalid is dropBatchInvalid for pdata's traces.
func dropTracesInvalid(td ptrace.Traces) (n int, first pcommon.SpanID) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				if !sp.TraceID().IsEmpty() {
					return false
				}
				if n == 0 {
					first = sp.SpanID()
				}
				n++
				return true
			})
		}
	}
	return n, first
}

// noteNoTrace counts the spans left out for an invalid trace id in the
// input's one warning about them, which places the first: a dump of a
// million such spans gets one line. The input is partial (spans were left
// out), and with nothing else read the first is the input's error, as a
// record that could not be read is; strict mode refuses the first.
func (st *fileState) noteNoTrace(c noTraceIDs) error {
	if c.first == nil {
		return nil
	}
	if st.strict {
		return c.first
	}
	if st.noTraces == 0 {
		st.noTraceWarning, st.noTraceAt = len(st.in.Warnings), c.first.Error()
		st.in.Warnings = append(st.in.Warnings, "")
		if st.first == nil {
			st.first = c.first
		}
	}
	st.noTraces += c.n
	st.in.Partial = true
	st.in.Warnings[st.noTraceWarning] = fmt.Sprintf("%s (spans left out for an invalid trace id in this input: %d)", st.noTraceAt, st.noTraces)
	return nil
}
