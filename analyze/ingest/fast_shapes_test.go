package ingest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"
)

// The projection decoders are differential: what they take, pdata must
// take and read the same way (checkFastMatchesPdata,
// checkFastProtoMatchesPdata). Their fuzzers explore at random; the
// tables here walk the wire formats systematically, so that plain go test
// pins each field of each message: every field in every wire type and
// with edge values (the decoders must take it exactly when pdata does, or
// fall back), and every spelling the fast paths are meant to take (they
// must take it: falling back is correct but is the cost they exist to
// spare).

// protoPlace puts an extra field into one message of a record in the
// common shape, before or after the message's own fields; the record is
// otherwise request(baseResource, baseSpan()).
type protoPlace struct {
	name   string
	fields []protowire.Number // the message's known fields
	record func(with func(msg pb) pb) []byte
}

// protoPlaces are the messages the projection decoder reads or checks,
// each with its known field numbers (OTLP's trace.proto, common.proto and
// resource.proto).
func protoPlaces() []protoPlace {
	none := func(msg pb) pb { return msg }
	scope := pb(nil).str(1, "scope").str(2, "1.0")
	scopeSpans := func(withScope, with func(pb) pb) pb {
		return with(pb(nil).bytes(1, withScope(scope)).bytes(2, baseSpan()))
	}
	resourceSpans := func(withRes, withSS, with func(pb) pb) []byte {
		rs := with(pb(nil).bytes(1, withRes(baseResource)).bytes(2, scopeSpans(withSS, none)))
		return pb(nil).bytes(1, rs)
	}
	span := func(with func(pb) pb) pb { return with(baseSpan()) }
	attr := func(kv pb) []byte { return request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, kv))) }
	return []protoPlace{
		{"request", []protowire.Number{1}, func(w func(pb) pb) []byte { return w(request(baseResource, baseSpan())) }},
		{"resource spans", []protowire.Number{1, 2, 3, 1000}, func(w func(pb) pb) []byte { return resourceSpans(none, none, w) }},
		{"resource spans without a resource", []protowire.Number{1, 2, 3, 1000}, func(w func(pb) pb) []byte {
			return pb(nil).bytes(1, w(pb(nil).bytes(2, scopeSpans(none, none))))
		}},
		{"resource", []protowire.Number{1, 2, 3}, func(w func(pb) pb) []byte { return resourceSpans(w, none, none) }},
		{"scope spans", []protowire.Number{1, 2, 3}, func(w func(pb) pb) []byte {
			return pb(nil).bytes(1, pb(nil).bytes(1, baseResource).bytes(2, scopeSpans(none, w)))
		}},
		{"scope", []protowire.Number{1, 2, 3, 4}, func(w func(pb) pb) []byte { return resourceSpans(none, w, none) }},
		{"span", []protowire.Number{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, func(w func(pb) pb) []byte {
			return request(baseResource, span(w))
		}},
		{"status", []protowire.Number{2, 3}, func(w func(pb) pb) []byte {
			return request(baseResource, baseSpan(pb(nil).bytes(fieldSpanStatus, w(pb(nil).str(2, "m")))))
		}},
		{"kept attribute", []protowire.Number{1, 2, 3}, func(w func(pb) pb) []byte { return attr(w(strAttr("x", "y"))) }},
		{"skipped attribute", []protowire.Number{1, 2, 3}, func(w func(pb) pb) []byte { return attr(w(strAttr("z", "y"))) }},
		// Two fields, as compactKV reads an attribute: the key or the value
		// and one other.
		{"attribute, its key alone", []protowire.Number{1, 2, 3}, func(w func(pb) pb) []byte { return attr(w(pb(nil).str(1, "x"))) }},
		{"attribute, its value alone", []protowire.Number{1, 2, 3}, func(w func(pb) pb) []byte {
			return attr(w(pb(nil).bytes(2, pb(nil).str(1, "v"))))
		}},
		{"kept value", []protowire.Number{1, 2, 3, 4, 5, 6, 7, 8}, func(w func(pb) pb) []byte {
			return attr(pb(nil).str(1, "x").bytes(2, w(nil)))
		}},
		{"skipped value", []protowire.Number{1, 2, 3, 4, 5, 6, 7, 8}, func(w func(pb) pb) []byte {
			return attr(pb(nil).str(1, "z").bytes(2, w(nil)))
		}},
		{"array", []protowire.Number{1}, func(w func(pb) pb) []byte {
			return attr(pb(nil).str(1, "z").bytes(2, pb(nil).bytes(fieldValueArray, w(pb(nil).bytes(1, pb(nil).varint(3, 1))))))
		}},
		{"kvlist", []protowire.Number{1}, func(w func(pb) pb) []byte {
			return attr(pb(nil).str(1, "z").bytes(2, pb(nil).bytes(fieldValueKVList, w(pb(nil).bytes(1, strAttr("a", "b"))))))
		}},
		{"kvlist entry", []protowire.Number{1, 2, 3}, func(w func(pb) pb) []byte {
			return attr(pb(nil).str(1, "z").bytes(2, pb(nil).bytes(fieldValueKVList, pb(nil).bytes(1, w(strAttr("a", "b"))))))
		}},
	}
}

