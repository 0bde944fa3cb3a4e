package ingest

import (
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// latestSpanNanos is the latest span time the reader takes, in Unix
// nanoseconds: the engine and the index hold times as int64 nanoseconds,
// so a later one (OTLP's uint64 allows up to 2^64-1) would wrap to a time
// before 1970, stretching the window back to 1969 and making a latency of
// decades.
const latestSpanNanos = math.MaxInt64

// expectedSpanTimes is what a record whose span times are out of range
// was expected to hold: the range named as a reader can check it.
var expectedSpanTimes = "span times from 1970 to " + time.Unix(0, latestSpanNanos).UTC().Format(time.RFC3339Nano) + " (int64 Unix nanoseconds)"

// refuseFarTimes wraps a format's decoder: a record that decodes with a
// span time past latestSpanNanos is refused whole, as a record with a
// time that does not parse is, with a problem that names the span. It is
// the one place every format's spans pass (the projection decoders' and
// pdata's alike), so no decoder needs its own check.
func refuseFarTimes(path string, decode func(rec) result) func(rec) result {
	return func(r rec) result {
		res := decode(r)
		if res.prob != nil {
			return res
		}
		err := batchTimesInRange(res.batch)
		if res.batch == nil {
			err = tracesTimesInRange(res.td)
		}
		if err == nil {
			return res
		}
		if res.batch != nil {
			putBatch(res.batch)
		}
		return result{held: res.held, prob: &ReadError{Path: path, Line: r.line, Offset: r.off, Expected: expectedSpanTimes, Err: r.placed(err)}}
	}
}

// batchTimesInRange reports the first span of b (nil: none) whose start or
// end is past latestSpanNanos.
func batchTimesInRange(b *Batch) error {
	if b == nil {
		return nil
	}
	for i := range b.Spans {
		sp := &b.Spans[i]
		if err := spanTimesInRange(sp.SpanID, sp.Start, sp.End); err != nil {
			return err
		}
	}
	return nil
}

// tracesTimesInRange is batchTimesInRange for pdata's traces.
func tracesTimesInRange(td ptrace.Traces) error {
	if td.SpanCount() == 0 {
		return nil
	}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if err := spanTimesInRange(sp.SpanID(), uint64(sp.StartTimestamp()), uint64(sp.EndTimestamp())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// spanTimesInRange says which of a span's times is past latestSpanNanos,
// naming the span by its id (ids are not attribute values: no secret).
func spanTimesInRange(id [8]byte, start, end uint64) error {
	which, v := "start", start
	if start <= latestSpanNanos {
		if end <= latestSpanNanos {
			return nil
		}
		which, v = "end", end
	}
	return fmt.Errorf("span %s: its %s time, %d ns since 1970, is past that range: the exporter wrote a broken timestamp", hex.EncodeToString(id[:]), which, v)
}

// microsToNanos turns a time in Unix microseconds (Jaeger's) into
// nanoseconds, or an error when it is before 1970 or past latestSpanNanos
// (what the multiplication would otherwise wrap). field names the time.
func microsToNanos(field string, us int64) (uint64, error) {
	if us < 0 || us > latestSpanNanos/1000 {
		return 0, fmt.Errorf("%s is outside %s: the exporter wrote a broken timestamp", field, expectedSpanTimes)
	}
	return uint64(us) * 1000, nil
}
