package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// jaegerSpansTrace is one element of a Jaeger document's data array: n
// spans of trace 1, each written by span(i).
func jaegerSpansTrace(n int, processes string, span func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"traceID":"00000000000000000000000000000001","processes":{` + processes + `},"spans":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(span(i))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// jaegerSpanJSON is span i of trace 1 in process p1, with extra members.
func jaegerSpanJSON(i int, extra string) string {
	return fmt.Sprintf(`{"traceID":"00000000000000000000000000000001","spanID":"%016x","operationName":"op","startTime":1700000000000000,"duration":5,"processID":"p1"%s}`, i+1, extra)
}

// TestTheJaegerChargeHoldsWhatTheDecodeBuilds pins unmarshalJaeger's
// charge against the runtime, for shapes heavy in each thing a Jaeger
// trace can repeat: what the typed tree and the traces built of it hold
// together, live at once, is within what the record is charged before
// each step (the tree's bound, then jaegerCosts); what the traces hold
// alone, once the tree is let go, within what the record keeps charged;
// and no charge is over jaegerChargeSlack times what it stands for.
func TestTheJaegerChargeHoldsWhatTheDecodeBuilds(t *testing.T) {
	p1 := `"p1":{"serviceName":"gw","tags":[]}`
	tags := func(n int) string {
		var kv []string
		for k := range n {
			kv = append(kv, fmt.Sprintf(`{"key":"k%d","type":"string","value":"v"}`, k))
		}
		return `,"tags":[` + strings.Join(kv, ",") + `]`
	}
	for name, data := range map[string][]byte{
		"bare spans":        jaegerSpansTrace(20_000, p1, func(i int) string { return jaegerSpanJSON(i, "") }),
		"two tags a span":   jaegerSpansTrace(10_000, p1, func(i int) string { return jaegerSpanJSON(i, tags(2)) }),
		"forty tags a span": jaegerSpansTrace(1_000, p1, func(i int) string { return jaegerSpanJSON(i, tags(40)) }),
		"logs of many fields": jaegerSpansTrace(1_000, p1, func(i int) string {
			var fields strings.Builder
			for k := range 20 {
				fmt.Fprintf(&fields, `{"key":"a%d","type":"int64","value":1},`, k)
			}
			return jaegerSpanJSON(i, `,"logs":[{"timestamp":1700000000000001,"fields":[`+fields.String()+`{"key":"event","type":"string","value":"e"}]}]`)
		}),
		"references": jaegerSpansTrace(5_000, p1, func(i int) string {
			return jaegerSpanJSON(i, `,"references":[`+strings.Repeat(`{"refType":"FOLLOWS_FROM","traceID":"00000000000000000000000000000002","spanID":"0000000000000009"},`, 4)+
				`{"refType":"CHILD_OF","traceID":"00000000000000000000000000000001","spanID":"0000000000000001"}]`)
		}),
		"a scope per span": jaegerSpansTrace(5_000, p1, func(i int) string {
			return jaegerSpanJSON(i, fmt.Sprintf(`,"tags":[{"key":"otel.scope.name","type":"string","value":"s%d"}]`, i))
		}),
		"an unlisted process per span": jaegerSpansTrace(5_000, p1, func(i int) string {
			return strings.Replace(jaegerSpanJSON(i, ""), `"processID":"p1"`, fmt.Sprintf(`"processID":"q%d"`, i), 1)
		}),
		"a process embedded in each span": jaegerSpansTrace(5_000, "", func(i int) string {
			return strings.Replace(jaegerSpanJSON(i, `,"process":{"serviceName":"s","tags":[{"key":"host","type":"string","value":"h"}]}`), `"processID":"p1"`, `"processID":""`, 1)
		}),
	} {
		t.Run(name, func(t *testing.T) { checkJaegerCharge(t, data) })
	}
}

// checkJaegerCharge decodes data, one Jaeger trace object, step by step
// as unmarshalJaeger does, and holds each step's charge to what the
// runtime's live heap says the step holds: the typed tree, then the tree
// and the traces built of it, then the traces alone once the tree is let
// go. A charge short of what it stands for, or over jaegerChargeSlack
// times it, fails t.
func checkJaegerCharge(t *testing.T, data []byte) {
	t.Helper()
	before := liveHeap()
	var jt jaegerTrace
	if err := json.Unmarshal(data, &jt); err != nil {
		t.Fatal(err)
	}
	treeHeld := liveHeap() - before
	bound := jaegerTreeBound(data)
	tree, built := jaegerCosts(&jt, len(data))
	if bound < treeHeld || tree < treeHeld {
		t.Errorf("the typed tree of %d bytes holds %d bytes, charged %d before decoding and %d after", len(data), treeHeld, bound, tree)
	}
	td, err := jaegerToTraces(&jt)
	if err != nil {
		t.Fatal(err)
	}
	held := liveHeap() - before
	runtime.KeepAlive(&jt)
	jt = jaegerTrace{}
	builtHeld := liveHeap() - before
	if td.SpanCount() == 0 {
		t.Fatal("no span decoded")
	}
	runtime.KeepAlive(td)
	charged := tree + built
	switch {
	case charged < held:
		t.Errorf("the tree and traces of %d bytes hold %d bytes, charged %d", len(data), held, charged)
	case built < builtHeld:
		t.Errorf("the traces of %d bytes hold %d bytes, charged %d once the tree is let go", len(data), builtHeld, built)
	case charged > jaegerChargeSlack*held || built > jaegerChargeSlack*builtHeld:
		t.Errorf("%d bytes charged %d (the traces %d) for %d held (the traces %d): over %dx, refusing traces the budget could hold",
			len(data), charged, built, held, builtHeld, jaegerChargeSlack)
	case bound > jaegerBoundSlack*treeHeld:
		t.Errorf("%d bytes charged %d before decoding for a tree of %d: over %dx, refusing traces the budget could hold", len(data), bound, treeHeld, jaegerBoundSlack)
	default:
		t.Logf("%d bytes: the tree holds %d (charged %d, then %d), with the traces %d (charged %d), the traces alone %d (charged %d)", len(data), treeHeld, bound, tree, held, charged, builtHeld, built)
	}
}

// jaegerChargeSlack is how many times what a Jaeger decode holds its
// charge may be: a charge far above it refuses traces the budget holds.
// jaegerBoundSlack is the same for the bound charged before the decode,
// which has only the bytes to go by: every object could be an empty span
// ({} in two bytes, a span's room in the tree), so a document of many
// small objects, as Jaeger's tags are, is charged more. Jaeger's own
// documents run at 3.7x (TestAJaegerDocumentARealJaegerServes).
const (
	jaegerChargeSlack = 4
	jaegerBoundSlack  = 5
)

// TestAJaegerTraceTooLargeForTheShareIsRefused pins that a Jaeger trace
// whose decode would take more than the budget's share in flight is
// refused with the budget's error, naming --max-memory, and that the
// share is whole again afterwards; one that fits is read, and holds only
// its traces' charge once decoded.
func TestAJaegerTraceTooLargeForTheShareIsRefused(t *testing.T) {
	data := jaegerSpansTrace(2_000, `"p1":{"serviceName":"gw","tags":[]}`, func(i int) string { return jaegerSpanJSON(i, "") })
	for _, tc := range []struct {
		name  string
		share int64
		fits  bool
	}{
		{"a share of 1 MiB", 1 << 20, false},
		{"a share of 64 MiB", 64 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			share := newInflight(tc.share)
			res := decodeJaegerTrace("-", share)(rec{data: data, seq: 1})
			switch {
			case tc.fits && res.prob != nil:
				t.Fatalf("refused: %v", res.prob)
			case tc.fits && (res.held <= 0 || share.used != res.held):
				t.Errorf("the decoded trace holds %d bytes charged, the share %d; want them equal and positive", res.held, share.used)
			case !tc.fits && (res.prob == nil || !errors.Is(res.prob, ErrRecordTooLarge) || !strings.Contains(res.prob.Error(), "--max-memory")):
				t.Errorf("got %v, want a refusal naming --max-memory", res.prob)
			case !tc.fits && share.used != 0:
				t.Errorf("%d bytes still charged after the refusal, want 0", share.used)
			}
			share.give(res.held)
		})
	}
}