// protoFieldVariants are one field number in each wire type, with edge
// values: zero, one, the enums' first values out of range, a value of
// ten varint bytes, an empty and a two-byte length, a length of 0x80, a
// nested message of each kind the decoders read, a group.
func protoFieldVariants(n protowire.Number) map[string]pb {
	long := strings.Repeat("a", 0x80)
	return map[string]pb{
		"varint 0":            pb(nil).varint(n, 0),
		"varint 1":            pb(nil).varint(n, 1),
		"varint 3":            pb(nil).varint(n, 3),
		"varint 6":            pb(nil).varint(n, 6),
		"varint max":          pb(nil).varint(n, 1<<64-1),
		"fixed64":             pb(nil).fixed64(n, 1),
		"fixed32":             pb(nil).fixed32(n, 1),
		"bytes empty":         pb(nil).bytes(n, nil),
		"bytes 8":             pb(nil).bytes(n, testSpanID),
		"bytes 16":            pb(nil).bytes(n, testTraceID),
		"bytes long":          pb(nil).str(n, long),
		"bytes a string":      pb(nil).bytes(n, pb(nil).str(1, "v")),
		"bytes a bool":        pb(nil).bytes(n, pb(nil).varint(2, 1)),
		"bytes an int":        pb(nil).bytes(n, pb(nil).varint(3, 1<<63)),
		"bytes a key value":   pb(nil).bytes(n, strAttr("x", "v")),
		"bytes a long string": pb(nil).bytes(n, pb(nil).str(1, long)),
		"bytes malformed":     pb(nil).bytes(n, []byte{0x0a, 0x05, 'a'}),
		"bytes of one byte":   pb(nil).bytes(n, []byte{0x08}),
		"bytes a cut bool":    pb(nil).bytes(n, []byte{0x10, 0x80}),
		"bytes a cut int":     pb(nil).bytes(n, []byte{0x18, 0x80}),
		"group":               protowire.AppendTag(protowire.AppendTag(nil, n, protowire.StartGroupType), n, protowire.EndGroupType),
	}
}

// TestFastOTLPProtoTakesWhatPdataTakesInEveryField puts each variant of
// each known field into each message, first and last (a field read after
// another of another wire type must not see the other's bytes): the projection decoder must either
// fall back or read the record as pdata does (pdata refusing it included:
// then the decoder must fall back).
func TestFastOTLPProtoTakesWhatPdataTakesInEveryField(t *testing.T) {
	fast, pdataRefused := 0, 0
	for _, place := range protoPlaces() {
		for _, n := range append(place.fields, 99) {
			variants := protoFieldVariants(n)
			for _, name := range slices.Sorted(maps.Keys(variants)) {
				v := variants[name]
				for where, with := range map[string]func(pb) pb{
					"first": func(msg pb) pb { return append(slices.Clip(v), msg...) },
					"last":  func(msg pb) pb { return append(slices.Clip(msg), v...) },
				} {
					rec := place.record(with)
					t.Run(fmt.Sprintf("%s/field %d/%s/%s", place.name, n, name, where), func(t *testing.T) {
						if checkFastProtoMatchesPdata(t, rec) {
							fast++
						}
						var u ptrace.ProtoUnmarshaler
						if _, err := u.UnmarshalTraces(rec); err != nil {
							pdataRefused++
						}
					})
				}
			}
		}
	}
	t.Logf("the projection decoder took %d records, pdata refused %d", fast, pdataRefused)
	// The table is only a test if both sides occur.
	if fast == 0 || pdataRefused == 0 {
		t.Errorf("the projection decoder took %d records and pdata refused %d: the table tests one side only", fast, pdataRefused)
	}
}

