package fuzz

// Hostile strings: what an attacker who controls one span attribute (a tool
// name, a cache key, a session id, a service name) writes into it, hoping a
// report renders it. Each carries a marker the oracle looks for in the
// output (fuzz.invalid, data-fuzz, fuzzinj), so a finding is the dump's own
// text surviving live, never the report's own markup.
var hostileStrings = []struct {
	name string
	s    string
}{
	{"md-link", "[click me](https://fuzz.invalid/a)"},
	{"md-image", "![pixel](https://fuzz.invalid/p.png)"},
	{"md-autolink", "<https://fuzz.invalid/auto>"},
	{"md-ref-link", "[ref][1]\n\n[1]: https://fuzz.invalid/r"},
	{"html-tag", "<img src=x onerror=alert(1) data-fuzz=1>"},
	{"html-breakout", `"><b data-fuzz=2>x</b>`},
	{"html-attr", `" onfuzz="1`},
	{"bidi-override", "safe\u202Eexe.txt"},
	{"bidi-isolates", "a\u2066b\u2067c\u2068d\u2069e"},
	{"zero-width", "pa\u200Bss\u200Cwo\u200Drd\u2060x\uFEFF"},
	{"line-separators", "one\u2028two\u2029three"},
	{"ansi-escape", "\x1b[31mred\x1b[0m\x1b]8;;https://fuzz.invalid\x07link\x1b]8;;\x07"},
	{"c0-c1", "bell\x07back\x08cr\rdel\x7fc1\u0085\u009b"},
	{"annotation", "x\n::warning title=fuzzinj::injected\n"},
	{"md-table-break", "a|b\n| fuzzinj | row |"},
	{"raw-ff", rawFF},
}

// rawFF is replaced, after encoding, by as many invalid UTF-8 bytes: an
// encoder would refuse or escape them, an exporter with a bug would not.
const rawFF = "@@RAWFF@@"

// rawFFBytes is what rawFF becomes in the encoded dump: the same length, so
// a protobuf record's lengths still hold.
var rawFFBytes = []byte{0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1}
