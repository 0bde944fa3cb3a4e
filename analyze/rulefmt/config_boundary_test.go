package rulefmt

import (
	"strings"
	"testing"
)

// TestConfigBoundariesAreRejectedAtTheirPlace pins the edges of what a
// configuration accepts: a measure needs both a root and a read selector,
// a hit-rate drop above 1 is refused where it is written, a null selector
// is not the span name "null", and a position with no line names only the
// file.
func TestConfigBoundariesAreRejectedAtTheirPlace(t *testing.T) {
	root, read := Selector{Name: "request"}, Selector{Name: "db.query"}
	for _, tc := range []struct {
		name string
		m    ReadMeasure
		ok   bool
	}{
		{"root and read", ReadMeasure{Name: "m", Root: root, Read: read}, true},
		{"no root", ReadMeasure{Name: "m", Read: read}, false},
		{"no read", ReadMeasure{Name: "m", Root: root}, false},
	} {
		err := Config{Measures: []ReadMeasure{tc.m}}.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	for _, tc := range []struct{ doc, want string }{
		{"regressions: {hit_rate_drop: 1}\n", ""},
		{"regressions: {hit_rate_drop: 1.5}\n", "f.yaml:1:30: hit_rate_drop must be between 0 and 1"},
		{"regressions: {hit_rate_drop: -0.1}\n", "f.yaml:1:30: hit_rate_drop must be between 0 and 1"},
		{"rules:\n  - id: a\n    select: null\n    expect: {of: count, op: \"==\", than: 1}\n",
			"f.yaml:3:13: selector must be a span name or a mapping of name, name_regex, attributes, resource, kind, status"},
	} {
		_, err := ParseGateConfig("f.yaml", []byte(tc.doc))
		if got := errText(err); got != tc.want {
			t.Errorf("%q: error %q, want %q", tc.doc, got, tc.want)
		}
	}
	for _, tc := range []struct {
		e    ConfigError
		want string
	}{
		{ConfigError{File: "f.yaml", Msg: "m"}, "f.yaml: m"},
		{ConfigError{File: "f.yaml", Line: 1, Msg: "m"}, "f.yaml:1: m"},
		{ConfigError{File: "f.yaml", Line: 1, Column: 1, Msg: "m"}, "f.yaml:1:1: m"},
		{ConfigError{Msg: "m"}, "m"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}
