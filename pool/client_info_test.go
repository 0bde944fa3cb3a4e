package pool_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

// TestInitializeNamesTheClientAsConfigured pins what the pool's initialize
// says it is (Options.ClientName, ClientVersion), as the fixture server
// receives it on 127.0.0.1: "mcptrace" and "dev" when not set, the given
// name and version kept as they are when set.
func TestInitializeNamesTheClientAsConfigured(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		opts                  pool.Options
		wantName, wantVersion string
	}{
		{"unset: the defaults", pool.Options{}, "mcptrace", "dev"},
		{"set: kept", pool.Options{ClientName: "gateway", ClientVersion: "1.2.3"}, "gateway", "1.2.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			rec := &bodyRecorder{base: tr}
			opts := tc.opts
			opts.HTTPTransport = rec
			h := newHarness(t, harnessOpts{pool: opts})
			h.mustCall(fixtures.ToolEcho, map[string]any{"text": "x"})
			rec.mu.Lock()
			bodies := append([]string(nil), rec.bodies...)
			rec.mu.Unlock()
			var inits int
			for _, b := range bodies {
				var msg struct {
					Method string `json:"method"`
					Params struct {
						ClientInfo struct{ Name, Version string } `json:"clientInfo"`
					} `json:"params"`
				}
				if json.Unmarshal([]byte(b), &msg) != nil || msg.Method != "initialize" {
					continue
				}
				inits++
				if got := msg.Params.ClientInfo; got.Name != tc.wantName || got.Version != tc.wantVersion {
					t.Errorf("initialize clientInfo = %+v, want %q %q", got, tc.wantName, tc.wantVersion)
				}
			}
			if inits != 1 {
				t.Errorf("%d initialize requests seen, want 1", inits)
			}
		})
	}
}
