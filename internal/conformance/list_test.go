package conformance

import (
	"slices"
	"strings"
	"testing"
)

// TestParseClientListReadsOnlyTheClientSection pins the parser the table
// check rests on: it reads the client section's names and revisions and
// nothing of the other sections, and a missing, empty or unreadable
// client section is an error, never an empty list that an empty table
// would match.
func TestParseClientListReadsOnlyTheClientSection(t *testing.T) {
	const server = "Server scenarios (test against a server):\n  - server-initialize [2025-06-18,2025-11-25]\n\n"
	const client = "Client scenarios (test against a client):\n  - initialize [2025-06-18,2025-11-25]\n  - auth/dpop [extension]\n  - request-metadata [2026-07-28]\n\n"
	const authz = "Authorization server scenarios (test against an authorization server):\n  - authorization-code-grant [2025-03-26]\n"
	tests := []struct {
		name    string
		out     string
		want    []listed
		wantErr string
	}{
		{name: "three sections", out: server + client + authz, want: []listed{
			{name: "initialize", versions: []string{"2025-06-18", "2025-11-25"}},
			{name: "auth/dpop", versions: []string{"extension"}},
			{name: "request-metadata", versions: []string{"2026-07-28"}},
		}},
		{name: "client section last, no blank line", out: server + strings.TrimSuffix(client, "\n"), want: []listed{
			{name: "initialize", versions: []string{"2025-06-18", "2025-11-25"}},
			{name: "auth/dpop", versions: []string{"extension"}},
			{name: "request-metadata", versions: []string{"2026-07-28"}},
		}},
		{name: "no client section", out: server + authz, wantErr: "no \"Client scenarios\""},
		{name: "empty client section", out: server + "Client scenarios (test against a client):\n\n" + authz, wantErr: "no \"Client scenarios\""},
		{name: "a line without revisions", out: "Client scenarios:\n  - initialize\n", wantErr: `line 2 "  - initialize"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseClientList([]byte(tt.out))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, tt.want, func(a, b listed) bool { return a.name == b.name && slices.Equal(a.versions, b.versions) }) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
