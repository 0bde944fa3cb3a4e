package pool

import (
	"context"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/spans"
)

// TestAnAcquireWaitsForTheKeysHandshakeOnlyWhileItMayShare pins when an
// acquire that finds no idle session waits for the key's handshake in
// flight instead of dialing its own (Pool.acquire, mayShare):
// while the key's revision is unknown or its server is sessionless (the
// handshake's client may be shared), not once the key is known to give
// each caller its own session. The last is reached when, say, a caller
// let past the key's breaker finishes its own dial while the first
// handshake is still in flight; here the key's state is set so directly,
// with a handshake in flight that never ends. The acquire's context is
// already cancelled, so a wait ends at once with its own error and a dial
// fails with the dial's.
func TestAnAcquireWaitsForTheKeysHandshakeOnlyWhileItMayShare(t *testing.T) {
	for _, tc := range []struct {
		name        string
		revision    string
		sessionless bool
		wantWait    bool
	}{
		{"revision unknown: waits", "", false, true},
		{"a sessionless server: waits, to share its client", spans.ProtocolModern, true, true},
		{"a server with sessions: dials its own", spans.ProtocolLegacy, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := fixtures.Start(fixtures.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			p, err := New(Options{SweepInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			tg, err := NewTarget(TargetConfig{Endpoint: srv.URL()})
			if err != nil {
				t.Fatal(err)
			}
			p.mu.Lock()
			ks, _, _ := p.idle.KeyOf(tg.key, ns(p.now()), nil)
			ks.Data.revision, ks.Data.sessionless = tc.revision, tc.sessionless
			ks.Data.dialing = make(chan struct{}) // another caller's handshake, in flight
			p.mu.Unlock()
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err = p.Acquire(ctx, tg)
			if err == nil {
				t.Fatal("acquire with a cancelled context succeeded")
			}
			if waited := strings.Contains(err.Error(), "wait for the key's handshake"); waited != tc.wantWait {
				t.Errorf("acquire: %v; want a wait for the handshake in flight: %v", err, tc.wantWait)
			}
		})
	}
}