// fastProtoShapes are records the projection decoder takes: every field it
// reads, in each encoding pdata writes or another exporter may.
func fastProtoShapes() map[string][]byte {
	long := strings.Repeat("v", 200) // a two-byte length: the general path
	return map[string][]byte{
		"every span field": request(baseResource.varint(fieldResourceDropped, 2), baseSpan(pb(nil).str(fieldSpanTraceState, "k=v").
			varint(fieldSpanDroppedAttrs, 1).varint(fieldSpanDroppedEvents, 2).varint(fieldSpanDroppedLinks, 3).fixed32(fieldSpanFlags, 0x301))),
		"every kind and code": request(baseResource, baseSpan(pb(nil).varint(fieldSpanKind, 0)), baseSpan(pb(nil).varint(fieldSpanKind, 5)),
			baseSpan(pb(nil).bytes(fieldSpanStatus, pb(nil).varint(fieldStatusCode, 0))), baseSpan(pb(nil).bytes(fieldSpanStatus, pb(nil).varint(fieldStatusCode, 1)))),
		"scope with attributes": pb(nil).bytes(1, pb(nil).bytes(1, baseResource).bytes(2, pb(nil).bytes(1, pb(nil).str(1, "s").str(2, "v").
			bytes(3, strAttr("q", "r")).varint(4, 1)).bytes(2, baseSpan()).str(3, "https://opentelemetry.io/schemas/1.26.0")).str(3, "u")),
		"kept values of each type": request(baseResource.bytes(1, intAttr("x", -1)), baseSpan(pb(nil).bytes(fieldSpanAttributes, intAttr("plugin.mcp.attempt", 1<<40)).
			bytes(fieldSpanAttributes, boolAttr("x", false)).bytes(fieldSpanAttributes, strAttr("mcp.tool.name", "")))),
		"kept values, value first": request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, pb(nil).bytes(2, pb(nil).varint(3, 7)).str(1, "plugin.mcp.attempt")).
			bytes(fieldSpanAttributes, pb(nil).bytes(2, pb(nil).varint(2, 1)).str(1, "x")))),
		"long strings": request(baseResource.bytes(1, strAttr("service.name", long)), baseSpan(pb(nil).str(fieldSpanName, long).
			bytes(fieldSpanAttributes, strAttr("plugin.mcp.cache_key", long)).bytes(fieldSpanAttributes, strAttr(long, "v")))),
		"skipped values of each type": request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, pb(nil).str(1, "d").bytes(2, pb(nil).fixed64(4, 1))).
			bytes(fieldSpanAttributes, pb(nil).str(1, "b").bytes(2, pb(nil).bytes(7, []byte{0, 1}))).
			bytes(fieldSpanAttributes, pb(nil).str(1, "a").bytes(2, pb(nil).bytes(5, pb(nil).bytes(1, pb(nil).str(1, "e")).bytes(1, pb(nil).fixed64(4, 2))))).
			bytes(fieldSpanAttributes, pb(nil).str(1, "m").bytes(2, pb(nil).bytes(6, pb(nil).bytes(1, intAttr("k", 3)).bytes(1, pb(nil).str(1, "e"))))))),
		// Its leaf is a value at maxProtoDepth: one array more and the
		// decoder leaves the record to pdata (TestFastOTLPProtoFallsBack).
		"a value nested as deep as walked": request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, deepValue(maxProtoDepth-1)))),
		"an empty value, skipped":          request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, pb(nil).str(1, "z").bytes(2, nil)))),
		"two resources": pb(nil).bytes(1, pb(nil).bytes(1, baseResource).bytes(2, pb(nil).bytes(2, baseSpan()))).
			bytes(1, pb(nil).bytes(2, pb(nil).bytes(2, baseSpan(pb(nil).bytes(fieldSpanSpanID, testParent))))).bytes(1, pb(nil).bytes(1, baseResource)),
		"zero ids and times": request(nil, pb(nil).bytes(1, testTraceID).bytes(2, testSpanID).fixed64(fieldSpanStart, 0).fixed64(fieldSpanEnd, 1<<64-1)),
	}
}

