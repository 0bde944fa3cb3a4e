package rulefmt

import (
	"strings"
	"testing"
)

// TestASelectorIsZeroOnlyWithoutAnyCondition pins IsZero: any one
// condition (each key of a selector, and the calls shorthand) makes a
// selector match less than every span.
func TestASelectorIsZeroOnlyWithoutAnyCondition(t *testing.T) {
	if !(Selector{}).IsZero() {
		t.Error("the empty selector is not zero")
	}
	for _, s := range []string{
		"db.query",
		"{name_regex: '^db'}",
		"{attributes: {db.sql.table: orgs}}",
		"{resource: {service.name: worker}}",
		"{kind: client}",
		"{status: error}",
	} {
		sel, err := ParseSelectorString(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if sel.IsZero() {
			t.Errorf("%s: read as matching every span", s)
		}
	}
	if (Selector{Calls: true}).IsZero() {
		t.Error("the calls selector is read as matching every span")
	}
}

// TestASelectorNameIsOneNonEmptyValue pins the name key's two mistakes,
// each with its own message: an empty name (which would match no span) and
// a name that is not one value.
func TestASelectorNameIsOneNonEmptyValue(t *testing.T) {
	for _, tc := range []struct{ sel, err string }{
		{"{name: db.query}", ""},
		{"{name: ''}", "1:8: name must not be empty"},
		{"{name: [a]}", "1:8: name must be a single value"},
		{"{name: ~}", "1:8: name must be a single value"},
	} {
		_, err := ParseSelectorString(tc.sel)
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.sel, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", tc.sel, err, tc.err)
		}
	}
}
