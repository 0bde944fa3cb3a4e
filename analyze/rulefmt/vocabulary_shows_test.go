package rulefmt

import (
	"slices"
	"testing"
)

// TestWhatAVocabularyShowsFollowsItsRoles pins how a vocabulary's roles
// become capabilities: acquire spans show acquires with or without a
// session; a session alone infers acquires and, without acquire spans,
// handshakes; handshake and invocation spans show themselves; a key or a
// server address attribute shows a target identity.
func TestWhatAVocabularyShowsFollowsItsRoles(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"acquire spans without a session", "name: gw\ncalls: a\nacquires: b\n",
			[]string{"calls", "executions", "acquires", "acquire_spans", "refused_attempts", "call_attempts"}},
		{"acquire spans and a session", "name: gw\ncalls: a\nacquires: b\nsession: {attribute: sid}\n",
			[]string{"calls", "executions", "session_id", "acquires", "acquire_spans", "refused_attempts", "call_attempts"}},
		{"handshake spans without a session", "name: gw\ncalls: a\nhandshakes: h\n",
			[]string{"calls", "executions", "handshakes", "handshake_spans", "refused_attempts", "call_attempts"}},
		{"invocation spans", "name: gw\ncalls: a\ninvocations: i\n",
			[]string{"calls", "executions", "invocation_spans", "refused_attempts", "call_attempts"}},
		{"a key attribute", "name: gw\ncalls: a\nattributes: {key: k}\n",
			[]string{"calls", "executions", "target_identity", "refused_attempts", "call_attempts"}},
		{"a server address attribute", "name: gw\ncalls: a\nattributes: {server_address: srv}\n",
			[]string{"calls", "executions", "target_identity", "refused_attempts", "call_attempts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseVocabulary("v.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Shows(false).Names(); !slices.Equal(got, tc.want) {
				t.Errorf("shows %v, want %v", got, tc.want)
			}
		})
	}
}
