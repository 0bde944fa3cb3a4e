package vocab

import (
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestEachRoleMatchesTheNamesItsSelectorsGiveIt pins the name table the
// roles share (Compiled.nameKinds): a name that two roles' selectors give
// plays both, a pool name keeps its mark, a role matches no name another
// role was given, and each role's bound counts the spans of its own names
// only.
func TestEachRoleMatchesTheNamesItsSelectorsGiveIt(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource()
	for id, name := range []string{"both", "both", "hand", "acq", "other"} {
		d.Add(ss, dumptest.Span{Trace: 1, ID: uint64(id + 1), Name: name, End: time.Second})
	}
	x := index.New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	voc := rulefmt.Vocabulary{
		Name:        "roles",
		Names:       []string{"both", "hand"},
		Invocations: []rulefmt.Selector{{Name: "both"}},
		Calls:       []rulefmt.Selector{{Name: "both"}},
		Handshakes:  []rulefmt.Selector{{Name: "hand"}},
		Acquires:    []rulefmt.Selector{{Name: "acq"}},
	}
	v, err := Compile(x, rulefmt.Config{Vocabulary: &voc})
	if err != nil {
		t.Fatal(err)
	}
	roles := []struct {
		name  string
		role  *role
		plays map[string]bool
		bound int
	}{
		{"invocations", &v.Invocations, map[string]bool{"both": true}, 2},
		{"calls", &v.calls, map[string]bool{"both": true}, 2},
		{"handshakes", &v.handshakes, map[string]bool{"hand": true}, 1},
		{"acquires", &v.acquires, map[string]bool{"acq": true}, 1},
	}
	perName := make([]int32, len(x.Names))
	for _, i := range x.Order {
		perName[x.Span(i).Name]++
	}
	for _, r := range roles {
		for _, i := range x.Order {
			name := x.Names[x.Span(i).Name]
			if got := r.role.Match(i); got != r.plays[name] {
				t.Errorf("%s match %q: %v, want %v", r.name, name, got, !got)
			}
		}
		if got := r.role.bound(perName, len(x.Order)); got != r.bound {
			t.Errorf("%s bound %d, want %d", r.name, got, r.bound)
		}
	}
	for id, name := range x.Names {
		if pool := v.nameKinds[id]&kindPool != 0; pool != (name == "both" || name == "hand") {
			t.Errorf("%q marked a pool name: %v", name, pool)
		}
	}
}
