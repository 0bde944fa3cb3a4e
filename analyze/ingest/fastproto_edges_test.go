package ingest

import (
	"bytes"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/protobuf/encoding/protowire"
)

// TestFastOTLPProtoReadsEachAttributeEncodingAsPdataDoes pins the compact
// attribute path (compactKV) against pdata on the encodings next to the one
// it takes: a bool true and false, a repeated bool value (pdata: the last
// wins, so the compact path must not read the first and ignore the rest),
// a repeated string or int value, a key after its value (either order is
// valid protobuf), two values or two keys, and a status code in the wrong wire type (pdata
// refuses the record: the projection must not take it either). Each record
// is checked by checkFastProtoMatchesPdata, which fails when the projection
// takes a record pdata refuses or reads it differently.
func TestFastOTLPProtoReadsEachAttributeEncodingAsPdataDoes(t *testing.T) {
	const hit = "x" // kept (testKeep), and not already on baseSpan: the first of a repeated key is kept
	for _, c := range []struct {
		name string
		rec  []byte
	}{
		{"a kept bool true", request(baseResource, baseSpan(pb(nil).bytes(9, boolAttr(hit, true))))},
		{"a kept bool false", request(baseResource, baseSpan(pb(nil).bytes(9, boolAttr(hit, false))))},
		{"a repeated bool value, true then false", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, hit).bytes(2, pb(nil).varint(2, 1).varint(2, 0)))))},
		{"a repeated bool value, false then true", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, hit).bytes(2, pb(nil).varint(2, 0).varint(2, 1)))))},
		{"a kept string, its value first", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).bytes(2, pb(nil).str(1, "v")).str(1, hit))))},
		{"a kept bool, its value first", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).bytes(2, pb(nil).varint(2, 1)).str(1, hit))))},
		{"a kept int, its value first", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).bytes(2, pb(nil).varint(3, 7)).str(1, hit))))},
		{"two values, no key", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).bytes(2, pb(nil).str(1, "v")).bytes(2, pb(nil).str(1, "w")))))},
		{"two keys, no value", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, hit).str(1, hit))))},
		{"a repeated string value", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, "x").bytes(2, pb(nil).str(1, "a").str(1, "b")))))},
		{"a repeated int value", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, hit).bytes(2, pb(nil).varint(3, 5).varint(3, 7)))))},
		{"a string value with a trailing field", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, "x").bytes(2, pb(nil).str(1, "a").varint(3, 4)))))},
		{"a status code as fixed32", request(baseResource, baseSpan(pb(nil).bytes(15, pb(nil).fixed32(3, 2))))},
		{"a status code as a string", request(baseResource, baseSpan(pb(nil).bytes(15, pb(nil).str(3, "x"))))},
		{"a status message as a varint", request(baseResource, baseSpan(pb(nil).bytes(15, pb(nil).varint(2, 1))))},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkFastProtoMatchesPdata(t, c.rec)
		})
	}
}

// TestFieldIterReadsTheFirstFieldAsProtowireDoes pins fieldIter.next's
// one-byte readings (a length-delimited field with a one-byte length, a
// fixed64, a one-byte varint) to protowire's reading of the same bytes:
// every first byte, with every second byte, before the same eight more,
// whole and cut after each byte. It reads the field's number, type and value, or
// finds it malformed, as protowire does; groups, which protowire reads
// and the decoder leaves to pdata, are skipped.
func TestFieldIterReadsTheFirstFieldAsProtowireDoes(t *testing.T) {
	tail := []byte{0x81, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}
	for first := range 256 {
		for second := range 256 {
			whole := append([]byte{byte(first), byte(second)}, tail...)
			for cut := 1; cut <= len(whole); cut++ {
				msg := whole[:cut]
				num, typ, n := protowire.ConsumeTag(msg)
				if n > 0 && (typ == protowire.StartGroupType || typ == protowire.EndGroupType) {
					continue
				}
				it := fieldIter{b: msg}
				got := it.next()
				m := -1
				if n > 0 {
					m = protowire.ConsumeFieldValue(num, typ, msg[n:])
				}
				if want := m >= 0; got != want || it.bad == want {
					t.Fatalf("% x: next %v, bad %v; protowire reads it: %v", msg, got, it.bad, want)
				}
				if !got {
					continue
				}
				f := it.f
				if f.num != num || f.typ != typ || len(it.b) != len(msg)-n-m {
					t.Fatalf("% x: field %d type %d, %d bytes left; protowire: field %d type %d, %d left", msg, f.num, f.typ, len(it.b), num, typ, len(msg)-n-m)
				}
				switch typ {
				case protowire.VarintType:
					v, _ := protowire.ConsumeVarint(msg[n:])
					if f.v != v {
						t.Fatalf("% x: varint %d, protowire %d", msg, f.v, v)
					}
				case protowire.Fixed64Type:
					if v, _ := protowire.ConsumeFixed64(msg[n:]); f.v != v {
						t.Fatalf("% x: fixed64 %d, protowire %d", msg, f.v, v)
					}
				case protowire.BytesType:
					if v, _ := protowire.ConsumeBytes(msg[n:]); !bytes.Equal(f.b, v) {
						t.Fatalf("% x: bytes % x, protowire % x", msg, f.b, v)
					}
				}
			}
		}
	}
}

