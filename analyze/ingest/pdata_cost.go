package ingest

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// pdataMessageBytes is what pdata's ProtoUnmarshaler holds per message of
// each level it builds, with the spare room of the slices it appends them
// to and the room a slice grown past leaves for the collector: measured
// live on records of one kind of empty message repeated (a span 216
// bytes, a resource's spans 136, a scope's 120, an event 72, a link 88,
// an attribute 40, an array's value 16), and half as much again. A record
// of 2-byte empty spans holds over a hundred times its size in pdata.
var pdataMessageBytes = [...]int64{
	pbResourceSpans: 208,
	pbScopeSpans:    184,
	pbSpan:          328,
	pbEvent:         112,
	pbLink:          136,
	pbKeyValue:      64,
	pbAnyValue:      24,
	pbArrayValue:    32,
	pbKVList:        32,
}

// pdataBytes estimates the memory pdata takes to decode the protobuf
// record data: its messages, counted by a walk of the nesting fields
// (the one protoDepth follows), each at pdataMessageBytes, and its bytes,
// which the strings it copies take at most. The walk stops at MaxDepth
// (pdata decodes no deeper: cutProto cuts the rest) and at a malformed
// field (pdata stops there too, with an error).
func pdataBytes(data []byte) int64 {
	return int64(len(data)) + pdataWalk(data, pbRequest, -1)
}

// pdataWalk is pdataBytes' count of the messages nested in msg, a message
// of level lvl at depth (childDepth's).
func pdataWalk(msg []byte, lvl protoLevel, depth int) int64 {
	if depth >= MaxDepth {
		return 0
	}
	var n int64
	for len(msg) > 0 {
		num, typ, t := protowire.ConsumeTag(msg)
		if t < 0 {
			return n
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[t:])
		if m < 0 {
			return n
		}
		if c, ok := protoChildOf(lvl, num, typ); ok {
			v, _ := protowire.ConsumeBytes(msg[t:])
			n += pdataMessageBytes[c.level] + pdataWalk(v, c.level, childDepth(c, lvl, depth))
		}
		msg = msg[t+m:]
	}
	return n
}

// errPdataTooLarge is the cause of a record left out because pdata would
// take more memory to decode it than the records in flight may hold.
func errPdataTooLarge(size, need, share int64) error {
	return fmt.Errorf("%w: a protobuf record of %d KiB that only the full decoder (pdata) reads would take about %d MiB decoded, "+
		"more than the %d MiB the memory budget gives the records in flight (raise --max-memory to read it)",
		ErrRecordTooLarge, size>>10, need>>20, share>>20)
}
