package mcptraceconnector

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/mcptrace/mcptrace/spans"
)

// TestEachCounterNamesWhatItCounts pins the curly-brace unit of every
// counter the traces legs emit (what a dashboard's axis reads) and that
// every point starts when the leg did.
func TestEachCounterNamesWhatItCounts(t *testing.T) {
	start := time.Unix(1000, 0)
	a := newAggregates(start)
	a.add(traceOutcome{
		Acquires:   []acquireCount{{PoolID: "p", CacheHit: true, N: 1}},
		Handshakes: []poolCount{{PoolID: "p", N: 1}},
		Executions: []executionCount{{PoolID: "p", N: 1}},
		Violations: []ruleViolation{{RuleID: "r", Severity: "error"}},
	})
	md := a.metrics(&bufferCounts{}, pcommon.NewTimestampFromTime(start.Add(time.Minute)))
	want := map[string]string{
		MetricTracesFinalized: "{trace}",
		MetricTracesCut:       "{trace}",
		MetricTracesLateSpans: "{span}",
		MetricAcquires:        "{acquire}",
		MetricHandshakes:      "{handshake}",
		MetricExecutions:      "{execution}",
		MetricRuleViolations:  "{violation}",
	}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	if ms.Len() != len(want) {
		t.Fatalf("%d metrics, want %d", ms.Len(), len(want))
	}
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		if m.Unit() != want[m.Name()] {
			t.Errorf("%s unit = %q, want %q", m.Name(), m.Unit(), want[m.Name()])
		}
		dps := m.Sum().DataPoints()
		for j := 0; j < dps.Len(); j++ {
			if got := dps.At(j).StartTimestamp().AsTime(); !got.Equal(start) {
				t.Errorf("%s point %d starts at %v, want the leg's start %v", m.Name(), j, got, start)
			}
		}
	}
}

// TestAcquireSeriesAreSortedAndNameACauseOnlyOnAMiss pins the order of
// the acquire series (pool, then misses before hits, then cause), so that
// one state always renders the same, and that the miss cause attribute is
// on a miss with a cause only: never on a hit, even one handed a cause,
// and not as an empty string.
func TestAcquireSeriesAreSortedAndNameACauseOnlyOnAMiss(t *testing.T) {
	a := newAggregates(time.Unix(0, 0))
	a.add(traceOutcome{Acquires: []acquireCount{
		{PoolID: "q", CacheHit: true, N: 1},
		{PoolID: "p", CacheHit: true, MissCause: "ttl", N: 2},
		{PoolID: "p", CacheHit: false, MissCause: "ttl", N: 3},
		{PoolID: "p", CacheHit: false, N: 4},
		{PoolID: "p", CacheHit: false, MissCause: "cold", N: 5},
	}})
	a.add(traceOutcome{Executions: []executionCount{
		{PoolID: "p", MultiSession: true, N: 6},
		{PoolID: "p", MultiSession: false, N: 7},
	}})
	md := a.metrics(nil, 0)
	got := map[string][]map[string]any{}
	var values []int64
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		dps := ms.At(i).Sum().DataPoints()
		for j := 0; j < dps.Len(); j++ {
			got[ms.At(i).Name()] = append(got[ms.At(i).Name()], dps.At(j).Attributes().AsRaw())
			values = append(values, dps.At(j).IntValue())
		}
	}
	want := []map[string]any{
		{AttrPoolID: "p", AttrCacheHit: false},
		{AttrPoolID: "p", AttrCacheHit: false, AttrMissCause: "cold"},
		{AttrPoolID: "p", AttrCacheHit: false, AttrMissCause: "ttl"},
		{AttrPoolID: "p", AttrCacheHit: true},
		{AttrPoolID: "q", AttrCacheHit: true},
	}
	if len(got[MetricAcquires]) != len(want) {
		t.Fatalf("acquire series %v, want %v", got[MetricAcquires], want)
	}
	for i := range want {
		if !equalAttrs(got[MetricAcquires][i], want[i]) {
			t.Errorf("acquire series %d = %v, want %v", i, got[MetricAcquires][i], want[i])
		}
	}
	wantExec := []map[string]any{{AttrPoolID: "p", AttrMultiSession: false}, {AttrPoolID: "p", AttrMultiSession: true}}
	if len(got[MetricExecutions]) != 2 || !equalAttrs(got[MetricExecutions][0], wantExec[0]) || !equalAttrs(got[MetricExecutions][1], wantExec[1]) {
		t.Errorf("execution series %v, want %v", got[MetricExecutions], wantExec)
	}
	if wantValues := []int64{4, 5, 3, 2, 1, 7, 6}; !equalInts(values, wantValues) {
		t.Errorf("point values %v, want %v", values, wantValues)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAViolationRecordIsAsSevereAsItsRule pins the log severity of a
// violation record: an error rule's is ERROR, a warning rule's WARN; and
// every record says when it was observed.
func TestAViolationRecordIsAsSevereAsItsRule(t *testing.T) {
	for _, tc := range []struct {
		severity string
		want     plog.SeverityNumber
	}{
		{"error", plog.SeverityNumberError},
		{"warning", plog.SeverityNumberWarn},
	} {
		t.Run(tc.severity, func(t *testing.T) {
			ld := violationLogs([]ruleViolation{{RuleID: "r", Severity: tc.severity, Finding: "f"}})
			lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			if lr.SeverityNumber() != tc.want || lr.SeverityText() != tc.severity {
				t.Errorf("severity %v %q, want %v %q", lr.SeverityNumber(), lr.SeverityText(), tc.want, tc.severity)
			}
			if lr.ObservedTimestamp() == 0 {
				t.Error("no observed timestamp")
			}
		})
	}
}

// TestAViolationNamesItsSpanOnlyByAWholeHexID pins how the engine's ids
// are read onto a violation record: exactly 32 hex digits for a trace and
// 16 for a span; anything else (empty, short, long, not hex) leaves the
// id unset rather than half-filled.
func TestAViolationNamesItsSpanOnlyByAWholeHexID(t *testing.T) {
	const trace = "0102030405060708090a0b0c0d0e0f10"
	const span = "1112131415161718"
	if id, ok := parseTraceID(trace); !ok || id != (pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}) {
		t.Errorf("parseTraceID(%q) = %v, %v", trace, id, ok)
	}
	if id, ok := parseSpanID(span); !ok || id != (pcommon.SpanID{0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}) {
		t.Errorf("parseSpanID(%q) = %v, %v", span, id, ok)
	}
	for _, bad := range []string{"", trace[:30], trace + "11", "zz" + trace[2:], span} {
		if _, ok := parseTraceID(bad); ok {
			t.Errorf("parseTraceID(%q) ok, want refused", bad)
		}
	}
	for _, bad := range []string{"", span[:14], span + "11", "zz" + span[2:], trace} {
		if _, ok := parseSpanID(bad); ok {
			t.Errorf("parseSpanID(%q) ok, want refused", bad)
		}
	}
}

