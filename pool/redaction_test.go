package pool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// startEchoingServer starts a server on 127.0.0.1 that refuses every
// JSON-RPC request with an error quoting the credentials it was sent, as a
// careless server does ("invalid key abc for X-Api-Key"): each value of
// each header named in echo, whole and piece by piece (split at spaces,
// ';' and '='), so a redaction that knows only the whole value shows.
func startEchoingServer(t *testing.T, echo ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		if len(req.ID) == 0 { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var quoted []string
		for _, name := range echo {
			for _, v := range r.Header.Values(name) {
				quoted = append(quoted, name+"="+v)
				quoted = append(quoted, strings.FieldsFunc(v, func(c rune) bool { return c == ' ' || c == ';' || c == '=' })...)
			}
		}
		msg := "credentials rejected: " + strings.Join(quoted, " | ")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"jsonrpc": "2.0", "id": req.ID,
			"error": map[string]any{"code": -32001, "message": msg},
		})
	}))
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.Listener.Addr().String(), "127.0.0.1:") {
		t.Fatalf("echoing server listens on %s, want 127.0.0.1", srv.Listener.Addr())
	}
	return srv
}

// TestSecretHeadersEchoedByTheServerAreRedacted pins the redaction of each
// kind of secret header when the server quotes it back in an error (the
// one way a header's value reaches the pool's errors, spans and logs): a
// header secret by its name alone (X-Api-Key, not one of the always-secret
// headers), one named by SecretHeaders (its name looks harmless), the
// always-secret Authorization and Cookie, and each cookie's value on its
// own. The error, the exported spans (both span vocabularies) and the
// logs are scanned; the echo itself is checked to have reached the error,
// so a clean scan means the redaction, not a missing echo.
func TestSecretHeadersEchoedByTheServerAreRedacted(t *testing.T) {
	for _, c := range []struct {
		name    string
		header  http.Header
		secret  []string // must not show
		secrets []string // SecretHeaders
	}{
		{name: "a header secret by its name", header: http.Header{"X-Api-Key": {"apikey-s3cr3t-2001"}}, secret: []string{"apikey-s3cr3t-2001"}},
		{name: "a lower-case header secret by its name", header: http.Header{"x-auth-token": {"auth-s3cr3t-2002"}}, secret: []string{"auth-s3cr3t-2002"}},
		{name: "a header named by SecretHeaders", header: http.Header{"X-Org": {"org-s3cr3t-2003"}}, secrets: []string{"x-org"}, secret: []string{"org-s3cr3t-2003"}},
		{name: "Authorization by hand", header: http.Header{"Authorization": {"Basic basic-s3cr3t-2004"}}, secret: []string{"basic-s3cr3t-2004"}},
		{name: "a Cookie header and each cookie in it", header: http.Header{"Cookie": {"sid=cookie-s3cr3t-2005; csrf=cookie-s3cr3t-2006"}}, secret: []string{"cookie-s3cr3t-2005", "cookie-s3cr3t-2006"}},
		{name: "a cookie value of exactly the shortest redacted length", header: http.Header{"Cookie": {"k=zq9w"}}, secret: []string{"zq9w"}},
		{name: "a bearer token set by hand", header: http.Header{"Authorization": {"Bearer bearer-s3cr3t-2009"}}, secret: []string{"bearer-s3cr3t-2009"}},
		{name: "each parameter of a Digest header", header: http.Header{"Authorization": {`Digest username="bob", response="digest-s3cr3t-2010"`}}, secret: []string{"digest-s3cr3t-2010"}},
		{name: "a secret header with two values", header: http.Header{"X-Api-Key": {"apikey-s3cr3t-2007", "apikey-s3cr3t-2008"}}, secret: []string{"apikey-s3cr3t-2007", "apikey-s3cr3t-2008"}},
	} {
		for _, semconv := range []bool{false, true} {
			name := c.name
			if semconv {
				name += "/semconv"
			}
			t.Run(name, func(t *testing.T) {
				var echo []string
				for h := range c.header {
					echo = append(echo, http.CanonicalHeaderKey(h))
				}
				srv := startEchoingServer(t, echo...)
				h := newHarness(t, harnessOpts{pool: pool.Options{SemconvCallSpans: semconv}})
				tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL + "/mcp", Header: c.header, SecretHeaders: c.secrets})
				if err != nil {
					t.Fatal(err)
				}
				_, err = h.pool.CallTool(context.Background(), tg, &mcp.CallToolParams{Name: "echo"})
				if err == nil {
					t.Fatal("a call to a server refusing every request succeeded")
				}
				if !strings.Contains(err.Error(), "credentials rejected") {
					t.Fatalf("error %q lacks the server's message: the echo never reached the error", err)
				}
				if err := h.pool.Close(); err != nil {
					t.Fatal(err)
				}
				js, jerr := (&ptrace.JSONMarshaler{}).MarshalTraces(telemetry.ToTraces(h.rec.Spans()))
				if jerr != nil {
					t.Fatal(jerr)
				}
				all := strings.Join([]string{err.Error(), fmt.Sprintf("%+v", err), string(js), h.logs.String(), tg.Key(), tg.String()}, "\n")
				for _, s := range c.secret {
					if i := strings.Index(all, s); i >= 0 {
						t.Errorf("secret %q leaked near: %q", s, all[max(0, i-100):min(len(all), i+40)])
					}
				}
				if !strings.Contains(err.Error(), "[REDACTED]") {
					t.Errorf("error %q shows no redaction: the scan may be looking at the wrong text", err)
				}
			})
		}
	}
}
