package ingest

import (
	"fmt"
	"strings"
	"testing"
)

// TestFastOTLPJSONRefusesTheStringsPdataRefuses puts every raw control
// byte and every backslash escape JSON does not define (and \u with a
// byte that is no hex digit) into each place a string can stand in a
// span's line, kept or skipped: pdata refuses every one of those lines,
// and the fast path must never take one (checkFastMatchesPdata fails when
// it does). Strings are most of a line and skipped ones are read by a
// scanner of their own, so each place is its own case.
func TestFastOTLPJSONRefusesTheStringsPdataRefuses(t *testing.T) {
	const id = `"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718"`
	places := map[string]string{
		"scope name":            `{"resourceSpans":[{"scopeSpans":[{"scope":{"name":"%s"},"spans":[{` + id + `,"name":"n"}]}]}]}`,
		"trace state":           `{"resourceSpans":[{"scopeSpans":[{"spans":[{` + id + `,"traceState":"%s","name":"n"}]}]}]}`,
		"span name":             `{"resourceSpans":[{"scopeSpans":[{"spans":[{` + id + `,"name":"%s"}]}]}]}`,
		"skipped attribute":     `{"resourceSpans":[{"scopeSpans":[{"spans":[{` + id + `,"name":"n","attributes":[{"key":"skipped","value":{"stringValue":"%s"}}]}]}]}]}`,
		"kept attribute":        `{"resourceSpans":[{"scopeSpans":[{"spans":[{` + id + `,"name":"n","attributes":[{"key":"x","value":{"stringValue":"%s"}}]}]}]}]}`,
		"attribute key":         `{"resourceSpans":[{"scopeSpans":[{"spans":[{` + id + `,"name":"n","attributes":[{"key":"%s","value":{"stringValue":"v"}}]}]}]}]}`,
		"skipped resource attr": `{"resourceSpans":[{"resource":{"attributes":[{"key":"skipped","value":{"stringValue":"%s"}}]},"scopeSpans":[{"spans":[{` + id + `,"name":"n"}]}]}]}`,
		"status message":        `{"resourceSpans":[{"scopeSpans":[{"spans":[{` + id + `,"name":"n","status":{"message":"%s","code":2}}]}]}]}`,
	}
	var bad []string
	for c := range 0x20 {
		bad = append(bad, "a"+string(rune(c))+"b")
	}
	for c := byte(0x20); c < 0x7f; c++ {
		if !strings.ContainsRune(`"\/bfnrtu`, rune(c)) {
			bad = append(bad, `a\`+string(c)+"b")
		}
	}
	bad = append(bad, `a\u00g0b`, `a\u12`, `a\uZZZZb`)
	for place, format := range places {
		t.Run(place, func(t *testing.T) {
			for _, s := range bad {
				line := []byte(fmt.Sprintf(format, s))
				if _, err := unmarshalOTLPJSON(line, nil); err == nil {
					t.Fatalf("pdata reads %q in the %s: the case tests nothing", s, place)
				}
				checkFastMatchesPdata(t, line)
			}
		})
	}
}
