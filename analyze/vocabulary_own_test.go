package analyze

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestAUsersVocabularyIsFirstClass reads a server-side corpus dump with a
// user's own vocabulary block: its spans count as recognised and
// settings.vocabulary names it, as a built-in's would; a mapping that
// gives the calls no session makes the session figures not measurable,
// naming the key to add, instead of counting calls without a session as
// none.
func TestAUsersVocabularyIsFirstClass(t *testing.T) {
	tests := []struct {
		name, yaml string
		recognised int
		sessionOK  bool
	}{
		{"no session mapped", "name: my-writer\ncalls: {name_regex: '^tools/call '}\n", 15, false},
		{"session mapped", "name: my-writer\ncalls: {name_regex: '^tools/call '}\nsession: {attribute: mcp.session.id}\ncapabilities: {side: server}\n", 15, true},
		{"reads nothing", "name: my-writer\ncalls: no.such.span\n", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := rulefmt.ParseVocabulary("v.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			doc := corpusAnalysis(t, corpusDir+"/shinzo/pooled.jsonl", rulefmt.Config{Vocabulary: v})
			wantVocab := "my-writer"
			if tt.recognised == 0 {
				wantVocab = "none"
			}
			if got := jsonPath(doc, "settings", "vocabulary"); got != wantVocab {
				t.Errorf("settings.vocabulary = %v, want %s", got, wantVocab)
			}
			if got, _ := jsonPath(doc, "recognition", "recognised_spans").(float64); int(got) != tt.recognised {
				t.Errorf("recognition.recognised_spans = %v, want %d", got, tt.recognised)
			}
			state, _ := jsonPath(doc, "figures", "acquires", "state").(string)
			why, _ := jsonPath(doc, "figures", "acquires", "why").(string)
			if tt.sessionOK != (state != "not_measurable") {
				t.Errorf("acquires declared %q (%s), session mapped %v", state, why, tt.sessionOK)
			}
			if !tt.sessionOK && tt.recognised > 0 && !strings.Contains(why, "add vocabulary.session") {
				t.Errorf("acquires not measurable without naming the key to add: %q", why)
			}
			if got := jsonPath(doc, "pool", "acquires"); !tt.sessionOK && got != nil {
				t.Errorf("pool.acquires = %v without a session mapped, want null", got)
			}
		})
	}
}