func TestFastOTLPProtoTakesEveryEncodingOfTheCommonShape(t *testing.T) {
	for name, rec := range fastProtoShapes() {
		t.Run(name, func(t *testing.T) {
			if !checkFastProtoMatchesPdata(t, rec) {
				t.Errorf("the projection decoder fell back on a record it should take: % x", rec)
			}
		})
	}
}

// fastJSONShapes are OTLP JSON lines the fast path takes: every member it
// reads, in camelCase and snake_case, enums as numbers and names, 64-bit
// numbers as numbers and strings, white space between every token,
// escapes in the strings it skips.
func fastJSONShapes() map[string]string {
	camel := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gw"}},{"key":"x","value":{"intValue":0}}],"droppedAttributesCount":0},` +
		`"scopeSpans":[{"scope":{"name":"s","version":"1.0","attributes":[{"key":"q","value":{"boolValue":true}}],"droppedAttributesCount":1},` +
		`"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","parentSpanId":"2122232425262728","traceState":"k=v","flags":257,` +
		`"name":"n","kind":5,"startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"18446744073709551615",` +
		`"attributes":[{"key":"plugin.mcp.attempt","value":{"intValue":"-9223372036854775808"}},{"key":"plugin.mcp.cache_hit","value":{"boolValue":false}},` +
		`{"key":"mcp.tool.name","value":{"stringValue":""}},{"key":"ratio","value":{"doubleValue":-0.5}},{"key":"x","value":{"intValue":9223372036854775807}}],` +
		`"droppedAttributesCount":4294967295,"events":[],"droppedEventsCount":0,"links":[],"droppedLinksCount":0,"status":{"code":2,"message":"boom"}}],` +
		`"schemaUrl":"u"}],"schemaUrl":""}]}`
	snake := `{"resource_spans":[{"resource":{"attributes":[],"dropped_attributes_count":2},"scope_spans":[{"scope":{"name":"","dropped_attributes_count":0},` +
		`"spans":[{"trace_id":"0102030405060708090A0B0C0D0E0F10","span_id":"1112131415161718","parent_span_id":"","trace_state":"","flags":0,` +
		`"name":"n","kind":"SPAN_KIND_CONSUMER","start_time_unix_nano":0,"end_time_unix_nano":"1",` +
		`"attributes":[{"key":"x","value":{"int_value":"42"}},{"key":"mcp.tool.name","value":{"string_value":"t"}},{"key":"plugin.mcp.cache_hit","value":{"bool_value":true}},` +
		`{"key":"r","value":{"double_value":1}}],` +
		`"dropped_attributes_count":0,"events":[],"dropped_events_count":3,"links":[],"dropped_links_count":4,"status":{"code":"STATUS_CODE_ERROR","message":"m"}}],` +
		`"schema_url":"u"}],"schema_url":"v"}]}`
	spaced := strings.NewReplacer(`":`, "\" :\t", `,"`, " ,\r\n\"", `[`, "[ ", `]`, " ]", `{`, "{\n", `}`, "\t}").Replace(camel)
	escapes := `{"resourceSpans":[{"resource":{},"scopeSpans":[{"scope":{"name":"a\"\\\/\b\f\n\r\t\u00e9\u00C9","version":"\u0041\u0009\u00fF\u00aA"},` +
		`"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","traceState":"\"k\"=\"v\"",` +
		`"attributes":[{"key":"y","value":{"stringValue":"\n\u20ac"}},{"key":"x","value":{"stringValue":"plain"}}],"status":{"message":"\\"}}],"schemaUrl":"\/"}]}]}`
	enums := `{"resourceSpans":[{"scopeSpans":[{"spans":[` +
		`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","kind":0,"status":{"code":0}},` +
		`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161719","kind":"SPAN_KIND_UNSPECIFIED","status":{"code":"STATUS_CODE_UNSET"}},` +
		`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"111213141516171a","kind":"SPAN_KIND_INTERNAL","status":{"code":"STATUS_CODE_OK"}},` +
		`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"111213141516171b","kind":"SPAN_KIND_SERVER","status":{"code":1}},` +
		`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"111213141516171c","kind":"SPAN_KIND_CLIENT","status":{}},` +
		`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"111213141516171d","kind":"SPAN_KIND_PRODUCER"},` +
		`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"111213141516171e","kind":4,"startTimeUnixNano":9,"endTimeUnixNano":"0"}]}]}]}`
	return map[string]string{"camelCase": camel, "snake_case": snake, "white space everywhere": spaced, "escapes in skipped strings": escapes, "every enum": enums}
}

