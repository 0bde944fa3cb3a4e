package mcptraceconnector

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/collector/mcptraceconnector/internal/metadata"
	"github.com/mcptrace/mcptrace/spans"
)

// Names of the acquire records (attribution: forward), spelled once in the
// vocabulary.
const (
	// EventAcquire is the event name of an acquire record.
	EventAcquire = spans.ConnectorEventAcquire
	// AttrPairScope and AttrPairKey name the acquire's (scope, key) pair:
	// route acquire records by the scope (the loadbalancing exporter's
	// routing_key: attributes), whose keys share its idle caps.
	AttrPairScope = spans.AttrPairScope
	AttrPairKey   = spans.AttrPairKey
)

// pairLogs renders forwarded acquires as log records: event EventAcquire,
// the acquire's trace and span ids, its start as the timestamp, its pair
// and facts as attributes. The cache key travels as the span carried it
// (the pool's keys are not secrets); no metric ever carries it.
func pairLogs(evs []analyze.PairEvent) plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	now := pcommon.NewTimestampFromTime(time.Now())
	recs := sl.LogRecords()
	recs.EnsureCapacity(len(evs))
	for i := range evs {
		ev := &evs[i]
		lr := recs.AppendEmpty()
		lr.SetEventName(EventAcquire)
		lr.SetObservedTimestamp(now)
		lr.SetTimestamp(pcommon.Timestamp(max(ev.Start, 0)))
		lr.SetTraceID(ev.TraceID)
		lr.SetSpanID(ev.SpanID)
		at := lr.Attributes()
		at.EnsureCapacity(8)
		if ev.HasScope {
			at.PutStr(AttrPairScope, ev.Scope)
		}
		if ev.HasKey {
			at.PutStr(AttrPairKey, ev.Key)
		}
		if ev.HasSession {
			at.PutStr(spans.AttrPairSession, ev.Session)
		}
		at.PutInt(spans.AttrPairLeaseEnd, ev.LeaseEnd)
		at.PutBool(spans.AttrPairHit, ev.Hit)
		at.PutBool(spans.AttrPairRedial, ev.Redial)
		at.PutBool(spans.AttrPairFailed, ev.Failed)
		at.PutBool(spans.AttrPairHealthCheck, ev.HealthCheck)
		for _, k := range spans.PoolSettingsAttrs {
			if v, ok := ev.Settings[k]; ok {
				at.PutStr(k, v) // under the pool's own keys, as its acquire span had them
			}
		}
		if ev.Lacks != 0 {
			lacks := at.PutEmptySlice(spans.AttrPairLacks)
			for _, name := range ev.Lacks.Names() {
				lacks.AppendEmpty().SetStr(name)
			}
		}
	}
	return ld
}

// pairBatch is what one ConsumeLogs brought to the pairs leg.
type pairBatch struct {
	events []analyze.PairEvent
	// other counts records that are not acquire records (the violation
	// records share the logs pipeline); they are skipped.
	other int
	// bad counts acquire records that would not read; firstBad says what
	// was wrong with the first of them.
	bad      int
	firstBad error
}

// readPairs reads the acquire records of ld. A record whose event name is
// EventAcquire but whose attributes are not what pairLogs writes is
// counted as bad, with the place and what was expected, and skipped: the
// others are kept.
func readPairs(ld plog.Logs) pairBatch {
	var b pairBatch
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			recs := sls.At(j).LogRecords()
			for k := 0; k < recs.Len(); k++ {
				lr := recs.At(k)
				if lr.EventName() != EventAcquire {
					b.other++
					continue
				}
				ev, err := readPair(lr)
				if err != nil {
					if b.bad == 0 {
						b.firstBad = fmt.Errorf("resource %d, scope %d, record %d: %w", i, j, k, err)
					}
					b.bad++
					continue
				}
				b.events = append(b.events, ev)
			}
		}
	}
	return b
}

