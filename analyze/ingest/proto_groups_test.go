package ingest

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"
)

// group appends field num as a group holding content.
func (m pb) group(num protowire.Number, content pb) pb {
	m = protowire.AppendTag(m, num, protowire.StartGroupType)
	m = append(m, content...)
	return protowire.AppendTag(m, num, protowire.EndGroupType)
}

// nestedGroups is depth groups of field 1003 nested in one another, the
// innermost holding a varint.
func nestedGroups(depth int) pb {
	g := pb(nil).varint(1, 1)
	for range depth {
		g = pb(nil).group(1003, g)
	}
	return g
}

// unknownGroup is an unknown field 1003 written as a group of one varint.
var unknownGroup = pb(nil).group(1003, pb(nil).varint(1, 1))

// groupCases are records with groups and what each reads as: the record
// without its groups, or nil when it is refused.
func groupCases() []struct {
	name      string
	rec, want []byte
} {
	plain := request(baseResource, baseSpan())
	everyType := pb(nil).varint(1, 300).fixed32(2, 7).fixed64(3, 9).str(4, "s").group(5, pb(nil).varint(1, 1))
	groupedAttr := pb(nil).bytes(9, append(strAttr("plugin.mcp.cache_key", "k2"), unknownGroup...))
	groupedValue := pb(nil).bytes(9, pb(nil).str(1, "plugin.mcp.cache_key").bytes(2, append(pb(nil).str(1, "k2"), unknownGroup...)))
	wantAttr := request(baseResource, baseSpan(pb(nil).bytes(9, strAttr("plugin.mcp.cache_key", "k2"))))
	return []struct {
		name      string
		rec, want []byte
	}{
		{"a group in a span", request(baseResource, baseSpan(unknownGroup)), plain},
		{"an empty group ending the record", append(slices.Clone(plain), pb(nil).group(1003, nil)...), plain},
		{"a group ending the record", append(slices.Clone(plain), unknownGroup...), plain},
		{"a group in the resource", request(append(slices.Clone(baseResource), unknownGroup...), baseSpan()), plain},
		{"a group in an attribute", request(baseResource, baseSpan(groupedAttr)), wantAttr},
		{"a group in a second status", request(baseResource, baseSpan(pb(nil).bytes(fieldSpanStatus, unknownGroup))), plain},
		{"a group in an attribute's value", request(baseResource, baseSpan(groupedValue)), wantAttr},
		{"a group holding every wire type", request(baseResource, baseSpan(pb(nil).group(1003, everyType))), plain},
		{"groups nested as deep as the bound", request(baseResource, baseSpan(nestedGroups(maxGroupDepth))), plain},
		{"groups nested one deeper", request(baseResource, baseSpan(nestedGroups(maxGroupDepth+1))), nil},
		{"a group closed by another field", request(baseResource, baseSpan(protowire.AppendTag(protowire.AppendTag(nil, 1003, protowire.StartGroupType), 1004, protowire.EndGroupType))), nil},
		{"a group never closed", append(slices.Clone(plain), protowire.AppendTag(nil, 1003, protowire.StartGroupType)...), nil},
		{"an end of group without a start", append(slices.Clone(plain), protowire.AppendTag(nil, 1003, protowire.EndGroupType)...), nil},
	}
}

// TestProtoGroupsInUnknownFieldsAreSkipped pins that an unknown field
// written as a group, legal protobuf, is skipped wherever it stands and
// however it nests (up to maxGroupDepth), by the projection decoder and
// by the pdata path alike: the record reads as it does without the group.
// A malformed group, or one nested past the bound, still refuses the
// record on both.
func TestProtoGroupsInUnknownFieldsAreSkipped(t *testing.T) {
	var u ptrace.ProtoUnmarshaler
	for _, tc := range groupCases() {
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			if tc.want != nil {
				td, err := u.UnmarshalTraces(tc.want)
				if err != nil {
					t.Fatalf("pdata refuses the record without groups: %v", err)
				}
				want = canonSpans(td)
			}
			checkFastOnGroups(t, tc.rec, tc.want)
			td, err := unmarshalOTLPProto(tc.rec, nil)
			if (err == nil) != (tc.want != nil) {
				t.Fatalf("the pdata path: error %v, want one %v", err, tc.want == nil)
			}
			if err == nil {
				diffCanon(t, canonSpans(td), want)
			}
			checkReadOnGroups(t, tc.rec, tc.want != nil)
		})
	}
}

// checkFastOnGroups checks that the projection decoder takes rec when
// want (rec without its groups) is not nil, reading what pdata reads from
// want, and gives it up otherwise.
func checkFastOnGroups(t *testing.T, rec, want []byte) {
	t.Helper()
	keys := newKeepSet(testKeep)
	b, ok := decodeFastProto(rec, keys)
	if ok != (want != nil) {
		t.Fatalf("the projection decoder took the record: %v, want %v", ok, want != nil)
	}
	if !ok {
		return
	}
	defer putBatch(b)
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(want)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := keptView(batchTraces(b), keys), keptView(td, keys); !slices.Equal(g, w) {
		t.Errorf("the projection decoder read\n%q\nwant\n%q", g, w)
	}
}

// checkReadOnGroups reads rec as a one-record protobuf dump into a
// BatchSink and into a plain Sink: whole (its one span) when reads, else
// refused (the input's only record, so an error).
func checkReadOnGroups(t *testing.T, rec []byte, reads bool) {
	t.Helper()
	framed := binary.BigEndian.AppendUint32(nil, uint32(len(rec)))
	framed = append(framed, rec...)
	for _, sink := range []Sink{&batchSink{}, SinkFunc(func(*Input, ptrace.Traces) error { return nil })} {
		inputs, err := Read(t.Context(), []string{"-"}, ReadOptions{Stdin: bytes.NewReader(framed), Keep: testKeep, Format: FormatOTLPProto}, sink)
		switch {
		case reads && (err != nil || inputs[0].Spans != 1 || inputs[0].Partial):
			t.Errorf("%T: read %+v, %v; want its one span, whole", sink, inputs, err)
		case !reads && err == nil:
			t.Errorf("%T: read %+v; want the record refused", sink, inputs)
		}
	}
}