func TestFastOTLPJSONTakesEverySpellingOfTheCommonShape(t *testing.T) {
	for name, line := range fastJSONShapes() {
		t.Run(name, func(t *testing.T) {
			if !checkFastMatchesPdata(t, []byte(line)) {
				t.Errorf("the fast path fell back on a line it should take:\n%s", line)
			}
		})
	}
}

// jsonMemberValues returns where each member's value of a compact JSON
// line starts and ends.
func jsonMemberValues(t *testing.T, line string) [][2]int {
	var out [][2]int
	for i := 0; i+1 < len(line); i++ {
		if line[i] != '"' || line[i+1] != ':' {
			continue
		}
		start := i + 2
		dec := json.NewDecoder(strings.NewReader(line[start:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("the value at byte %d of the base line: %v", start, err)
		}
		out = append(out, [2]int{start, start + int(dec.InputOffset())})
	}
	return out
}

// jsonValueVariants are values of each JSON type, with the edges of the
// numbers and strings the fast path reads.
var jsonValueVariants = []string{
	`0`, `1`, `-1`, `6`, `-0`, `01`, `1.5`, `1e2`, `4294967296`, `18446744073709551616`, `-9223372036854775809`,
	`"1"`, `"-1"`, `""`, `"01"`, `"18446744073709551615"`, `"18446744073709551616"`, `"9223372036854775808"`, `"1.5"`,
	`"0102030405060708090a0b0c0d0e0f10"`, `"1112131415161718"`, `"0102030405060708090a0b0c0d0e0f1g"`,
	`"SPAN_KIND_SERVER"`, `"STATUS_CODE_OK"`, `"a\n"`, `"\u00e9"`, `"\x"`, "\"a\x01\"",
	`true`, `false`, `null`, `{}`, `[]`, `[{}]`, `{"stringValue":"v"}`, `{"intValue":"3"}`, `[{"key":"x","value":{"intValue":1}}]`,
}

// TestFastOTLPJSONTakesWhatPdataTakesInEveryMember puts each value
// variant in place of each member's value of the camelCase and snake_case
// shapes, and adds an unknown member to each of their objects: the fast
// path must either fall back or read the line as pdata does (pdata
// refusing it included: then the fast path must fall back).
func TestFastOTLPJSONTakesWhatPdataTakesInEveryMember(t *testing.T) {
	shapes := fastJSONShapes()
	fast, pdataRefused := 0, 0
	for _, shape := range []string{"camelCase", "snake_case"} {
		base := shapes[shape]
		for _, at := range jsonMemberValues(t, base) {
			for _, v := range jsonValueVariants {
				line := []byte(base[:at[0]] + v + base[at[1]:])
				if checkFastMatchesPdata(t, line) {
					fast++
				}
				if _, err := unmarshalOTLPJSON(line, nil); err != nil {
					pdataRefused++
				}
			}
		}
		// And each object with a member the fast path does not know.
		for i := range len(base) {
			if base[i] == '{' {
				checkFastMatchesPdata(t, []byte(base[:i+1]+`"zz":1,`+base[i+1:]))
			}
		}
	}
	t.Logf("the fast path took %d lines, pdata refused %d", fast, pdataRefused)
	if fast == 0 || pdataRefused == 0 {
		t.Errorf("the fast path took %d lines and pdata refused %d: the table tests one side only", fast, pdataRefused)
	}
}
