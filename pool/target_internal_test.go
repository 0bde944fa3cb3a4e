package pool

import (
	"testing"
)

// TestServerPortDefaultsToTheSchemes pins the server.port the spans carry
// for an endpoint that names none: the scheme's own, 443 for https and 80
// for http; a named port is kept.
func TestServerPortDefaultsToTheSchemes(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		want     int
	}{
		{"http://127.0.0.1/mcp", 80},
		{"https://127.0.0.1/mcp", 443},
		{"http://127.0.0.1:8443/mcp", 8443},
		{"https://127.0.0.1:8080/mcp", 8080},
	} {
		tg, err := NewTarget(TargetConfig{Endpoint: tc.endpoint})
		if err != nil {
			t.Fatalf("NewTarget(%s): %v", tc.endpoint, err)
		}
		if tg.port != tc.want {
			t.Errorf("server port of %s = %d, want %d", tc.endpoint, tg.port, tc.want)
		}
	}
}
