package rulefmt

import (
	"reflect"
	"slices"
	"testing"
)

// TestABuiltinVocabularyCopyKeepsEveryRole pins that the copy
// BuiltinVocabulary returns holds each role's own selectors: its
// invocations are the built-in's invocations, and so on for every list.
func TestABuiltinVocabularyCopyKeepsEveryRole(t *testing.T) {
	for _, p := range Profiles {
		orig, ok := builtinVocabularies[p]
		if !ok {
			continue
		}
		v, _ := BuiltinVocabulary(p)
		for name, pair := range map[string][2][]Selector{
			"calls": {v.Calls, orig.Calls}, "invocations": {v.Invocations, orig.Invocations},
			"acquires": {v.Acquires, orig.Acquires}, "handshakes": {v.Handshakes, orig.Handshakes},
			"detect": {v.Detect, orig.Detect},
		} {
			if !reflect.DeepEqual(pair[0], pair[1]) {
				t.Errorf("profile %s: the copy's %s = %v, want the built-in's %v", p, name, pair[0], pair[1])
			}
		}
	}
}

// TestTheIndexKeepsWhatADetectSelectorReads pins that a vocabulary's
// detect selectors count among the selectors whose attributes the index
// keeps.
func TestTheIndexKeepsWhatADetectSelectorReads(t *testing.T) {
	v, err := ParseVocabulary("v.yaml", []byte("name: gw\ncalls: a\ndetect: {name: d, attributes: {d.key: x}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := v.IndexOptions(); !slices.Contains(o.SpanAttrs, "d.key") {
		t.Errorf("index span attributes %v, want d.key, which the detect selector reads", o.SpanAttrs)
	}
}