// TestJaegerSpreadCountsWhatCanMakeAResourceOrAScope pins jaegerSpread
// against what jaegerToTraces makes: its counts are at least the
// resources and scopes built, and exact where every span makes one.
func TestJaegerSpreadCountsWhatCanMakeAResourceOrAScope(t *testing.T) {
	p1 := `"p1":{"serviceName":"gw","tags":[]}`
	scoped := func(i int) string {
		return jaegerSpanJSON(i, fmt.Sprintf(`,"tags":[{"key":"otel.scope.name","type":"string","value":"s%d"}]`, i))
	}
	for _, tc := range []struct {
		name                      string
		data                      []byte
		wantResources, wantScopes int64
	}{
		{"one listed process", jaegerSpansTrace(3, p1, func(i int) string { return jaegerSpanJSON(i, "") }), 1, 1},
		{"a scope tag per span", jaegerSpansTrace(3, p1, scoped), 1, 4},
		{"an unlisted process per span", jaegerSpansTrace(3, p1, func(i int) string {
			return strings.Replace(jaegerSpanJSON(i, ""), `"processID":"p1"`, fmt.Sprintf(`"processID":"q%d"`, i), 1)
		}), 4, 4},
		{"a process embedded in each span", jaegerSpansTrace(3, "", func(i int) string {
			return strings.Replace(jaegerSpanJSON(i, `,"process":{"serviceName":"s"}`), `"processID":"p1"`, `"processID":""`, 1)
		}), 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var jt jaegerTrace
			if err := json.Unmarshal(tc.data, &jt); err != nil {
				t.Fatal(err)
			}
			td, err := jaegerToTraces(&jt)
			if err != nil {
				t.Fatal(err)
			}
			made, madeScopes := int64(td.ResourceSpans().Len()), int64(0)
			for _, rs := range td.ResourceSpans().All() {
				madeScopes += int64(rs.ScopeSpans().Len())
			}
			res, scopes := jaegerSpread(&jt)
			if res != tc.wantResources || scopes != tc.wantScopes || res < made || scopes < madeScopes {
				t.Errorf("jaegerSpread = %d resources, %d scopes; want %d, %d (built: %d, %d)", res, scopes, tc.wantResources, tc.wantScopes, made, madeScopes)
			}
		})
	}
}

// liveHeap is the heap's live bytes once collected: what a decode holds is
// its difference across the decode, the result kept alive.
func liveHeap() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
