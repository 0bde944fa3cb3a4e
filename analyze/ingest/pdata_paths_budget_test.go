package ingest

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// wideAttrsJSON is n tiny int attributes of OTLP JSON, 37 bytes each,
// which pdata builds at some 90 bytes and encoding/json's map[string]any
// at some 700.
func wideAttrsJSON(n int) string {
	return strings.TrimSuffix(strings.Repeat(`{"key":"a","value":{"intValue":"1"}},`, n), ",")
}

// otlpRS is an OTLP JSON ResourceSpans of one span, id n, with span's
// extra members; legacy names its scopes with the pre-1.0 keys
// (instrumentationLibrarySpans), which pdata skips and the readers
// normalise.
func otlpRS(n int, extra string, legacy bool) string {
	scopes, scope := "scopeSpans", "scope"
	if legacy {
		scopes, scope = "instrumentationLibrarySpans", "instrumentationLibrary"
	}
	return `{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gw"}}]},"` + scopes + `":[{"` + scope +
		`":{"name":"p"},"spans":[{` + hostileSpanJSON(n) + extra + `}]}]}`
}

// pdataPathCase is one path to pdata: an input of a record only pdata
// reads between two records of one span each that fit any budget, and
// what the path charges that record to the share in flight.
type pdataPathCase struct {
	name  string
	input []byte
	need  int64
}

// pdataPathCases are the paths to pdata other than a plain protobuf
// record's (TestRecordsForPdataAreChargedWhatTheyGrowTo), each with a
// record that takes 3 to 16 MiB on its path (the share must be at least
// 3 MiB to be a quarter of the budget) and fits the record cap of 1 MiB.
func pdataPathCases(t *testing.T) []pdataPathCase {
	t.Helper()
	// An event: the projection decoder leaves the span to pdata. A
	// record normalised first takes some ten times as much: it is cut
	// to a third.
	wide := `,"events":[{"name":"exception"}],"attributes":[` + wideAttrsJSON(27_000) + `]`
	narrow := `,"events":[{"name":"exception"}],"attributes":[` + wideAttrsJSON(9_000) + `]`
	line := func(n int, extra string, legacy bool) []byte {
		return []byte(`{"resourceSpans":[` + otlpRS(n, extra, legacy) + `]}`)
	}
	lines := func(big []byte) []byte {
		return bytes.Join([][]byte{line(1, "", false), big, line(3, "", false), nil}, []byte("\n"))
	}
	doc := func(key, big string) []byte {
		return []byte("{\n" + `"` + key + `":[` + otlpRS(1, "", false) + "," + big + "," + otlpRS(3, "", false) + "]}\n")
	}
	plain, legacy := line(2, wide, false), line(2, narrow, true)
	element := wrapResourceSpans([]byte(otlpRS(2, wide, false)))
	tempo := []byte(otlpRS(2, narrow, true))
	cost := func(rec []byte, top protoLevel) jsonCost { return jsonCosts(rec, top).withEncoding(rec) }
	groups := append(pdataOnlyRecord(40_000), unknownGroup...) // a group ending the record: pdata refuses it whole
	deep := request(baseResource, baseSpan(pb(nil).varint(fieldSpanKind, maxSpanKind+1),
		bytes.Repeat(pb(nil).bytes(fieldSpanAttributes, pb(nil).bytes(2, pb(nil).varint(3, 1))), 40_000),
		pb(nil).bytes(fieldSpanAttributes, deepKVList(60))))
	cutDeep, _, _ := cutProtoRecord("-", 0, 0, deep)
	okProto := request(baseResource, baseSpan())
	around := func(frame func([]byte) []byte, big []byte) []byte {
		return append(append(frame(okProto), frame(big)...), frame(okProto)...)
	}
	return []pdataPathCase{
		{"a JSON line with an event", lines(plain), cost(plain, pbRequest).pdataOf(int64(len(plain)))},
		{"a JSON line read only normalised", lines(legacy), cost(legacy, pbRequest).pdataOf(int64(len(legacy))) + cost(legacy, pbRequest).normalized()},
		{"an element of an OTLP JSON document", doc("resourceSpans", otlpRS(2, wide, false)), cost(element, pbRequest).pdataOf(int64(len(element)))},
		{"a Tempo ResourceSpans", doc("batches", string(tempo)), cost(tempo, pbResourceSpans).normalized()},
		{"a zstd JSON record", append(append(zstdFramed(t, line(1, "", false)), zstdFramed(t, plain)...), zstdFramed(t, line(3, "", false))...),
			cost(plain, pbRequest).pdataOf(int64(len(plain)))},
		{"a protobuf record read without its groups", around(framed, groups), 2*pdataBytes(groups) + int64(len(groups))},
		{"a protobuf record read with a value cut", around(framed, deep), pdataBytes(deep) + int64(len(cutDeep)) + pdataBytes(cutDeep)},
	}
}

