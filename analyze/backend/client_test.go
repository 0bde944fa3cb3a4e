package backend

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// waits records the client's backoffs instead of sleeping them.
type waits []time.Duration

func (w *waits) sleep(_ context.Context, d time.Duration) error { *w = append(*w, d); return nil }

// statusServer answers each request with the next of statuses (the last
// repeated), counting requests and keeping the last request's headers.
func statusServer(t *testing.T, statuses []int, header http.Header) (*httptest.Server, *atomic.Int32, *http.Header) {
	t.Helper()
	var n atomic.Int32
	var last http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		last = r.Header.Clone()
		st := statuses[min(i, len(statuses)-1)]
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(st)
		if st == http.StatusOK {
			_, _ = w.Write([]byte(`{"services":["a"]}`))
			return
		}
		_, _ = w.Write([]byte(`{"error":{"message":"echo ` + r.Header.Get("Authorization") + `"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n, &last
}

func newTestClient(t *testing.T, url, header string, w *waits) *Client {
	t.Helper()
	c, err := NewClient(ClientOptions{URL: url, Header: header, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.sleep = w.sleep
	return c
}

// TestRetriesOnlyBusyOrFailedAnswers pins which statuses are tried again:
// 429 and 5xx, up to the retry budget; a 4xx other than 429 fails at once.
func TestRetriesOnlyBusyOrFailedAnswers(t *testing.T) {
	tests := []struct {
		name     string
		statuses []int
		requests int32
		ok       bool
	}{
		{"a 503 then a 200 succeeds on the second try", []int{503, 200}, 2, true},
		{"a 429 then a 200 succeeds on the second try", []int{429, 200}, 2, true},
		{"a 500 every time stops after the retries", []int{500}, DefaultRetries + 1, false},
		{"a 400 is not retried", []int{400, 200}, 1, false},
		{"a 404 is not retried", []int{404, 200}, 1, false},
		{"a 499 is not retried", []int{499, 200}, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, n, _ := statusServer(t, tc.statuses, nil)
			var w waits
			c := newTestClient(t, srv.URL, "", &w)
			_, err := c.get(context.Background(), "/x", nil, 1<<20)
			if (err == nil) != tc.ok || n.Load() != tc.requests {
				t.Fatalf("err %v after %d requests, want ok=%v after %d", err, n.Load(), tc.ok, tc.requests)
			}
			if len(w) != int(tc.requests)-1 {
				t.Errorf("%d waits for %d requests", len(w), tc.requests)
			}
			var se *StatusError
			if !tc.ok && (!errors.As(err, &se) || se.Status != tc.statuses[len(tc.statuses)-1] && se.Status != tc.statuses[0]) {
				t.Errorf("error %v is no StatusError of the answer", err)
			}
		})
	}
}

// TestBackoffDoublesAndHonoursRetryAfter pins the waits: growing from
// minBackoff, capped, and a Retry-After taken as asked, up to its cap.
func TestBackoffDoublesAndHonoursRetryAfter(t *testing.T) {
	for attempt, want := range []time.Duration{minBackoff, 2 * minBackoff, 4 * minBackoff} {
		if got := backoff(attempt); got < want || got > want+want/4 {
			t.Errorf("backoff(%d) = %v, want %v plus at most a quarter", attempt, got, want)
		}
	}
	if got := backoff(60); got < maxBackoff || got > maxBackoff+maxBackoff/4 {
		t.Errorf("backoff(60) = %v, want about %v", got, maxBackoff)
	}
	srv, _, _ := statusServer(t, []int{429, 200}, http.Header{"Retry-After": {"3"}})
	var w waits
	c := newTestClient(t, srv.URL, "", &w)
	if _, err := c.get(context.Background(), "/x", nil, 1<<20); err != nil {
		t.Fatal(err)
	}
	if len(w) != 1 || w[0] != 3*time.Second {
		t.Errorf("waits %v, want the 3s Retry-After asked", w)
	}
	for v, want := range map[string]time.Duration{"": 0, "x": 0, "-1": 0, "0": 0, "1": time.Second, "3600": maxRetryAfter} {
		if got := retryAfter(v); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestNoRetryPastTheDeadline pins that a retry whose wait would outlast
// the context's deadline is not made: the error comes back at once.
func TestNoRetryPastTheDeadline(t *testing.T) {
	srv, n, _ := statusServer(t, []int{503}, http.Header{"Retry-After": {"20"}})
	var w waits
	c := newTestClient(t, srv.URL, "", &w)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.get(ctx, "/x", nil, 1<<20)
	if err == nil || n.Load() != 1 || len(w) != 0 || !strings.Contains(err.Error(), "past the deadline") {
		t.Errorf("err %v after %d requests and waits %v: want one request, no wait, the deadline named", err, n.Load(), w)
	}
}

// TestTheCredentialGoesToTheBackendOnly pins where the credential goes:
// with every request to the backend, never to another origin a redirect
// names, never into an error even when the backend echoes it.
func TestTheCredentialGoesToTheBackendOnly(t *testing.T) {
	const secret = "s3cret-token-value"
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
	}))
	defer redirect.Close()
	var w waits
	_, err := newTestClient(t, redirect.URL, "Authorization: Bearer "+secret, &w).get(context.Background(), "/x", nil, 1<<20)
	if !errors.Is(err, ErrRedirect) || elsewhere.Load() != 0 {
		t.Errorf("a redirect to another origin: err %v, %d requests reached it", err, elsewhere.Load())
	}
	srv, _, last := statusServer(t, []int{401}, nil)
	_, err = newTestClient(t, srv.URL, "Authorization: Bearer "+secret, &w).get(context.Background(), "/x", nil, 1<<20)
	if (*last).Get("Authorization") != "Bearer "+secret {
		t.Errorf("the backend got Authorization %q", (*last).Get("Authorization"))
	}
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("error %v: want the URL and 401, never the credential the backend echoed", err)
	}
}

// TestABaseURLIsPlainHTTPWithoutCredentials pins what a backend's URL may
// be, and that a refused one is never echoed with its password.
func TestABaseURLIsPlainHTTPWithoutCredentials(t *testing.T) {
	for _, raw := range []string{"ftp://h", "http://", "http://user:hunter22@h:16686", "http://h/?q=1", "://bad"} {
		_, err := NewClient(ClientOptions{URL: raw})
		if err == nil {
			t.Errorf("%q accepted", raw)
			continue
		}
		if strings.Contains(err.Error(), "hunter22") {
			t.Errorf("%q: the error shows the password: %v", raw, err)
		}
	}
	for _, h := range []string{"nocolon", "Bad Name: v", "X: ", "X: a\nY: b"} {
		if _, err := NewClient(ClientOptions{URL: "http://h", Header: h}); err == nil {
			t.Errorf("header %q accepted", h)
		}
	}
	if _, err := NewClient(ClientOptions{URL: "https://h:16686/base/"}); err != nil {
		t.Errorf("a base path refused: %v", err)
	}
}

// TestAnAnswerPastTheLimitIsRefused pins the bounded read.
func TestAnAnswerPastTheLimitIsRefused(t *testing.T) {
	srv, _, _ := statusServer(t, []int{200}, nil)
	var w waits
	c := newTestClient(t, srv.URL, "", &w)
	body := `{"services":["a"]}`
	if _, err := c.get(context.Background(), "/x", nil, int64(len(body))); err != nil {
		t.Errorf("an answer exactly the limit: %v", err)
	}
	if _, err := c.get(context.Background(), "/x", nil, int64(len(body))-1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an answer one byte past the limit: %v, want ErrTooLarge", err)
	}
}

// TestReadCredentialPrefersTheFileAndMakesATokenBearer pins where the
// credential is read from and its two forms.
func TestReadCredentialPrefersTheFileAndMakesATokenBearer(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cred")
	if err := os.WriteFile(file, []byte("X-Api-Key: k1\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPTRACE_TEST_CRED", "tok123")
	tests := []struct{ file, env, want string }{
		{file, "MCPTRACE_TEST_CRED", "X-Api-Key: k1"},
		{"", "MCPTRACE_TEST_CRED", "Authorization: Bearer tok123"},
		{"", "MCPTRACE_TEST_UNSET", ""},
	}
	for _, tc := range tests {
		got, err := ReadCredential(tc.file, tc.env)
		if err != nil || got != tc.want {
			t.Errorf("ReadCredential(%q, %q) = %q, %v; want %q", tc.file, tc.env, got, err, tc.want)
		}
	}
	if _, err := ReadCredential(filepath.Join(dir, "missing"), ""); err == nil {
		t.Error("a missing credential file read as none")
	}
}

// TestAPrivateCAIsTrustedOnlyWhenGiven pins --backend-ca-file: an https
// backend whose certificate chains to a CA the system does not know is
// refused, and accepted once that CA's PEM file is given; a file holding
// no certificate is an error before any request.
func TestAPrivateCAIsTrustedOnlyWhenGiven(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"services":["a"]}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, block, 0o600); err != nil {
		t.Fatal(err)
	}
	var w waits
	if _, err := newTestClient(t, srv.URL, "", &w).get(context.Background(), "/x", nil, 1<<20); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("an unknown CA: %v, want a certificate error", err)
	}
	c, err := NewClient(ClientOptions{URL: srv.URL, CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.get(context.Background(), "/x", nil, 1<<20); err != nil {
		t.Errorf("with its CA given: %v", err)
	}
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewClient(ClientOptions{URL: srv.URL, CAFile: empty}); err == nil {
		t.Error("a CA file without a certificate accepted")
	}
}