// TestAnAcquireRecordReadsFromTimeZeroButNotPastInt64 pins the range of
// an acquire record's timestamp: 0 (an acquire pairLogs clamped) reads;
// one past the largest int64 of nanoseconds is refused by name, not read
// as a negative start.
func TestAnAcquireRecordReadsFromTimeZeroButNotPastInt64(t *testing.T) {
	ld := pairRecord(1, -5, 1, false) // pairLogs clamps a negative start to 0
	evs, err := ReadAcquireRecords(ld)
	if err != nil || len(evs) != 1 || evs[0].Start != 0 {
		t.Fatalf("a record at time 0 read as %+v, %v; want one acquire starting at 0", evs, err)
	}
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).SetTimestamp(pcommon.Timestamp(uint64(math.MaxInt64) + 1))
	evs, err = ReadAcquireRecords(ld)
	if err == nil || len(evs) != 0 {
		t.Fatalf("a record past int64 read as %+v, %v; want it refused", evs, err)
	}
}

// TestAPairDeliveryIsDueExactlyPairWaitAfterItArrived pins the pairs
// leg's hold: a sweep pair_wait after a delivery arrived attributes it; a
// sweep a nanosecond earlier still holds it.
func TestAPairDeliveryIsDueExactlyPairWaitAfterItArrived(t *testing.T) {
	for _, tc := range []struct {
		name     string
		after    time.Duration
		wantHeld int64
	}{
		{"a nanosecond before pair_wait", 10*time.Second - 1, 1},
		{"exactly pair_wait", 10 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				leg, sink := testPairsLeg(t, 10*time.Second, zap.NewNop())
				must(t, leg.ConsumeLogs(ctx, pairRecord(1, 100, 101, false)))
				must(t, leg.sweep(ctx, time.Now().Add(tc.after), false))
				if p := pendingGauge(t, sink); p != tc.wantHeld {
					t.Errorf("pending gauge = %d, want %d", p, tc.wantHeld)
				}
				v, _ := counterValue(t, sink, MetricAcquires, map[string]any{AttrPoolID: "p", AttrCacheHit: false, AttrMissCause: spans.MissCold})
				if v != 1-tc.wantHeld {
					t.Errorf("cold misses = %d, want %d", v, 1-tc.wantHeld)
				}
			})
		})
	}
}
