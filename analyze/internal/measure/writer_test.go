package measure

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/report"
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
			seen := EvidenceOf(&record.Table{Strs: []string{"pool-1", "", "", "k3"}, Acquires: c.acquires})
			if got := Shows(v, seen).Has(rulefmt.CapTargetIdentity); got != c.want {
				t.Errorf("target identity shown %v, want %v", got, c.want)
			}
		})
	}
}

// TestLoneSurrogatesTakeTheTargetIdentityWhereAScopeOrKeyHoldsU_FFFD pins
// the lone surrogate rule: the readers read an escaped lone surrogate as
// U+FFFD, so when the inputs held one and an acquire's pool scope or key
// holds U+FFFD, two keys may have been read as one and the target
// identity goes, with the lone surrogates named as the reason. Either
// alone leaves it (U+FFFD written as such; a lone surrogate elsewhere),
// and so does a byte that is not valid UTF-8, which the readers keep. When
// a keyless acquire takes it too, the capability's own reason stands.
func TestLoneSurrogatesTakeTheTargetIdentityWhereAScopeOrKeyHoldsU_FFFD(t *testing.T) {
	v := rulefmt.Config{}.ActiveVocabulary()
	strs := []string{"pool-1", "k1", "k\uFFFD", "pool\uFFFD", "k\xff"}
	keyed := func(scope, key int32) record.Acquire {
		return record.Acquire{Explicit: true, Scope: scope, Key: key, Session: -1}
	}
	for _, c := range []struct {
		name     string
		acquires []record.Acquire
		lone     int
		identity bool
		lost     bool // the reason names the lone surrogates
	}{
		{"lone surrogates, valid keys", []record.Acquire{keyed(0, 1)}, 3, true, false},
		{"a key holding U+FFFD, no lone surrogate", []record.Acquire{keyed(0, 2)}, 0, true, false},
		{"a key holding an invalid byte, lone surrogates", []record.Acquire{keyed(0, 4)}, 3, true, false},
		{"a key holding U+FFFD, lone surrogates", []record.Acquire{keyed(0, 1), keyed(0, 2)}, 1, false, true},
		{"a scope holding U+FFFD, lone surrogates", []record.Acquire{keyed(3, 1)}, 1, false, true},
		{"a keyless acquire too", []record.Acquire{keyed(0, 2), keyed(0, -1)}, 1, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			seen := EvidenceOf(&record.Table{Strs: strs, Acquires: c.acquires})
			seen.AddInputs([]report.InputReport{{LoneSurrogates: c.lone}, {}})
			w := WriterReport(v, seen, false)
			if got := Shows(v, seen).Has(rulefmt.CapTargetIdentity); got != c.identity || slices.Contains(w.Shows, "target_identity") != c.identity {
				t.Errorf("target identity shown %v (writer %q), want %v", got, w.Shows, c.identity)
			}
			if got := strings.Contains(w.IdentityLost, fmt.Sprintf("%d escaped lone UTF-16 surrogates", c.lone)); got != c.lost {
				t.Errorf("identity lost %q, want the lone surrogates named: %v", w.IdentityLost, c.lost)
			}
		})
	}
}