// TestFieldIterReadsTwoByteLengthsAsProtowireDoes is the test above for
// a length-delimited field whose length takes two bytes (a span, in its
// scope's list of spans, is longer than 127 bytes): every one-byte tag of
// that wire type, every first length byte with its continuation bit, every
// second length byte, with the field whole, one byte short and cut inside
// its length.
func TestFieldIterReadsTwoByteLengthsAsProtowireDoes(t *testing.T) {
	body := make([]byte, 3+1<<14+1)
	for num := 1; num < 16; num++ {
		tag := byte(num<<3 | int(protowire.BytesType))
		for lo := 0x80; lo < 0x100; lo++ {
			for hi := range 256 {
				body[0], body[1], body[2] = tag, byte(lo), byte(hi)
				n := 3 + (lo&0x7f | hi<<7)
				for _, cut := range []int{2, 3, min(n-1, len(body)), min(n, len(body)), len(body)} {
					msg := body[:cut]
					it := fieldIter{b: msg}
					got := it.next()
					v, m := protowire.ConsumeBytes(msg[1:])
					if want := m >= 0; got != want || it.bad == want {
						t.Fatalf("% x (%d bytes): next %v, bad %v; protowire reads it: %v", msg[:min(len(msg), 3)], len(msg), got, it.bad, want)
					}
					if got && (it.f.num != protowire.Number(num) || it.f.typ != protowire.BytesType || len(it.f.b) != len(v) || len(it.b) != len(msg)-1-m) {
						t.Fatalf("% x (%d bytes): field %d, %d bytes, %d left; protowire: %d bytes, %d left", msg[:3], len(msg), it.f.num, len(it.f.b), len(it.b), len(v), len(msg)-1-m)
					}
				}
			}
		}
	}
}

// TestCompactKVReadsTheKeyAndValueInEitherOrder pins compactKV's shape:
// a key and a value with one-byte tags and lengths, in either order (pdata
// writes the value first), is read whole; anything else is left to
// kvFields, which reads it as pdata does. A shape compactKV wrongly
// refuses costs only speed, so the tests against pdata cannot see it:
// this one can.
func TestCompactKVReadsTheKeyAndValueInEitherOrder(t *testing.T) {
	long := string(bytes.Repeat([]byte("v"), 128)) // a two-byte length
	for _, c := range []struct {
		name    string
		msg     pb
		key     string
		typ     pcommon.ValueType
		str     string
		num     int64
		refused bool
	}{
		{name: "key first, a string", msg: strAttr("k", "v"), key: "k", typ: pcommon.ValueTypeStr, str: "v"},
		{name: "value first, a string", msg: pb(nil).bytes(2, pb(nil).str(1, "v")).str(1, "k"), key: "k", typ: pcommon.ValueTypeStr, str: "v"},
		{name: "value first, a bool", msg: pb(nil).bytes(2, pb(nil).varint(2, 1)).str(1, "k"), key: "k", typ: pcommon.ValueTypeBool, num: 1},
		{name: "value first, an int", msg: pb(nil).bytes(2, pb(nil).varint(3, 7)).str(1, "k"), key: "k", typ: pcommon.ValueTypeInt, num: 7},
		{name: "key first, an int", msg: intAttr("k", 7), key: "k", typ: pcommon.ValueTypeInt, num: 7},
		{name: "an empty key and value", msg: pb(nil).str(1, "").bytes(2, pb(nil).str(1, "")), key: "", typ: pcommon.ValueTypeStr, str: ""},
		{name: "value first, an empty key last", msg: pb(nil).bytes(2, pb(nil).str(1, "v")).str(1, ""), key: "", typ: pcommon.ValueTypeStr, str: "v"},
		{name: "a field after both", msg: strAttr("k", "v").varint(3, 1), refused: true},
		{name: "two keys", msg: pb(nil).str(1, "k").str(1, "k"), refused: true},
		{name: "two values", msg: pb(nil).bytes(2, pb(nil).str(1, "v")).bytes(2, pb(nil).str(1, "v")), refused: true},
		{name: "a key alone", msg: pb(nil).str(1, "k"), refused: true},
		{name: "a value of two-byte length", msg: strAttr("k", long), refused: true},
		{name: "a key of two-byte length, value first", msg: pb(nil).bytes(2, pb(nil).str(1, "v")).str(1, long), refused: true},
		{name: "cut in the second field", msg: strAttr("k", "v")[:6], refused: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v protoValue
			key, ok := compactKV(c.msg, &v)
			if c.refused {
				if ok {
					t.Fatalf("read % x as key %q, value %+v; want it left to kvFields", []byte(c.msg), key, v)
				}
				return
			}
			num := v.i
			if v.b {
				num = 1
			}
			if !ok || string(key) != c.key || v.typ != c.typ || string(v.s) != c.str || num != c.num {
				t.Fatalf("% x: key %q, value %+v, ok %v; want key %q, %v %q %d", []byte(c.msg), key, v, ok, c.key, c.typ, c.str, c.num)
			}
		})
	}
}
