package ingest

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// fullEvent is a span Event with every field OTLP defines, and an
// attribute of a kept key (events' attributes are never kept).
func fullEvent() pb {
	return pb(nil).fixed64(1, 5).str(2, "exception").bytes(3, strAttr("plugin.mcp.cache_key", "not the span's")).
		bytes(3, pb(nil).str(1, "nested").bytes(2, pb(nil).bytes(5, pb(nil).bytes(1, pb(nil).str(1, "x"))))).varint(4, 2)
}

// fullLink is a span Link with every field OTLP defines.
func fullLink() pb {
	return pb(nil).bytes(1, testTraceID).bytes(2, testParent).str(3, "k=v").
		bytes(4, boolAttr("plugin.mcp.cache_hit", false)).varint(5, 1).fixed32(6, 0x100)
}

// TestFastOTLPProtoReadsSpansWithEventsAndLinks pins that a span's events
// and links, which the analysis does not read, keep its record on the
// projection path (a record with one used to go whole to pdata, at many
// times its size in memory), and that the spans and kept attributes read
// are pdata's: an event's or link's attribute of a kept key is not the
// span's.
func TestFastOTLPProtoReadsSpansWithEventsAndLinks(t *testing.T) {
	for name, rec := range map[string][]byte{
		"an event with a name":       request(baseResource, baseSpan(pb(nil).bytes(11, pb(nil).str(2, "e")))),
		"a link with a trace id":     request(baseResource, baseSpan(pb(nil).bytes(13, pb(nil).bytes(1, testTraceID)))),
		"an empty event and link":    request(baseResource, baseSpan(pb(nil).bytes(11, nil).bytes(13, nil))),
		"every field of each":        request(baseResource, baseSpan(pb(nil).bytes(11, fullEvent()).bytes(13, fullLink()))),
		"empty link ids":             request(baseResource, baseSpan(pb(nil).bytes(13, pb(nil).bytes(1, nil).bytes(2, nil)))),
		"unknown fields in each":     request(baseResource, baseSpan(pb(nil).bytes(11, pb(nil).varint(9, 1)).bytes(13, pb(nil).str(9, "x")))),
		"events and links, repeated": request(baseResource, baseSpan(pb(nil).bytes(11, fullEvent()).bytes(11, fullEvent()).bytes(13, fullLink()).varint(12, 3).varint(14, 4))),
	} {
		t.Run(name, func(t *testing.T) {
			if !checkFastProtoMatchesPdata(t, rec) {
				t.Errorf("the projection decoder fell back on a record it should take: % x", rec)
			}
		})
	}
}

// TestFastOTLPProtoLeavesMalformedEventsAndLinksToPdata pins that an
// event or link pdata refuses sends its record to pdata, which reports
// it, each check just past what pdata accepts.
func TestFastOTLPProtoLeavesMalformedEventsAndLinksToPdata(t *testing.T) {
	for name, rec := range map[string][]byte{
		"an event as a varint":           request(baseResource, baseSpan(pb(nil).varint(11, 1))),
		"a link as a fixed64":            request(baseResource, baseSpan(pb(nil).fixed64(13, 1))),
		"an event time as a varint":      request(baseResource, baseSpan(pb(nil).bytes(11, pb(nil).varint(1, 5)))),
		"an event name as a varint":      request(baseResource, baseSpan(pb(nil).bytes(11, pb(nil).varint(2, 5)))),
		"an event attribute malformed":   request(baseResource, baseSpan(pb(nil).bytes(11, pb(nil).bytes(3, pb(nil).str(1, "k").bytes(2, []byte{0x0a, 0x05, 'a'}))))),
		"an event dropped count fixed32": request(baseResource, baseSpan(pb(nil).bytes(11, pb(nil).fixed32(4, 1)))),
		"a link trace id of 15 bytes":    request(baseResource, baseSpan(pb(nil).bytes(13, pb(nil).bytes(1, testTraceID[:15])))),
		"a link span id of 9 bytes":      request(baseResource, baseSpan(pb(nil).bytes(13, pb(nil).bytes(2, append(testParent[:8:8], 0))))),
		"a link trace state as a varint": request(baseResource, baseSpan(pb(nil).bytes(13, pb(nil).varint(3, 1)))),
		"a link attribute as a varint":   request(baseResource, baseSpan(pb(nil).bytes(13, pb(nil).varint(4, 1)))),
		"a link flags as a fixed64":      request(baseResource, baseSpan(pb(nil).bytes(13, pb(nil).fixed64(6, 1)))),
		"an event cut short":             request(baseResource, baseSpan(pb(nil).bytes(11, []byte{0x12, 0x05, 'a'}))),
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