// readPair reads one acquire record; the error names the attribute and
// what it should hold.
func readPair(lr plog.LogRecord) (analyze.PairEvent, error) {
	ev := analyze.PairEvent{TraceID: lr.TraceID(), SpanID: lr.SpanID(), Start: int64(lr.Timestamp())}
	if ev.TraceID.IsEmpty() {
		return ev, fmt.Errorf("no trace id: an acquire record names its acquire span")
	}
	if ev.Start < 0 {
		return ev, fmt.Errorf("timestamp %d: want the acquire's start in Unix nanoseconds", lr.Timestamp())
	}
	at := lr.Attributes()
	str := func(key string, dst *string, has *bool) error {
		v, ok := at.Get(key)
		if !ok {
			return nil
		}
		if v.Type() != pcommon.ValueTypeStr {
			return fmt.Errorf("%s: want a string, got %s", key, v.Type())
		}
		*dst, *has = v.Str(), true
		return nil
	}
	flag := func(key string, dst *bool) error {
		v, ok := at.Get(key)
		if !ok || v.Type() != pcommon.ValueTypeBool {
			return fmt.Errorf("%s: want a bool", key)
		}
		*dst = v.Bool()
		return nil
	}
	if err := str(AttrPairScope, &ev.Scope, &ev.HasScope); err != nil {
		return ev, err
	}
	if err := str(AttrPairKey, &ev.Key, &ev.HasKey); err != nil {
		return ev, err
	}
	if err := str(spans.AttrPairSession, &ev.Session, &ev.HasSession); err != nil {
		return ev, err
	}
	end, ok := at.Get(spans.AttrPairLeaseEnd)
	if !ok || end.Type() != pcommon.ValueTypeInt {
		return ev, fmt.Errorf("%s: want an int (Unix nanoseconds)", spans.AttrPairLeaseEnd)
	}
	ev.LeaseEnd = end.Int()
	for _, f := range []struct {
		key string
		dst *bool
	}{
		{spans.AttrPairHit, &ev.Hit},
		{spans.AttrPairRedial, &ev.Redial},
		{spans.AttrPairFailed, &ev.Failed},
		{spans.AttrPairHealthCheck, &ev.HealthCheck},
	} {
		if err := flag(f.key, f.dst); err != nil {
			return ev, err
		}
	}
	if err := readLacks(at, &ev); err != nil {
		return ev, err
	}
	return ev, readSettings(at, &ev)
}

// readLacks reads what the forwarder's spans could not show into
// ev.Lacks: a list of capability names, a name this version does not know
// skipped, as a report's writer section reads (rulefmt.CapabilitiesOf).
func readLacks(at pcommon.Map, ev *analyze.PairEvent) error {
	v, ok := at.Get(spans.AttrPairLacks)
	if !ok {
		return nil
	}
	if v.Type() != pcommon.ValueTypeSlice {
		return fmt.Errorf("%s: want a list of capability names, got %s", spans.AttrPairLacks, v.Type())
	}
	names := v.Slice()
	for i := 0; i < names.Len(); i++ {
		n := names.At(i)
		if n.Type() != pcommon.ValueTypeStr {
			return fmt.Errorf("%s[%d]: want a capability name, got %s", spans.AttrPairLacks, i, n.Type())
		}
		if c, ok := rulefmt.CapabilityByName(n.Str()); ok {
			ev.Lacks |= c
		}
	}
	return nil
}

// readSettings reads the pool settings an acquire record carries (string
// values under the pool's keys) into ev.Settings; nil when it carries none.
func readSettings(at pcommon.Map, ev *analyze.PairEvent) error {
	for _, k := range spans.PoolSettingsAttrs {
		v, ok := at.Get(k)
		if !ok {
			continue
		}
		if v.Type() != pcommon.ValueTypeStr {
			return fmt.Errorf("%s: want a string, got %s", k, v.Type())
		}
		if ev.Settings == nil {
			ev.Settings = analyze.PoolSettings{}
		}
		ev.Settings[k] = v.Str()
	}
	return nil
}

// ReadAcquireRecords returns the acquire records of ld (what a traces →
// logs leg with attribution: forward writes) as the analyzer's PairEvents,
// skipping every other record: for a tool or a test that attributes them
// itself (analyze.PairStream). A record that does not read is left out;
// the error names the first one, its place and what was expected.
func ReadAcquireRecords(ld plog.Logs) ([]analyze.PairEvent, error) {
	b := readPairs(ld)
	if b.bad > 0 {
		return b.events, fmt.Errorf("%d acquire records do not read; the first: %w", b.bad, b.firstBad)
	}
	return b.events, nil
}
