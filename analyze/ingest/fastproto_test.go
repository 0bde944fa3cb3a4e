package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"
)

// checkFastProtoMatchesPdata decodes rec with the protobuf projection
// decoder and, when it does not fall back, requires pdata to accept the
// record and read the same kept content from it.
func checkFastProtoMatchesPdata(t *testing.T, rec []byte) (fast bool) {
	t.Helper()
	keys := newKeepSet(testKeep)
	b, ok := decodeFastProto(rec, keys)
	if !ok {
		return false
	}
	defer putBatch(b)
	want, err := unmarshalOTLPProto(rec, nil) // pdata, on the record without its groups
	if err != nil {
		t.Fatalf("the projection decoder accepted a record pdata refuses (%v): % x", err, rec)
	}
	got := batchTraces(b)
	if g, w := got.SpanCount(), want.SpanCount(); g != w {
		t.Fatalf("projection read %d spans, pdata %d: % x", g, w, rec)
	}
	if g, w := keptView(got, keys), keptView(want, keys); !slices.Equal(g, w) {
		t.Fatalf("projection and pdata differ on % x\nprojection: %q\npdata:      %q", rec, g, w)
	}
	return true
}

// committedProtoRecords returns the records of the committed protobuf dumps.
func committedProtoRecords(t testing.TB) [][]byte {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "traces", "*.otlp.pb"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no protobuf dumps in testdata/traces (%v)", err)
	}
	var recs [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, splitRecords(t, data)...)
	}
	return recs
}

func TestFastOTLPProtoMatchesPdataOnCommittedDumps(t *testing.T) {
	recs := committedProtoRecords(t)
	fast := 0
	for _, r := range recs {
		if checkFastProtoMatchesPdata(t, r) {
			fast++
		}
	}
	// Every generated record is in the common shape.
	if fast != len(recs) {
		t.Errorf("the projection decoder took %d of %d records", fast, len(recs))
	}
}

// pb builds protobuf messages for the edge cases.
type pb []byte

func (m pb) bytes(num protowire.Number, v []byte) pb {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendBytes(m, v)
}

func (m pb) str(num protowire.Number, s string) pb { return m.bytes(num, []byte(s)) }

func (m pb) varint(num protowire.Number, v uint64) pb {
	m = protowire.AppendTag(m, num, protowire.VarintType)
	return protowire.AppendVarint(m, v)
}

