package ingest

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// keyDocs is two spans whose attribute "k" is KEYA and KEYB, in each
// encoding: OTLP JSON lines, one OTLP JSON document, Jaeger and Tempo.
func keyDocs() map[string]struct {
	format Format
	doc    string
} {
	const tid = "0000000000000000000000000000abcd"
	otlpSpan := func(i int, key string, b64 bool) string {
		t, s := tid, fmt.Sprintf("00000000000000f%d", i)
		if b64 {
			t, s = b64hex(t), b64hex(s)
		}
		return `{"traceId":"` + t + `","spanId":"` + s + `","name":"x","startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600000001000",` +
			`"attributes":[{"key":"k","value":{"stringValue":"` + key + `"}}]}`
	}
	rs := func(b64 bool) string {
		return `{"scopeSpans":[{"spans":[` + otlpSpan(1, "KEYA", b64) + `,` + otlpSpan(2, "KEYB", b64) + `]}]}`
	}
	jaegerSpan := func(i int, key string) string {
		return fmt.Sprintf(`{"traceID":%q,"spanID":"00000000000000f%d","operationName":"x","startTime":1777539600000000,"duration":1,"processID":"p",`+
			`"tags":[{"key":"k","type":"string","value":"%s"}]}`, tid, i, key)
	}
	return map[string]struct {
		format Format
		doc    string
	}{
		"otlp lines":    {FormatOTLPJSON, `{"resourceSpans":[` + rs(false) + "]}\n" + `{"resourceSpans":[` + rs(false) + "]}\n"},
		"otlp document": {FormatOTLPJSON, "{\n\"resourceSpans\": [\n" + rs(false) + "]}\n"},
		"jaeger":        {FormatJaeger, `{"data":[{"traceID":"` + tid + `","processes":{"p":{"serviceName":"gw"}},"spans":[` + jaegerSpan(1, "KEYA") + "," + jaegerSpan(2, "KEYB") + "]}]}"},
		"tempo":         {FormatTempo, `{"batches":[` + rs(true) + "]}"},
	}
}

func b64hex(h string) string {
	b := make([]byte, len(h)/2)
	fmt.Sscanf(h, "%x", &b)
	return base64.StdEncoding.EncodeToString(b)
}

// keyValues returns the distinct values of attribute "k" of the spans read.
func keyValues(batches []ptrace.Traces) []string {
	var out []string
	for _, td := range batches {
		forEachTestSpan(td, func(sp ptrace.Span) {
			if v, ok := sp.Attributes().Get("k"); ok && !slices.Contains(out, v.Str()) {
				out = append(out, v.Str())
			}
		})
	}
	slices.Sort(out)
	return out
}

// TestEveryReaderKeepsInvalidUTF8AndWarnsOfLoneSurrogates pins one rule
// for strings that are not valid UTF-8 in every JSON reader: bytes that
// are not valid UTF-8 are kept as they are, so two keys that differ only
// there stay two, in every encoding alike; an escaped lone surrogate,
// which has no bytes to keep, is read as U+FFFD by all, and the input
// says so in a warning and counts them (Input.LoneSurrogates), which the
// analysis asks. Valid keys and paired surrogates give neither.
func TestEveryReaderKeepsInvalidUTF8AndWarnsOfLoneSurrogates(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		want       []string
		warn       bool
	}{
		{"valid keys", "ka", "kb", []string{"ka", "kb"}, false},
		{"invalid bytes", "k\xff", "k\xfe", []string{"k\xfe", "k\xff"}, false},
		{"invalid bytes in an escaped string", "k\\\"\xff", "k\\\"\xfe", []string{"k\"\xfe", "k\"\xff"}, false},
		{"a surrogate pair", `k\ud83d\ude00`, "kb", []string{"kb", "k\U0001F600"}, false},
		{"lone surrogates", `k\ud800`, `k\udc00`, []string{"k\uFFFD"}, true},
	} {
		for name, d := range keyDocs() {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				doc := strings.NewReplacer("KEYA", tc.a, "KEYB", tc.b).Replace(d.doc)
				inputs, batches, err := readBytes(t, []byte(doc), ReadOptions{Strict: true, Format: d.format})
				if err != nil {
					t.Fatal(err)
				}
				if got := keyValues(batches); !slices.Equal(got, tc.want) {
					t.Errorf("keys %q, want %q", got, tc.want)
				}
				warned := strings.Contains(strings.Join(inputs[0].Warnings, "\n"), "lone UTF-16 surrogates")
				if warned != tc.warn || inputs[0].Partial {
					t.Errorf("warnings %q (partial %v), want a lone surrogate warning: %v", inputs[0].Warnings, inputs[0].Partial, tc.warn)
				}
				lone := 0
				if tc.warn {
					lone = strings.Count(doc, `\ud800`) + strings.Count(doc, `\udc00`)
				}
				if inputs[0].LoneSurrogates != lone {
					t.Errorf("Input.LoneSurrogates = %d, want %d", inputs[0].LoneSurrogates, lone)
				}
			})
		}
	}
}

// TestLoneSurrogatesAreCountedAsJSONReadsThem pins loneSurrogates: a
// high surrogate without a low one after it, a low one alone, and the end
// of the input after a high one count; a pair, an escaped backslash
// before u, and short or non-hex escapes do not.
func TestLoneSurrogatesAreCountedAsJSONReadsThem(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`"a"`, 0},
		{`"\ud83d\ude00"`, 0},
		{`"\uD83D\uDE00"`, 0},
		{`"\ud800"`, 1},
		{`"\udc00"`, 1},
		{`"\ud800\ud800"`, 2},
		{`"\ude00\ud83d"`, 2},
		{`"\ud800x\udc00"`, 2},
		{`"\\ud800"`, 0},
		{`"\\\ud800"`, 1},
		{`"\ud80"`, 0},
		{`"\u00e9"`, 0},
		{`\ud800`, 1},
	} {
		if got := loneSurrogates([]byte(tc.in)); got != tc.want {
			t.Errorf("loneSurrogates(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestProtectedBytesComeBackAsTheyWere pins protectBytes and
// restoreBytes: every byte that is not valid UTF-8 (any of 0x80-0xFF
// alone, a cut sequence) comes back as it was, valid text around it
// untouched; valid UTF-8 is not protected; text that holds one of the
// standing-in runes already is not protected either, since it could not
// be told apart.
func TestProtectedBytesComeBackAsTheyWere(t *testing.T) {
	var all []byte
	for b := 0x80; b <= 0xFF; b++ {
		all = append(all, 'a', byte(b))
	}
	for _, tc := range []struct {
		name      string
		in        string
		protected bool
	}{
		{"valid", "ké\U0001F600", false},
		{"every high byte alone", string(all), true},
		{"a cut sequence", "k\xe2\x82", true},
		{"a standing-in rune and an invalid byte", "k\U0010FF80\xff", false},
		{"the last standing-in rune and an invalid byte", "k\U0010FFFF\xff", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := protectBytes([]byte(tc.in))
			if ok != tc.protected {
				t.Fatalf("protected %v, want %v", ok, tc.protected)
			}
			if ok && !utf8.Valid(p) {
				t.Errorf("protected text %q is not valid UTF-8", p)
			}
			if got := string(restoreBytes(p)); ok && got != tc.in {
				t.Errorf("restored %q, want %q", got, tc.in)
			}
		})
	}
}
