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
// take more memory to decode it than the records in flight may hold; what
// names the record.
func errPdataTooLarge(what string, size, need, share int64) error {
	return fmt.Errorf("%w: %s of %d KiB that only the full decoder (pdata) reads would take about %d MiB decoded, "+
		"more than the %d MiB the memory budget gives the records in flight (raise --max-memory to read it)",
		ErrRecordTooLarge, what, size>>10, need>>20, share>>20)
}

// pdataCharge is what one record on its way through pdata holds charged
// to the share of the budget in flight: what each step is about to build
// is charged before it starts (add), and once the record is decoded what
// it no longer holds is given back (keep); the rest is the result's
// held, given back once the sink has taken it. A nil pdataCharge (a read
// without a share) charges nothing.
type pdataCharge struct {
	share *inflight
	r     rec
	what  string // the record, as errPdataTooLarge names it
	size  int64  // the record's bytes
	held  int64
}

// newPdataCharge returns the charge of record r, of size bytes, that
// what names; nil when share is.
func newPdataCharge(share *inflight, r rec, what string, size int) *pdataCharge {
	if share == nil {
		return nil
	}
	return &pdataCharge{share: share, r: r, what: what, size: int64(size)}
}

// add charges n bytes more, waiting for room as inflight.chargePdata
// does. A record whose charges would come to more than the share holds is
// refused (errPdataTooLarge: it could never be read within the budget),
// and so is one whose read stopped; either gives back what it held.
func (c *pdataCharge) add(n int64) error {
	if c == nil {
		return nil
	}
	if c.held+n > c.share.size {
		err := errPdataTooLarge(c.what, c.size, c.held+n, c.share.size)
		c.keep(0)
		return err
	}
	took, err := c.share.chargePdata(c.r.seq, n, c.r.consumer)
	if err != nil {
		c.keep(0)
		return err
	}
	c.held += took
	return nil
}

// keep gives back what c holds past n, what the decoded record holds
// until the sink has taken it, and returns what c still holds, for
// result.held.
func (c *pdataCharge) keep(n int64) int64 {
	if c == nil {
		return 0
	}
	if c.held > n {
		c.share.give(c.held - n)
		c.held = n
	}
	return c.held
}

// holding is what c holds.
func (c *pdataCharge) holding() int64 {
	if c == nil {
		return 0
	}
	return c.held
}

// json scans a JSON record whose value is a message of level top for
// what decoding it takes (jsonCosts); nothing when c charges nothing.
func (c *pdataCharge) json(data []byte, top protoLevel) jsonCost {
	if c == nil {
		return jsonCost{}
	}
	return jsonCosts(data, top)
}

// normalizing adds to cost, data's, what normalising data takes past the
// scan (jsonCost.withEncoding); nothing when c charges nothing.
func (c *pdataCharge) normalizing(cost jsonCost, data []byte) jsonCost {
	if c == nil {
		return cost
	}
	return cost.withEncoding(data)
}

// proto is pdataBytes of a protobuf record; 0 when c charges nothing.
func (c *pdataCharge) proto(data []byte) int64 {
	if c == nil {
		return 0
	}
	return pdataBytes(data)
}