// TestEveryPathToPdataIsChargedWhatItBuilds pins the memory budget on
// every path by which a record reaches pdata besides a plain protobuf
// record's: a JSON line the projection decoder leaves (a span with an
// event), one pdata reads only once normalizeRequest rewrote it through
// encoding/json's map[string]any, an element of an OTLP JSON document, a
// Tempo ResourceSpans (always normalised), a zstd JSON record, and the
// protobuf retries on a copy (without its groups, with a value cut past
// MaxDepth). A record whose path takes exactly the share of the budget
// the records in flight may hold is read; one byte more and it is skipped
// with a warning naming its size and --max-memory, the records around it
// read.
func TestEveryPathToPdataIsChargedWhatItBuilds(t *testing.T) {
	for _, pc := range pdataPathCases(t) {
		t.Run(pc.name, func(t *testing.T) {
			if pc.need < 3<<20 || pc.need > 16<<20 {
				t.Fatalf("the path charges %d bytes: the case wants between 3 and 16 MiB", pc.need)
			}
			for _, tc := range []struct {
				name   string
				budget int64 // its share in flight is a quarter of it
				skips  bool
			}{
				{"a share of exactly what it takes", 4 * pc.need, false},
				{"a share one byte short", 4 * (pc.need - 1), true},
			} {
				if got := (ReadOptions{MaxMemory: tc.budget}).budget().inflightShare(); got != tc.budget/4 {
					t.Fatalf("%s: share %d, want a quarter of the budget %d", tc.name, got, tc.budget)
				}
				for _, workers := range []int{1, 4} {
					inputs, spans, err := readHostile(t, pc.input, ReadOptions{MaxMemory: tc.budget, Workers: workers}, true)
					if err != nil {
						t.Fatalf("%s, %d workers: %v", tc.name, workers, err)
					}
					warned := 0
					for _, w := range inputs[0].Warnings {
						if strings.Contains(w, "only the full decoder (pdata) reads") && strings.Contains(w, "--max-memory") {
							warned++
						}
					}
					if want := 3 - btoi(tc.skips); spans != want || warned != btoi(tc.skips) {
						t.Errorf("%s, %d workers: %d spans read, warnings %q; want %d spans, %d budget warnings", tc.name, workers, spans, inputs[0].Warnings, want, btoi(tc.skips))
					}
				}
			}
		})
	}
}

// TestAChargeThatDoesNotFitGivesBackWhatItHeld pins pdataCharge's
// refusal: a step that would take the record's charges past the share is
// refused with the budget's error, and what the earlier steps held is
// given back at once (else the share would shrink for every record
// after), as it is by keep(0) on a record that fails.
func TestAChargeThatDoesNotFitGivesBackWhatItHeld(t *testing.T) {
	g := newInflight(100)
	g.serve(1)
	c := newPdataCharge(g, rec{seq: 1}, "a JSON line", 10<<10)
	if err := c.add(60); err != nil || g.used != 60 {
		t.Fatalf("first step: %v, %d used; want 60 charged", err, g.used)
	}
	err := c.add(41)
	if err == nil || !strings.Contains(err.Error(), "a JSON line of 10 KiB") || !strings.Contains(err.Error(), "--max-memory") {
		t.Fatalf("a step past the share: %v; want the budget's error naming the record and --max-memory", err)
	}
	if g.used != 0 || c.holding() != 0 {
		t.Errorf("after the refusal %d used, %d held; want both 0", g.used, c.holding())
	}
	c = newPdataCharge(g, rec{seq: 1}, "a JSON line", 1)
	if err := c.add(100); err != nil {
		t.Fatal(err)
	}
	if c.keep(30) != 30 || g.used != 30 || c.keep(0) != 0 || g.used != 0 {
		t.Errorf("keep: %d used, %d held; want what is kept charged, nothing after keep(0)", g.used, c.holding())
	}
}

