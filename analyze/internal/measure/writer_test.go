package measure

import (
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestSessionHintOnlyForAUsersVocabularyWithoutSessions pins who is told
// which key would give calls a session: a user's own vocabulary whose
// calls carry none, never a built-in one (its writer is what it is, and
// the user cannot add a key to it), nor a user's that reads sessions.
func TestSessionHintOnlyForAUsersVocabularyWithoutSessions(t *testing.T) {
	lacking := 0
	for _, v := range rulefmt.BuiltinVocabularies() {
		has := v.Shows(false).Has(rulefmt.CapSessionID)
		if !has {
			lacking++
		}
		if got := WriterReport(&v, SpanEvidence{}, false).SessionHint; got != "" {
			t.Errorf("built-in %s: session hint %q, want none", v.Name, got)
		}
		want := ""
		if !has {
			want = rulefmt.SessionKeyHint
		}
		if got := WriterReport(&v, SpanEvidence{}, true).SessionHint; got != want {
			t.Errorf("%s as a user's own vocabulary (sessions shown: %v): session hint %q, want %q", v.Name, has, got, want)
		}
	}
	if lacking == 0 {
		t.Fatal("no built-in vocabulary lacks session ids: the hint is never exercised")
	}
}
