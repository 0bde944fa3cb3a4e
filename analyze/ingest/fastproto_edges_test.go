package ingest

import (
	"testing"
)

// TestFastOTLPProtoReadsEachAttributeEncodingAsPdataDoes pins the compact
// attribute path (compactKV) against pdata on the encodings next to the one
// it takes: a bool true and false, a repeated bool value (pdata: the last
// wins, so the compact path must not read the first and ignore the rest),
// a repeated string value, and a status code in the wrong wire type (pdata
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
		{"a repeated string value", request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, "x").bytes(2, pb(nil).str(1, "a").str(1, "b")))))},
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
