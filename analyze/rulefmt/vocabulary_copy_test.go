package rulefmt

import "testing"

// TestABuiltinVocabularyIsACopy pins BuiltinVocabulary's promise: what a
// caller (or a file's vocabulary with that base) changes in the copy it
// gets, in any of its selector lists, is not seen by the next caller.
func TestABuiltinVocabularyIsACopy(t *testing.T) {
	lists := map[string]func(*Vocabulary) []Selector{
		"calls":       func(v *Vocabulary) []Selector { return v.Calls },
		"invocations": func(v *Vocabulary) []Selector { return v.Invocations },
		"acquires":    func(v *Vocabulary) []Selector { return v.Acquires },
		"handshakes":  func(v *Vocabulary) []Selector { return v.Handshakes },
		"detect":      func(v *Vocabulary) []Selector { return v.Detect },
	}
	for name, list := range lists {
		t.Run(name, func(t *testing.T) {
			seen := false
			for _, p := range Profiles {
				v, ok := BuiltinVocabulary(p)
				if !ok || len(list(&v)) == 0 {
					continue
				}
				seen = true
				before := list(&v)[0].Name
				list(&v)[0].Name = "changed by a caller"
				again, _ := BuiltinVocabulary(p)
				if got := list(&again)[0].Name; got != before {
					t.Errorf("profile %s: %s[0].Name = %q after a caller changed its copy, want %q", p, name, got, before)
				}
			}
			if !seen {
				t.Fatalf("no built-in vocabulary has %s", name)
			}
		})
	}
}
