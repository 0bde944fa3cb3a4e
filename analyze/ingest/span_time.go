package ingest

import (
	"encoding/hex"
	"fmt"
	"math"
	"time"
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
