package measure

import (
	"testing"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
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

// TestOneKeylessAcquireSpanTakesTheTargetIdentity pins that acquire spans
// without a cache key take away the target identity: they all read as one
// key, whatever servers they were for. Inferred acquires (a session, no
// acquire span) are left to the server-address rule.
func TestOneKeylessAcquireSpanTakesTheTargetIdentity(t *testing.T) {
	v := rulefmt.Config{}.ActiveVocabulary()
	if !v.Shows(false).Has(rulefmt.CapTargetIdentity) {
		t.Fatal("the default vocabulary shows no target identity: nothing to take away")
	}
	keyed := record.Acquire{Explicit: true, Key: 3}
	for _, c := range []struct {
		name     string
		acquires []record.Acquire
		want     bool
	}{
		{"every acquire span keyed", []record.Acquire{keyed, keyed}, true},
		{"one acquire span without a key", []record.Acquire{keyed, {Explicit: true, Key: -1}}, false},
		{"an inferred acquire without a key", []record.Acquire{keyed, {Key: -1}}, true},
		{"no acquires", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			seen := EvidenceOf(&record.Table{Acquires: c.acquires})
			if got := Shows(v, seen).Has(rulefmt.CapTargetIdentity); got != c.want {
				t.Errorf("target identity shown %v, want %v", got, c.want)
			}
		})
	}
}
