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

// checkSpans wraps a format's decoder with the checks every span gets,
// in one pass over the decoded spans. It is the one place every format's
// spans pass (the projection decoders' and pdata's alike), so no decoder
// needs its own:
//   - a span whose trace id is invalid is taken out of the record and
//     counted in its result. W3C Trace Context and OTLP define the
//     all-zero id as invalid, and every reader decodes an empty id (or
//     Jaeger's "0") to it: such an id says nothing about which spans
//     belong together, and taking it as one trace would merge unrelated
//     executions into one;
//   - a record with a span time past latestSpanNanos is refused whole, as
//     a record with a time that does not parse is, with a problem that
//     names the span.
func checkSpans(path string, decode func(rec) result) func(rec) result {
	return func(r rec) result {
		res := decode(r)
		if res.prob != nil {
			return res
		}
		var first pcommon.SpanID
		var err error
		if res.batch != nil {
			res.noTrace.n, first, err = checkBatch(res.batch)
		} else if res.td.SpanCount() > 0 {
			res.noTrace.n, first, err = checkTraces(res.td)
		}
		if err != nil {
			if res.batch != nil {
				putBatch(res.batch)
			}
			return result{held: res.held, prob: &ReadError{Path: path, Line: r.line, Offset: r.off, Expected: expectedSpanTimes, Err: r.placed(err)}}
		}
		if res.noTrace.n > 0 {
			res.noTrace.first = &ReadError{Path: path, Line: r.line, Offset: r.off, Expected: expectedTraceID,
				Err: r.placed(invalidTraceID{span: first})}
		}
		return res
	}
}

// invalidTraceID is the cause of the first span of a record left out for
// an invalid trace id: it reads as ErrInvalidTraceID (errors.Is), so a
// caller reading pages of one input (a backend query) can tell it from
// damage, and says which span and what the exporter must do.
type invalidTraceID struct{ span pcommon.SpanID }

func (e invalidTraceID) Error() string {
	return fmt.Sprintf("span %s has an all-zero or empty trace id, which W3C Trace Context and OTLP define as invalid: it cannot say which spans belong together, so the span is left out; the exporter must write the span's real trace id", hex.EncodeToString(e.span[:]))
}

// Is makes the cause ErrInvalidTraceID for errors.Is.
func (invalidTraceID) Is(target error) bool { return target == ErrInvalidTraceID }

// checkBatch removes the spans of b with an invalid trace id, keeping the
// others in order, and returns how many it removed and the span id of the
// first, or the error of the first kept span with a time out of range.
// The removed spans' attributes stay in b.Attrs, unreferenced.
func checkBatch(b *Batch) (n int, first pcommon.SpanID, err error) {
	k := 0
	for i := range b.Spans {
		sp := &b.Spans[i]
		if sp.TraceID.IsEmpty() {
			if n == 0 {
				first = sp.SpanID
			}
			n++
			continue
		}
		if err := spanTimesInRange(sp.SpanID, sp.Start, sp.End); err != nil {
			return 0, first, err
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
	return n, first, nil
}

// checkTraces is checkBatch for pdata's traces.
func checkTraces(td ptrace.Traces) (n int, first pcommon.SpanID, err error) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				if err != nil {
					return false
				}
				if sp.TraceID().IsEmpty() {
					if n == 0 {
						first = sp.SpanID()
					}
					n++
					return true
				}
				err = spanTimesInRange(sp.SpanID(), uint64(sp.StartTimestamp()), uint64(sp.EndTimestamp()))
				return false
			})
			if err != nil {
				return 0, first, err
			}
		}
	}
	return n, first, nil
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
	if st.noTrace.n == 0 && st.first == nil {
		st.first = c.first
	}
	st.in.Partial = true
	st.noTrace.add(st.in, c.first.Error(), c.n, func(at string, n int) string {
		return fmt.Sprintf("%s (spans left out for an invalid trace id in this input: %d)", at, n)
	})
	return nil
}
