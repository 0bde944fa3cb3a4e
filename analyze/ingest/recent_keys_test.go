package ingest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// recentKeysLine is one OTLP JSON request of a resource with the
// attribute keys res and one span per list of spanKeys, every value the
// string "v" plus the key's position, written as compactAttr reads it.
func recentKeysLine(res []string, spanKeys ...[]string) []byte {
	attrs := func(keys []string) string {
		var a []string
		for i, k := range keys {
			a = append(a, fmt.Sprintf(`{"key":%q,"value":{"stringValue":"v%d"}}`, k, i))
		}
		return "[" + strings.Join(a, ",") + "]"
	}
	var sp []string
	for i, keys := range spanKeys {
		sp = append(sp, fmt.Sprintf(`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"11121314151617%02x","name":"n","attributes":%s,"status":{}}`, i+1, attrs(keys)))
	}
	return []byte(`{"resourceSpans":[{"resource":{"attributes":` + attrs(res) + `},"scopeSpans":[{"spans":[` + strings.Join(sp, ",") + `]}]}]}`)
}

// TestRecentKeysReadEachKeyAsItsOwn pins that a remembered attribute key
// answers only for itself: keys one writer writes with the same first
// sixteen bytes, a key that is a prefix of another, one key kept on
// resources and not on spans, and keys too long to remember that share
// their first 24 bytes. Each line repeats its keys over several spans, in
// both orders, so each is read once remembered.
func TestRecentKeysReadEachKeyAsItsOwn(t *testing.T) {
	const long = "a.key.twenty.four.bytes."
	keep := KeepAttrs{
		Span:     []string{"plugin.mcp.cache_key", "x", long + "kept", "gen_ai.tool.name"},
		Resource: []string{"service.name"},
	}
	tests := map[string][]byte{
		"one writer's keys alike in their first sixteen bytes": recentKeysLine(nil,
			[]string{"plugin.mcp.cache_key", "plugin.mcp.cache_hit"}, []string{"plugin.mcp.cache_hit", "plugin.mcp.cache_key"},
			[]string{"plugin.mcp.cache_key", "plugin.mcp.cache_hit"}),
		"a key a prefix of another": recentKeysLine(nil,
			[]string{"xy", "x"}, []string{"x", "xy"}, []string{"xy", "x", "xyz"}),
		"a key kept on resources only": recentKeysLine([]string{"service.name"},
			[]string{"service.name", "gen_ai.tool.name"}, []string{"gen_ai.tool.name", "service.name"}),
		"keys too long to remember alike in their first 24 bytes": recentKeysLine(nil,
			[]string{long + "drop", long + "kept"}, []string{long + "kept", long + "drop"}, []string{long + "drop"}),
	}
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			if !checkFastMatchesPdataKeeping(t, line, keep) {
				t.Fatalf("the fast path gave up on\n%s", line)
			}
			// The comparison above sees kept keys only: a key kept where
			// its filter keeps nothing would pass it.
			b, _ := decodeFastOTLP(line, newKeepSet(keep))
			defer putBatch(b)
			for i := range b.Spans {
				for _, a := range b.SpanAttrs(&b.Spans[i]) {
					if !slices.Contains(keep.Span, a.Key) {
						t.Errorf("span %d keeps %q, which only resources keep", i, a.Key)
					}
				}
			}
		})
	}
}