func (m pb) fixed64(num protowire.Number, v uint64) pb {
	m = protowire.AppendTag(m, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(m, v)
}

func (m pb) fixed32(num protowire.Number, v uint32) pb {
	m = protowire.AppendTag(m, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(m, v)
}

func strAttr(k, v string) pb { return pb(nil).str(1, k).bytes(2, pb(nil).str(1, v)) }
func intAttr(k string, v int64) pb {
	return pb(nil).str(1, k).bytes(2, pb(nil).varint(3, uint64(v)))
}
func boolAttr(k string, v bool) pb {
	n := uint64(0)
	if v {
		n = 1
	}
	return pb(nil).str(1, k).bytes(2, pb(nil).varint(2, n))
}

var (
	testTraceID = []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	testSpanID  = []byte{0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}
	testParent  = []byte{0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28}
)

// spanHead is the fields of baseSpan before its attributes, in ascending
// order: ids, name, kind and times.
func spanHead() pb {
	return pb(nil).bytes(1, testTraceID).bytes(2, testSpanID).bytes(4, testParent).
		str(5, "plugin.mcp.connection.acquire").varint(6, 1).fixed64(7, 1777539600000000000).fixed64(8, 1777539600001000000)
}

// baseSpan is a span in the common shape; extra fields are appended.
func baseSpan(extra ...pb) pb {
	sp := spanHead().
		bytes(9, boolAttr("plugin.mcp.cache_hit", true)).bytes(9, strAttr("plugin.mcp.cache_key", "k1")).
		bytes(9, strAttr("jsonrpc.request.id", "7")).bytes(15, pb(nil).str(2, "boom").varint(3, 2))
	for _, e := range extra {
		sp = append(sp, e...)
	}
	return sp
}

// request wraps spans in one resource and one scope.
func request(res pb, spans ...pb) []byte {
	ss := pb(nil).bytes(1, pb(nil).str(1, "scope").str(2, "1.0"))
	for _, sp := range spans {
		ss = ss.bytes(2, sp)
	}
	rs := pb(nil)
	if res != nil {
		rs = rs.bytes(1, res)
	}
	rs = rs.bytes(2, ss)
	return pb(nil).bytes(1, rs)
}

// twoResources is a request of two resources, each with a span holding
// kept attributes, one of them under a key ("x") resources keep too,
// so a resource's range reaching into the span's attributes shows; with
// resourceLast, each resource's field comes after
// its scope's spans (protobuf fields may come in any order), so the
// second resource's attributes are read after the first's spans'.
func twoResources(resourceLast bool) []byte {
	ss := pb(nil).bytes(1, pb(nil).str(1, "scope")).bytes(2, baseSpan(pb(nil).bytes(9, strAttr("x", "on the span"))))
	res2 := pb(nil).bytes(1, strAttr("service.name", "other"))
	rs := func(res pb) pb {
		if resourceLast {
			return pb(nil).bytes(2, ss).bytes(1, res)
		}
		return pb(nil).bytes(1, res).bytes(2, ss)
	}
	return pb(nil).bytes(1, rs(baseResource)).bytes(1, rs(res2))
}

var baseResource = pb(nil).bytes(1, strAttr("service.name", "gw")).bytes(1, strAttr("host.name", "h"))

func TestFastOTLPProtoMatchesPdataOnEdgeCases(t *testing.T) {
	nested := pb(nil).str(1, "nested").bytes(2, pb(nil).bytes(5, pb(nil).bytes(1, pb(nil).bytes(6, pb(nil).bytes(1, strAttr("a", "b"))))))
	tests := map[string][]byte{
		"common shape":           request(baseResource, baseSpan()),
		"no resource":            request(nil, baseSpan()),
		"root span, empty ids":   request(baseResource, baseSpan().bytes(4, nil)),
		"repeated scalars":       request(baseResource, baseSpan(pb(nil).str(5, "later").varint(6, 3).fixed64(7, 5))),
		"repeated status merges": request(baseResource, baseSpan(pb(nil).bytes(15, pb(nil).str(2, "no code")))),
		"repeated kept key":      request(baseResource, baseSpan(pb(nil).bytes(9, boolAttr("plugin.mcp.cache_hit", false)))),
		"kept int":               request(baseResource, baseSpan(pb(nil).bytes(9, intAttr("plugin.mcp.attempt", -2)))),
		"skipped nested values":  request(baseResource, baseSpan(pb(nil).bytes(9, nested))),
		"skipped double":         request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, "ratio").bytes(2, pb(nil).fixed64(4, 1))))),
		"unknown fields":         request(baseResource.varint(99, 1), baseSpan(pb(nil).varint(99, 5).fixed32(98, 1).bytes(97, []byte("x")))),
		"flags and counts":       request(baseResource, baseSpan(pb(nil).fixed32(16, 0x101).varint(10, 3).varint(12, 1).varint(14, 2))),
		"two spans":              request(baseResource, baseSpan(), baseSpan(pb(nil).bytes(2, testParent))),
		"value before key":       request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).bytes(2, pb(nil).str(1, "v")).str(1, "mcp.tool.name")))),
		"empty key":              request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).bytes(1, nil).bytes(2, pb(nil).str(1, "v"))))),
		"two resources":          twoResources(false),
		"resource after spans":   twoResources(true),
		"value fields merge":     request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, "x").bytes(2, pb(nil).str(1, "s")).bytes(2, pb(nil).varint(3, 4))))),
	}
	for name, rec := range tests {
		t.Run(name, func(t *testing.T) {
			if !checkFastProtoMatchesPdata(t, rec) {
				t.Errorf("the projection decoder fell back on a record it should take: % x", rec)
			}
		})
	}
}

