package rulefmt

import (
	"slices"
	"strings"
	"testing"
)

// TestBuiltinVocabulariesShowWhatTheirWritersCan pins each built-in
// writer's capabilities, derived from its roles and attributes and its
// declared side and parenting: what decides, figure by figure, whether a
// report may print a number.
func TestBuiltinVocabulariesShowWhatTheirWritersCan(t *testing.T) {
	tests := []struct {
		profile    Profile
		serverSeen bool
		want       []string
	}{
		{ProfileMcptrace, false, []string{"calls", "executions", "session_id", "acquires", "handshakes", "acquire_spans", "invocation_spans", "handshake_spans", "target_identity", "refused_attempts", "pool_settings", "call_attempts", "acquire_attempts"}},
		{ProfileMcptrace, true, []string{"calls", "executions", "session_id", "acquires", "handshakes", "acquire_spans", "invocation_spans", "handshake_spans", "target_identity", "refused_attempts", "pool_settings", "call_attempts", "acquire_attempts"}},
		{ProfileSemconv, false, []string{"calls", "executions", "session_id", "acquires", "handshakes", "handshake_spans", "target_identity", "refused_attempts", "call_attempts"}},
		{ProfileSemconv, true, []string{"calls", "executions", "session_id", "acquires", "handshakes", "handshake_spans", "target_identity", "call_attempts"}},
		{ProfileOpenLLMetry, false, []string{"calls", "executions", "session_id", "acquires", "handshakes", "handshake_spans", "refused_attempts", "call_attempts"}},
		{ProfileSentry, false, []string{"calls", "executions", "session_id", "acquires", "handshakes", "handshake_spans", "call_attempts"}},
		{ProfileMastra, false, []string{"calls", "executions", "target_identity", "refused_attempts"}},
	}
	for _, tt := range tests {
		v, _ := BuiltinVocabulary(tt.profile)
		if got := v.Shows(tt.serverSeen).Names(); !slices.Equal(got, tt.want) {
			t.Errorf("%s (server seen %v) shows %v, want %v", tt.profile, tt.serverSeen, got, tt.want)
		}
	}
}

// TestVocabularyCapabilitiesBlock pins the capabilities: keys of a
// vocabulary block, and that a mapping without a session shows none.
func TestVocabularyCapabilitiesBlock(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // shown, when the block parses
		err        string
	}{
		{"server side, no target", "name: gw\ncalls: a\nsession: {attribute: sid}\nattributes: {server_address: srv}\ncapabilities: {side: server, target_identity: false}\n",
			[]string{"calls", "executions", "session_id", "acquires", "handshakes", "call_attempts"}, ""},
		{"no session mapped", "name: gw\ncalls: a\n", []string{"calls", "executions", "refused_attempts", "call_attempts"}, ""},
		{"parenting none", "name: gw\ncalls: a\ncapabilities: {parenting: none, pool_settings: true}\n", []string{"calls", "refused_attempts", "pool_settings", "call_attempts"}, ""},
		{"base keeps its declaration", "name: gw\nbase: openllmetry\n", []string{"calls", "executions", "session_id", "acquires", "handshakes", "handshake_spans", "refused_attempts", "call_attempts"}, ""},
		{"unknown side", "name: gw\ncalls: a\ncapabilities: {side: both}\n", nil, `side "both"`},
		{"unknown key", "name: gw\ncalls: a\ncapabilities: {sides: client}\n", nil, `unknown key "sides"`},
		{"not a bool", "name: gw\ncalls: a\ncapabilities: {pool_settings: maybe}\n", nil, "pool_settings must be true or false"},
		{"retries inside one span", "name: gw\ncalls: a\ncapabilities: {call_attempts: false}\n", []string{"calls", "executions", "refused_attempts"}, ""},
		{"acquire spans carrying their attempt", "name: gw\ncalls: a\nacquires: b\nattributes: {attempt: n}\n",
			[]string{"calls", "executions", "acquires", "acquire_spans", "refused_attempts", "call_attempts", "acquire_attempts"}, ""},
		{"acquire spans without an attempt", "name: gw\ncalls: a\nacquires: b\n",
			[]string{"calls", "executions", "acquires", "acquire_spans", "refused_attempts", "call_attempts"}, ""},
		{"an attempt without acquire spans", "name: gw\ncalls: a\nsession: {attribute: sid}\nattributes: {attempt: n}\n",
			[]string{"calls", "executions", "session_id", "acquires", "handshakes", "refused_attempts", "call_attempts"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ParseVocabulary("v.yaml", []byte(tt.yaml))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Shows(false).Names(); !slices.Equal(got, tt.want) {
				t.Errorf("shows %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCapabilityNamesRoundTrip pins that every capability has a name and
// a reason, and that a report's list of names reads back as the set.
func TestCapabilityNamesRoundTrip(t *testing.T) {
	all := capEnd - 1
	if n := len(all.Names()); n != len(capabilityNames) {
		t.Fatalf("%d names for %d capabilities", n, len(capabilityNames))
	}
	if got := CapabilitiesOf(append(all.Names(), "from-a-later-version")); got != all {
		t.Errorf("CapabilitiesOf(names) = %b, want %b", got, all)
	}
	for _, n := range capabilityNames {
		if n.why == "" {
			t.Errorf("%s has no reason", n.name)
		}
	}
}