// TestTheJSONScanCountsTheMessagesTheProtobufWalkCounts pins jsonCosts'
// count of what pdata builds against pdataBytes', which is measured: the
// same traces as OTLP JSON (camelCase, snake_case, with escaped member
// names, which pdata reads as the names, and with the pre-1.0 scope keys
// that normalizeRequest renames) and as protobuf hold the same messages.
func TestTheJSONScanCountsTheMessagesTheProtobufWalkCounts(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "gw")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().Attributes().PutStr("scope.attr", "s")
	for i := range 3 {
		sp := ss.Spans().AppendEmpty()
		sp.SetName("s")
		sp.SetTraceID([16]byte{1, 15: byte(i + 1)})
		sp.SetSpanID([8]byte{2, 7: byte(i + 1)})
		sp.Attributes().PutInt("n", int64(i))
		arr := sp.Attributes().PutEmptySlice("arr")
		arr.AppendEmpty().SetStr("x")
		arr.AppendEmpty().SetEmptyMap().PutBool("in.map", true)
		m := sp.Attributes().PutEmptyMap("map")
		m.PutEmptySlice("list").AppendEmpty().SetInt(4)
		ev := sp.Events().AppendEmpty()
		ev.SetName("exception")
		ev.Attributes().PutStr("exception.type", "E")
		ln := sp.Links().AppendEmpty()
		ln.SetTraceID([16]byte{3, 15: 1})
		ln.Attributes().PutStr("link.attr", "l")
	}
	rec, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	want := pdataBytes(rec) - int64(len(rec))
	respell := func(pairs ...string) []byte { return []byte(strings.NewReplacer(pairs...).Replace(string(js))) }
	for spelling, data := range map[string][]byte{
		"camelCase":     js,
		"snake_case":    respell(`"resourceSpans"`, `"resource_spans"`, `"scopeSpans"`, `"scope_spans"`, `"arrayValue"`, `"array_value"`, `"kvlistValue"`, `"kvlist_value"`),
		"escaped names": respell(`"spans"`, `"\u0073pans"`, `"attributes"`, `"\u0061ttributes"`, `"value"`, `"v\u0061lue"`, `"events"`, `"\u0065vents"`),
		"pre-1.0 keys":  respell(`"scopeSpans"`, `"instrumentationLibrarySpans"`, `"scope"`, `"instrumentationLibrary"`),
	} {
		if got := jsonCosts(data, pbRequest).msgs; got != want {
			t.Errorf("%s: the JSON scan counts %d bytes of messages, the protobuf walk %d", spelling, got, want)
		}
	}
	if unknown := jsonCosts([]byte(`{"resourceSpans":[],"x":{"spans":[{},{}],"attributes":[{}]}}`), pbRequest).msgs; unknown != 0 {
		t.Errorf("an unknown member's objects count %d bytes of messages, want none: pdata skips them", unknown)
	}
}

// TestTheTreeEstimateHoldsWhatEncodingJSONBuilds pins jsonCosts' tree
// against the runtime: for shapes of every kind of value, and a Tempo
// batch as tracegen writes one, what encoding/json's map[string]any of a
// Tempo ResourceSpans holds once normalised (measured as the live heap
// after a collection) is at most what jsonCosts charges for it. A
// runtime whose maps or slices grow larger fails here, not in a user's
// RSS.
func TestTheTreeEstimateHoldsWhatEncodingJSONBuilds(t *testing.T) {
	rs := func(member string) []byte {
		return []byte(`{"resource":{"attributes":[]},"x":` + member + `,"instrumentationLibrarySpans":[{"spans":[{` + hostileSpanJSON(1) + `}]}]}`)
	}
	list := func(v string, n int) string { return "[" + strings.TrimSuffix(strings.Repeat(v+",", n), ",") + "]" }
	for name, data := range map[string][]byte{
		"tiny attributes":      []byte(otlpRS(1, `,"attributes":[`+wideAttrsJSON(20_000)+`]`, true)),
		"empty objects":        rs(list("{}", 200_000)),
		"objects of 1 member":  rs(list(`{"a":0}`, 100_000)),
		"objects of 9 members": rs(list(`{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0}`, 20_000)),
		"numbers":              rs(list("0", 300_000)),
		"empty strings":        rs(list(`""`, 200_000)),
		"strings of 10 bytes":  rs(list(`"0123456789"`, 50_000)),
		"empty arrays":         rs(list("[]", 200_000)),
		"a Tempo batch":        tempoBatch(t),
	} {
		t.Run(name, func(t *testing.T) {
			before := liveHeap()
			tree, err := decodeJSONObject(data)
			if err == nil {
				err = normalizeRSMap(tree)
			}
			if err != nil {
				t.Fatal(err)
			}
			held := liveHeap() - before
			runtime.KeepAlive(tree)
			if est := jsonCosts(data, pbResourceSpans).tree; est < held {
				t.Errorf("the tree of %d bytes holds %d bytes, estimated %d", len(data), held, est)
			}
		})
	}
}

// tempoBatch is the largest batch of a Tempo document tracegen writes of
// its benchmark workload's first export.
func tempoBatch(t *testing.T) []byte {
	t.Helper()
	var doc []byte
	if _, err := tracegen.BenchBatches(900, func(td ptrace.Traces) error {
		if doc == nil {
			doc = tracegen.MustEncode(tracegen.WriteTempoBatches, td)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var m struct{ Batches []json.RawMessage }
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	var best []byte
	for _, b := range m.Batches {
		if len(b) > len(best) {
			best = b
		}
	}
	return best
}