func TestFastOTLPProtoFallsBack(t *testing.T) {
	good := request(baseResource, baseSpan())
	tests := map[string][]byte{
		"short trace id":           request(baseResource, baseSpan(pb(nil).bytes(1, []byte{1, 2}))),
		"long span id":             request(baseResource, baseSpan(pb(nil).bytes(2, testTraceID))),
		"wrong wire type (name)":   request(baseResource, baseSpan(pb(nil).varint(5, 1))),
		"wrong wire type (start)":  request(baseResource, baseSpan(pb(nil).varint(7, 1))),
		"kind out of range":        request(baseResource, baseSpan(pb(nil).varint(6, 300))),
		"kind one past the last":   request(baseResource, baseSpan(pb(nil).varint(6, 6))),
		"status code out of range": request(baseResource, baseSpan(pb(nil).bytes(15, pb(nil).varint(3, 3)))),
		"kept double":              request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, "x").bytes(2, pb(nil).fixed64(4, 1))))),
		"kept array":               request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, "x").bytes(2, pb(nil).bytes(5, nil))))),
		"kept empty value":         request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, "x")))),
		"key string table":         request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).varint(3, 1)))),
		"malformed skipped value":  request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, "skipped").bytes(2, []byte{0x0a, 0x05, 'a'})))),
		"deprecated library spans": append(good[:0:0], pb(nil).bytes(1, pb(nil).bytes(1000, nil))...),
		"repeated resource":        pb(nil).bytes(1, pb(nil).bytes(1, baseResource).bytes(1, baseResource).bytes(2, pb(nil).bytes(2, baseSpan()))),
		"entity refs":              request(baseResource.bytes(3, nil), baseSpan()),
		"group":                    append(append([]byte{}, good...), protowire.AppendTag(nil, 50, protowire.StartGroupType)...),
		"truncated":                good[:len(good)-3],
		"no spans":                 pb(nil).bytes(1, pb(nil).bytes(1, baseResource)),
		"field number zero":        append(append([]byte{}, good...), 0x00, 0x01),
		"deep nesting":             request(baseResource, baseSpan(pb(nil).bytes(9, deepValue(20)))),
	}
	for name, rec := range tests {
		t.Run(name, func(t *testing.T) {
			if b, ok := decodeFastProto(rec, newKeepSet(testKeep)); ok {
				putBatch(b)
				t.Errorf("the projection decoder took a record it must leave to pdata: % x", rec)
			}
		})
	}
}

// deepValue is an attribute whose value nests depth arrays.
func deepValue(depth int) pb {
	v := pb(nil).str(1, "leaf")
	for range depth {
		v = pb(nil).bytes(5, pb(nil).bytes(1, v))
	}
	return pb(nil).str(1, "deep").bytes(2, v)
}

// FuzzFastOTLPProtoMatchesPdata feeds arbitrary records to the protobuf
// projection decoder: either it falls back, or pdata accepts the record
// too and reads the same kept spans and attributes from it. (analyze's
// FuzzLoadOTLPProto checks the same through Load, down to the report.)
func FuzzFastOTLPProtoMatchesPdata(f *testing.F) {
	for _, r := range committedProtoRecords(f) {
		if len(r) <= 4<<10 {
			f.Add(r)
		}
	}
	f.Add(request(baseResource, baseSpan()))
	f.Add(request(nil, baseSpan(pb(nil).bytes(9, deepValue(3)))))
	for _, r := range fastProtoShapes() { // fast_shapes_test.go
		f.Add(r)
	}
	for _, c := range groupCases() { // proto_groups_test.go
		f.Add(c.rec)
	}
	full := fullSpan() // fastproto_order_test.go: spanInOrder's two layouts
	f.Add(request(baseResource, full.ascending(), full.descending()))
	f.Fuzz(func(t *testing.T, rec []byte) {
		checkFastProtoMatchesPdata(t, rec)
	})
}

