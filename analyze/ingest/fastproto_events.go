package ingest

import "google.golang.org/protobuf/encoding/protowire"

// Field numbers of a span's Event and Link messages (trace/v1/trace.proto;
// their attributes' are depth.go's).
const (
	fieldEventTime      = 1
	fieldEventName      = 2
	fieldEventDropped   = 4
	fieldLinkTraceID    = 1
	fieldLinkSpanID     = 2
	fieldLinkTraceState = 3
	fieldLinkDropped    = 5
	fieldLinkFlags      = 6
)

// event checks a span's Event as pdata reads one; nothing of it is kept.
// The analysis reads no event, and a span with one (an exception, a
// retry) is common: read here, its record stays on the projection path
// rather than going whole to pdata, which builds every attribute of the
// record at several times its size.
func (d *protoDec) event(msg []byte) bool {
	it := fieldIter{b: msg}
	for it.next() {
		f := &it.f
		ok := true
		switch f.num {
		case fieldEventTime:
			ok = f.is(protowire.Fixed64Type)
		case fieldEventName:
			ok = f.is(protowire.BytesType)
		case fieldEventAttributes:
			ok = d.keyValueField(f, nil)
		case fieldEventDropped:
			ok = f.is(protowire.VarintType)
		}
		if !ok {
			return false
		}
	}
	return !it.bad
}

// link checks a span's Link as pdata reads one (its ids empty or of their
// length); nothing of it is kept, as for event.
func (d *protoDec) link(msg []byte) bool {
	var trace [16]byte
	var span [8]byte
	it := fieldIter{b: msg}
	for it.next() {
		f := &it.f
		ok := true
		switch f.num {
		case fieldLinkTraceID:
			ok = f.id(trace[:])
		case fieldLinkSpanID:
			ok = f.id(span[:])
		case fieldLinkTraceState:
			ok = f.is(protowire.BytesType)
		case fieldLinkAttributes:
			ok = d.keyValueField(f, nil)
		case fieldLinkDropped:
			ok = f.is(protowire.VarintType)
		case fieldLinkFlags:
			ok = f.is(protowire.Fixed32Type)
		}
		if !ok {
			return false
		}
	}
	return !it.bad
}