// TestRecentKeysGuessOnlyWhatWasRemembered pins a remembered key's
// guess: the key with its closing quote (not a longer key it prefixes),
// for the filter that answered only, and keys up to maxPattern-1 bytes
// (the quote takes the last) remembered, longer ones not.
func TestRecentKeysGuessOnlyWhatWasRemembered(t *testing.T) {
	input := func(key string) []byte { return []byte(key + `","value":{"stringValue":"v"}}`) }
	var f, other keyFilter
	var g recentKeys
	for _, filter := range []*keyFilter{&f, nil} {
		if e := g.guess(filter, input("x")); e != nil {
			t.Errorf("an empty memory guessed %+v (filter %p)", e, filter)
		}
	}
	g.remember(nil, input("x"), 1, "")
	if e := g.guess(nil, input("x")); e != nil {
		t.Errorf("a key read for the nil filter, which keeps nothing, guessed %+v", e)
	}
	g.remember(&f, input("x"), 1, "x")
	if e := g.guess(&f, input("x")); e == nil || e.kept != "x" || len(e.pat.s) != 2 {
		t.Errorf("guess of the key remembered = %+v, want x, kept, two bytes with its quote", e)
	}
	if e := g.guess(&f, input("xy")); e != nil {
		t.Errorf("a key remembered guessed %q, which it prefixes", "xy")
	}
	if e := g.guess(&other, input("x")); e != nil {
		t.Error("a key remembered for one filter guessed for another")
	}
	g.remember(nil, input("x"), 1, "")
	if e := g.guess(&f, input("x")); e == nil {
		t.Error("a key read for the nil filter took the slot of one remembered")
	}
	for _, n := range []int{maxPattern - 1, maxPattern} {
		key := strings.Repeat("k", n)
		g.remember(&f, input(key), n, key)
		if e, want := g.guess(&f, input(key)), n < maxPattern; (e != nil) != want {
			t.Errorf("a key of %d bytes guessed: %v, want %v", n, e != nil, want)
		}
	}
}

// TestAValueLikeItsKeysLastIsReadAsItsOwnText pins compactAttr's reading
// of a kept key's value as the key's last one (nextIsQuoted): only the very
// text between two quotes is that value. Values that extend the last one,
// are its start, are empty, or hold an escape after its text follow it
// here (one with the closing braces a compact attribute ends with); each
// must read as pdata reads it, and the line cut anywhere, or with a value
// that lost its opening quote, must be refused as pdata refuses it.
func TestAValueLikeItsKeysLastIsReadAsItsOwnText(t *testing.T) {
	values := []string{"cold", "cold", "colder", "cold", "col", "cold", "", "cold", "cold", "cold ", "cold", "cold}}}", "cold"}
	var sp []string
	for i, v := range values {
		sp = append(sp, fmt.Sprintf(`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"11121314151617%02x","name":"n",`+
			`"attributes":[{"key":"plugin.mcp.cache_key","value":{"stringValue":%q}}],"status":{}}`, i+1, v))
	}
	line := []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[` + strings.Join(sp, ",") + `]}]}]}`)
	if !checkFastMatchesPdata(t, line) {
		t.Fatalf("the fast path gave up on\n%s", line)
	}
	b, _ := decodeFastOTLP(line, newKeepSet(testKeep))
	var got []string
	for i := range b.Spans {
		for _, a := range b.SpanAttrs(&b.Spans[i]) {
			got = append(got, a.Str)
		}
	}
	putBatch(b)
	if !slices.Equal(got, values) {
		t.Errorf("values read %q, want %q", got, values)
	}
	escaped := strings.Replace(string(line), `"stringValue":"colder"`, `"stringValue":"cold\u0041"`, 1)
	checkFastMatchesPdata(t, []byte(escaped)) // the fast path may give up here, never read "cold"
	unquoted := []byte(strings.Replace(string(line), `"spanId":"1112131415161709","name":"n","attributes":[{"key":"plugin.mcp.cache_key","value":{"stringValue":"cold"`,
		`"spanId":"1112131415161709","name":"n","attributes":[{"key":"plugin.mcp.cache_key","value":{"stringValue":_cold"`, 1))
	if slices.Equal(unquoted, line) {
		t.Fatal("the value to unquote is not in the line")
	}
	checkFastMatchesPdata(t, unquoted) // pdata refuses it, and so must the fast path (the value before it is "cold" too)
	for cut := range len(line) {
		checkFastMatchesPdata(t, line[:cut])
	}
}