// TestFastOTLPProtoLeavesMalformedFieldsToPdata pins four checks of the
// projection decoder on records pdata refuses: a resource and a span's
// attribute written with another wire type than bytes, and an attribute
// key or value whose length needs a second byte (a first length byte of
// exactly 0x80: the compact path reads one-byte lengths only, and the
// general one finds the length past the record). Each must fall back to
// pdata, which reports it, and never be read as if it were well formed.
func TestFastOTLPProtoLeavesMalformedFieldsToPdata(t *testing.T) {
	scope := pb(nil).bytes(1, pb(nil).str(1, "scope")).bytes(2, baseSpan())
	longKey := append([]byte{0x0a, 0x80}, bytes.Repeat([]byte{'a'}, 128)...)
	longKey = append(longKey, pb(nil).bytes(2, pb(nil).str(1, "v"))...)
	longValue := append(pb(nil).str(1, "x"), 0x12, 0x80, 0x0a, 0x7e)
	longValue = append(longValue, bytes.Repeat([]byte{'a'}, 0x7e)...)
	for name, rec := range map[string][]byte{
		"a resource as a varint": pb(nil).bytes(1, pb(nil).varint(1, 7).bytes(2, scope)),
		// After a well-formed attribute, whose bytes the field iterator
		// still holds when the varint comes.
		"a span attribute as a varint":       request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, strAttr("x", "y")).varint(fieldSpanAttributes, 1))),
		"a key length of 0x80 read past end": request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, longKey))),
		// A value whose first length byte is 0x80, with exactly 0x80
		// bytes after it: read as one byte, the length fits the
		// attribute (and the bytes a string); read as the varint it is,
		// it runs past the attribute.
		"a value length of 0x80 read as one byte": request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, longValue))),
	} {
		t.Run(name, func(t *testing.T) {
			var u ptrace.ProtoUnmarshaler
			if _, err := u.UnmarshalTraces(rec); err == nil {
				t.Fatalf("pdata reads the record: the case tests nothing: % x", rec)
			}
			if b, ok := decodeFastProto(rec, newKeepSet(testKeep)); ok {
				putBatch(b)
				t.Errorf("the projection decoder took a record pdata refuses: % x", rec)
			}
		})
	}
}

// TestFastOTLPProtoLeavesMoreMalformedFieldsToPdata extends
// TestFastOTLPProtoLeavesMalformedFieldsToPdata with the wire-level edges
// the fast paths test before they read a field: each record is one pdata
// refuses, and the projection decoder must leave it to pdata.
func TestFastOTLPProtoLeavesMoreMalformedFieldsToPdata(t *testing.T) {
	good := request(baseResource, baseSpan())
	for name, rec := range map[string][]byte{
		// Field 0, which protowire refuses, never takes the one-byte path.
		"field number zero, length-delimited": append(append([]byte{}, good...), 0x02, 0x00),
		// The kind's wire type is checked: a fixed32 1 is no kind 1.
		"a span kind as fixed32": request(baseResource, baseSpan(pb(nil).fixed32(fieldSpanKind, 1))),
		"a span kind as bytes":   request(baseResource, baseSpan(pb(nil).bytes(fieldSpanKind, nil))),
		// compactKV must not keep the second of two values without
		// reading the first, malformed.
		"two values, the first malformed": request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes,
			pb(nil).bytes(2, []byte{0x0a, 0x05, 'a'}).bytes(2, pb(nil).str(1, "v"))))),
		// The span's last field, an attribute, says it is one byte longer
		// than what is left of the span, and the span ends the record:
		// the in-order path must stop at the span's end, not read the
		// byte past it (past the record, here).
		"an attribute one byte past its span, at the record's end": slices.Clip(request(baseResource, attrPastSpan())),
	} {
		t.Run(name, func(t *testing.T) {
			var u ptrace.ProtoUnmarshaler
			if _, err := u.UnmarshalTraces(rec); err == nil {
				t.Fatalf("pdata reads the record: the case tests nothing: % x", rec)
			}
			if b, ok := decodeFastProto(rec, newKeepSet(testKeep)); ok {
				putBatch(b)
				t.Errorf("the projection decoder took a record pdata refuses: % x", rec)
			}
		})
	}
}

// attrPastSpan is a span in ascending order whose last field, a kept
// attribute, has a length one byte longer than the bytes that follow it.
func attrPastSpan() pb {
	kv := strAttr("plugin.mcp.cache_key", "k1")
	sp := append(protowire.AppendTag(spanHead(), fieldSpanAttributes, protowire.BytesType), byte(len(kv)+1))
	return append(sp, kv...)
}
