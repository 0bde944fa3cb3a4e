package tracegen

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// Shape of the benchmark workload.
const (
	benchScopes        = 64  // pool scopes (service.instance.id)
	benchKeysPerScope  = 4   // cache keys per scope
	benchExecsPerBatch = 128 // executions per exported batch (one line or record)
	benchTTLEvery      = 40  // every 40th use of a pair is a ttl miss
	// benchIdleGap is the pause before the executions that hold the ttl
	// misses: longer than the pool's default idle TTL of 5 minutes, so
	// every session is idle past it when its pair is next used.
	benchIdleGap = 6 * time.Minute
)

// BenchBatches generates a workload of at least spans spans in the pool's
// default vocabulary and hands it to fn batch by batch, each batch one
// export request as a Collector would write it (about 900 spans, one
// resource per pool scope touched). Executions are traces with an
// executor.execute root and two invocations; each (scope, key) pair starts
// with a cold miss, then hits, with a ttl miss every 40th use, after a
// pause of [benchIdleGap] in which every session outlives the idle TTL. The
// workload is deterministic. fn owns each batch. BenchBatches returns the number of
// spans generated, or fn's first error.
func BenchBatches(spanCount int, fn func(ptrace.Traces) error) (int, error) {
	g := newGen(1_000_003)
	type pair struct {
		session string
		uses    int
	}
	pairs := make([]pair, benchScopes*benchKeysPerScope)
	keys := make([]string, len(pairs))
	for i := range keys {
		keys[i] = cacheKey(fmt.Sprintf("remote:bench-%d:https://%s/mcp/%d", i/benchKeysPerScope, serverAddress, i%benchKeysPerScope))
	}
	total := 0
	exec := 0
	for total < spanCount {
		g.td = ptrace.NewTraces()
		g.resources = map[string]ptrace.SpanSlice{}
		for range benchExecsPerBatch {
			p := exec % len(pairs)
			scope := p / benchKeysPerScope
			ss := g.spansOf(gatewayService, fmt.Sprintf("bench-do-%03d", scope))
			start := BaseTime.Add(time.Duration(exec)*50*time.Millisecond + time.Duration(exec/benchTTLRound)*benchIdleGap)
			tid := benchTraceID(exec)
			root := g.root(ss, tid, executionRootName, start)
			c := start.Add(200 * time.Microsecond)
			for i := range 2 {
				pr := &pairs[p]
				at := attempt{hit: true, session: pr.session}
				switch {
				case pr.uses == 0:
					pr.session = g.sessionID()
					at = attempt{session: pr.session, missReason: spans.MissCold}
				case pr.uses%benchTTLEvery == 0:
					pr.session = g.sessionID()
					at = attempt{session: pr.session, missReason: spans.MissTTL}
				}
				pr.uses++
				c = g.invoke(ss, tid, root.SpanID(), c, invocation{toolAt(i), keys[p], []attempt{at}})
			}
			setEnd(root, c)
			exec++
		}
		n := g.td.SpanCount()
		total += n
		if err := fn(g.td); err != nil {
			return total, err
		}
	}
	return total, nil
}

// benchTTLRound is how many executions pass between the rounds of ttl
// misses: each execution uses its pair twice, and the pairs take turns, so
// a pair's use count reaches the next multiple of benchTTLEvery once every
// benchTTLRound executions.
const benchTTLRound = benchScopes * benchKeysPerScope * benchTTLEvery / 2

// benchTraceID makes trace ids unique by construction (a counter) so that
// a million-span dump has no accidental duplicates.
func benchTraceID(exec int) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], 0x6d63707472616365)
	binary.BigEndian.PutUint64(id[8:], uint64(exec)+1)
	return id
}

// WriteBench writes a benchmark dump of at least spanCount spans to w in the
// named encoding (otlp-jsonl or otlp-proto: the streaming formats), one batch
// of [BenchBatches] per line or record as a Collector's batch processor and
// file exporter would write it, and returns the number of spans written.
func WriteBench(w io.Writer, encoding string, spanCount int) (int, error) {
	var record func(ptrace.Traces) ([]byte, error)
	switch encoding {
	case "otlp-jsonl":
		var m ptrace.JSONMarshaler
		record = func(td ptrace.Traces) ([]byte, error) {
			buf, err := m.MarshalTraces(td)
			return append(buf, '\n'), err
		}
	case "otlp-proto":
		var m ptrace.ProtoMarshaler
		record = func(td ptrace.Traces) ([]byte, error) {
			buf, err := m.MarshalTraces(td)
			if err != nil {
				return nil, err
			}
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], uint32(len(buf)))
			return append(hdr[:], buf...), nil
		}
	default:
		return 0, fmt.Errorf("benchmark encoding %q: expected otlp-jsonl or otlp-proto", encoding)
	}
	return BenchBatches(spanCount, func(td ptrace.Traces) error {
		buf, err := record(td)
		if err != nil {
			return fmt.Errorf("marshal benchmark batch: %w", err)
		}
		_, err = w.Write(buf)
		return err
	})
}
