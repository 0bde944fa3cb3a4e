package pool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/oauth2"

	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// testCap is the MaxResponseBytes of the size tests: small, so a body one
// byte over it is cheap to send.
const testCap = 64 << 10

// An answer of exactly MaxResponseBytes is read; one byte more fails the
// call with ErrResponseTooLarge, whatever its shape (a JSON body, an error
// body, an SSE event, a gzip body counted decoded), drops the session (the
// next call dials again; on a sessionless server, the shared client is
// made again) and is never retried (the tool ran once).
func TestAnswerOverMaxResponseBytesFailsTheCallAndDropsTheSession(t *testing.T) {
	for _, sessionless := range []bool{false, true} {
		t.Run(fmt.Sprintf("sessionless %v", sessionless), func(t *testing.T) {
			checkAnswersAroundTheCap(t, sessionless)
		})
	}
}

func checkAnswersAroundTheCap(t *testing.T, sessionless bool) {
	for _, c := range []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request, json.RawMessage)
		over   bool
	}{
		{"a JSON body of exactly the cap is read", jsonOfSize(testCap), false},
		{"a JSON body one byte over the cap fails", jsonOfSize(testCap + 1), true},
		{"an SSE event of exactly the cap is read", sseEventOfSize(testCap), false},
		{"an SSE event one byte over the cap fails", sseEventOfSize(testCap + 1), true},
		{"a gzip body decoding to exactly the cap is read", gzipBomb(testCap), false},
		{"a gzip body decoding to one byte over the cap fails", gzipBomb(testCap + 1), true},
		{"an error body one byte over the cap fails", errorBodyOfSize(testCap + 1), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := startHostile(t)
			if sessionless {
				srv.set(func() string { return "" }, nil)
			}
			h := hostileHarness(t, pool.Options{MaxResponseBytes: testCap})
			tg := hostileTarget(t, srv.srv.URL)
			ctx := boundedContext(t)
			srv.set(nil, c.answer)
			_, err := h.callTool(ctx, tg)
			if got := errors.Is(err, pool.ErrResponseTooLarge); got != c.over {
				t.Fatalf("err = %v: ErrResponseTooLarge %v, want %v", err, got, c.over)
			}
			if c.over {
				wantErrorType(t, h, spans.ErrTypeResponseTooLarge)
			}
			if n := srv.runs.Load(); n != 1 {
				t.Fatalf("the tool ran %d times, want once", n)
			}
			srv.set(nil, nil)
			if _, err := h.callTool(ctx, tg); err != nil {
				t.Fatalf("the next call: %v", err)
			}
			wantInits := int32(1)
			if c.over {
				wantInits = 2 // the session was dropped
			}
			if n := srv.inits.Load(); n != wantInits {
				t.Fatalf("%d handshakes, want %d", n, wantInits)
			}
		})
	}
}

// wantErrorType checks that the last call span failed with error.type want.
func wantErrorType(t *testing.T, h *harness, want string) {
	t.Helper()
	calls := h.spansNamed(spans.SpanCallTool)
	if len(calls) == 0 {
		t.Fatal("no call span")
	}
	if got := attr(calls[len(calls)-1], spans.AttrErrorType); got != want {
		t.Fatalf("call span error.type %q, want %q", got, want)
	}
}

// A stream of many small events, together far over MaxResponseBytes, is
// read to its result: the cap is per event, so a long-running tool's
// progress notifications never fail its call.
func TestAnSSEStreamOfSmallEventsPastTheCapStillAnswers(t *testing.T) {
	srv := startHostile(t)
	h := hostileHarness(t, pool.Options{MaxResponseBytes: testCap})
	tg := hostileTarget(t, srv.srv.URL)
	note := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%q}}`, strings.Repeat("n", 1000))
	srv.set(nil, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 4 * testCap / len(note) {
			fmt.Fprintf(w, "data: %s\n\n", note)
		}
		fmt.Fprintf(w, "data: %s\n\n", toolResult(id, "done"))
	})
	res, err := h.callTool(boundedContext(t), tg)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); got != "done" {
		t.Fatalf("result %q, want done", got)
	}
}

// hostileSize is the size of the bodies the memory test sends: far over
// the cap, so a body read whole shows in what the call allocated.
const hostileSize = 64 << 20

// Whatever the server sends, what the pool allocates for one call stays
// near MaxResponseBytes: a 64 MiB JSON body, a gzip bomb decoding to 64
// MiB, a 400 with a 64 MiB body and one 64 MiB SSE event are each cut at
// the 1 MiB cap; a gzip bomb the client did not ask for (its transport
// does not decompress) is never expanded, and fails as the garbage it is.
// What the process allocated during the call (TotalAlloc, which no
// collection undoes) is the measure; the bound is generous (16 times the
// cap): a body read whole allocates at least its 64 MiB.
func TestHostileBodiesKeepTheCallsMemoryBounded(t *testing.T) {
	const cap = 1 << 20
	noGzip := &http.Transport{DisableCompression: true}
	t.Cleanup(noGzip.CloseIdleConnections)
	for _, c := range []struct {
		name      string
		answer    func(http.ResponseWriter, *http.Request, json.RawMessage)
		transport http.RoundTripper
		tooLarge  bool
	}{
		{"a huge JSON body", jsonOfSize(hostileSize), nil, true},
		{"a gzip bomb", gzipBomb(hostileSize), nil, true},
		{"a gzip bomb the client did not ask for", gzipBomb(hostileSize), noGzip, false},
		{"a huge error body", errorBodyOfSize(hostileSize), nil, true},
		{"a huge SSE event", sseEventOfSize(hostileSize), nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := startHostile(t)
			h := hostileHarness(t, pool.Options{MaxResponseBytes: cap, HTTPTransport: c.transport})
			tg := hostileTarget(t, srv.srv.URL)
			ctx := boundedContext(t)
			if _, err := h.callTool(ctx, tg); err != nil { // warm: the handshake's allocations are not the body's
				t.Fatal(err)
			}
			srv.set(nil, c.answer)
			var err error
			alloc := allocatedDuring(func() { _, err = h.callTool(ctx, tg) })
			if err == nil || errors.Is(err, pool.ErrResponseTooLarge) != c.tooLarge {
				t.Fatalf("err = %v, want a failure, ErrResponseTooLarge %v", err, c.tooLarge)
			}
			t.Logf("the call allocated %d KiB", alloc>>10)
			if alloc > 16*cap {
				t.Fatalf("the call allocated %d MiB for a %d MiB answer under a 1 MiB cap", alloc>>20, hostileSize>>20)
			}
			if n := srv.runs.Load(); n != 2 {
				t.Fatalf("the tool ran %d times over two calls, want 2", n)
			}
		})
	}
}

// A redirect to another origin (another port of the same host) never
// reaches it, under either redirect option, for the handshake and for a
// call alike: the call fails with a *RedirectError naming the status, the
// other origin's listener is never contacted (so no credential or secret
// header can reach it), and the error does not quote the Location's query.
func TestARedirectToAnotherOriginNeverReachesIt(t *testing.T) {
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, follow := range []bool{false, true} {
			for _, handshake := range []bool{false, true} {
				name := fmt.Sprintf("%d/follow same origin %v/handshake %v", status, follow, handshake)
				t.Run(name, func(t *testing.T) {
					checkCrossOriginRedirect(t, status, follow, handshake)
				})
			}
		}
	}
}

func checkCrossOriginRedirect(t *testing.T, status int, follow, handshake bool) {
	var contacted atomic.Int32
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		contacted.Add(1)
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" {
			leaked.Store(true)
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(other.Close)
	location := other.URL + "/mcp?sig=location-s3cr3t"
	srv := startHostile(t)
	redirect := func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
		http.Redirect(w, r, location, status)
	}
	endpoint := srv.srv.URL
	if handshake {
		mover := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, location, status)
		}))
		t.Cleanup(mover.Close)
		endpoint = mover.URL
	} else {
		srv.set(nil, redirect)
	}
	h := hostileHarness(t, pool.Options{FollowSameOriginRedirects: follow})
	_, err := h.callTool(boundedContext(t), hostileTarget(t, endpoint))
	var re *pool.RedirectError
	if !errors.As(err, &re) || re.Status != status || !re.CrossOrigin {
		t.Fatalf("err = %v, want a cross-origin *RedirectError with status %d", err, status)
	}
	if n := contacted.Load(); n != 0 || leaked.Load() {
		t.Fatalf("the other origin was contacted %d times (credentials leaked: %v)", n, leaked.Load())
	}
	if strings.Contains(err.Error(), "location-s3cr3t") {
		t.Fatalf("the error quotes the Location's query: %v", err)
	}
	if n := srv.runs.Load(); n > 1 {
		t.Fatalf("the tool ran %d times", n)
	}
}

// A redirect within the endpoint's origin is followed only when
// Options.FollowSameOriginRedirects asks: then the call works and the tool
// runs once; by default the call fails with a *RedirectError, and a loop
// fails with one after 10 hops even when following.
func TestASameOriginRedirectIsFollowedOnlyWhenAsked(t *testing.T) {
	for _, c := range []struct {
		name         string
		follow, loop bool
	}{
		{"not followed by default", false, false},
		{"followed when asked", true, false},
		{"a loop stops after 10 hops", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := startHostile(t)
			var moves atomic.Int32
			srv.set(nil, func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
				if r.URL.Path == "/old" {
					moves.Add(1)
					srv.runs.Add(-1) // not run here: moved
					to := "/new"
					if c.loop {
						to = "/old"
					}
					http.Redirect(w, r, to, http.StatusTemporaryRedirect)
					return
				}
				writeJSON(w, http.StatusOK, toolResult(id, "moved"))
			})
			h := hostileHarness(t, pool.Options{FollowSameOriginRedirects: c.follow})
			res, err := h.callTool(boundedContext(t), hostileTarget(t, srv.srv.URL+"/old"))
			var re *pool.RedirectError
			switch refused := !c.follow || c.loop; {
			case !refused && err != nil:
				t.Fatalf("a followed same-origin redirect failed: %v", err)
			case !refused && resultText(res) != "moved":
				t.Fatalf("result %q, want moved", resultText(res))
			case refused && (!errors.As(err, &re) || re.CrossOrigin || re.Status != http.StatusTemporaryRedirect):
				t.Fatalf("err = %v, want a same-origin *RedirectError 307", err)
			}
			if n := srv.runs.Load(); n > 1 {
				t.Fatalf("the tool ran %d times", n)
			}
			if n := moves.Load(); c.loop && n != 10 {
				t.Fatalf("%d requests met the redirect loop, want 10 (the first and 9 hops; the 10th is refused)", n)
			}
		})
	}
}

// hostileText is what a server may put in any text it sends: ESC with a
// terminal sequence, NUL, DEL, a C1 control, a right-to-left override and
// a zero-width space.
const hostileText = "evil\x1b[2J\x00\x7f\u0085\u202eTXT\u200b"

// Server text reaches errors and spans escaped and bounded: no control
// byte, no C1 or bidi override, valid UTF-8, and a 1 MiB message clipped,
// in err.Error() and in every recorded span's name, status, attributes and
// events, in both span vocabularies.
func TestServerTextIsEscapedAndBoundedInErrorsAndSpans(t *testing.T) {
	message, _ := json.Marshal(hostileText)
	huge, _ := json.Marshal(strings.Repeat(hostileText, (1<<20)/len(hostileText)))
	for _, c := range []struct {
		name   string
		status int
		msg    []byte
	}{
		{"a JSON-RPC error message", http.StatusOK, message},
		{"a JSON-RPC error in a 400 body", http.StatusBadRequest, message},
		{"a 1 MiB JSON-RPC error message", http.StatusOK, huge},
	} {
		for _, semconv := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/semconv %v", c.name, semconv), func(t *testing.T) {
				srv := startHostile(t)
				srv.set(nil, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
					writeJSON(w, c.status, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s}}`, id, c.msg))
				})
				h := hostileHarness(t, pool.Options{SemconvCallSpans: semconv})
				_, err := h.callTool(boundedContext(t), hostileTarget(t, srv.srv.URL))
				if err == nil {
					t.Fatal("the call succeeded")
				}
				if !strings.Contains(err.Error(), "evil") {
					t.Fatalf("error %q lacks the server's message: the check would look at the wrong text", err)
				}
				for _, s := range append(spanTexts(h.rec), err.Error()) {
					checkCleanText(t, s)
				}
			})
		}
	}
}

// maxShownText bounds any one text the tests accept in an error or span.
const maxShownText = 8 << 10

// checkCleanText fails when s holds a raw control byte, C1 control,
// bidi or zero-width format character or invalid UTF-8, or is over
// maxShownText bytes.
func checkCleanText(t *testing.T, s string) {
	t.Helper()
	if len(s) > maxShownText {
		t.Errorf("text of %d bytes, over %d: %.80q...", len(s), maxShownText, s)
	}
	if !utf8.ValidString(s) {
		t.Errorf("invalid UTF-8 in %.200q", s)
	}
	for i, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x202e || r == 0x200b {
			t.Errorf("raw %U at byte %d of %.200q", r, i, s)
			return
		}
	}
}

// sessionIDBound is the longest Mcp-Session-Id the pool accepts.
const sessionIDBound = 1024

// An Mcp-Session-Id outside visible ASCII, over 1024 bytes, or holding
// the bearer token fails the dial with ErrSessionIDRefused and is never
// recorded (no span holds it); one of exactly 1024 visible bytes is
// accepted and recorded as mcp.session.id.
func TestSessionIDsOutsideTheSpecAreRefusedAndNeverRecorded(t *testing.T) {
	bigHeaders := &http.Transport{MaxResponseHeaderBytes: 16 << 20}
	t.Cleanup(bigHeaders.CloseIdleConnections)
	for _, c := range []struct {
		name      string
		id        string
		transport http.RoundTripper
		refused   bool
	}{
		{"exactly the bound is accepted", strings.Repeat("a", sessionIDBound), nil, false},
		{"one byte over the bound is refused", strings.Repeat("a", sessionIDBound+1), nil, true},
		{"4 MiB is refused", strings.Repeat("b", 4<<20), bigHeaders, true},
		// net/http refuses other control bytes in a header itself.
		{"a tab is refused", "sess\tid", nil, true},
		{"a non-ASCII byte is refused", "séss", nil, true},
		{"a space is refused", "sess id", nil, true},
		{"the bearer token is refused", bearerSecret, nil, true},
		{"a value holding the secret header is refused", "s-" + headerSecret, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := startHostile(t)
			srv.set(func() string { return c.id }, nil)
			h := hostileHarness(t, pool.Options{HTTPTransport: c.transport})
			_, err := h.callTool(boundedContext(t), hostileTarget(t, srv.srv.URL))
			if got := errors.Is(err, pool.ErrSessionIDRefused); got != c.refused {
				t.Fatalf("err = %.300v: ErrSessionIDRefused %v, want %v", err, got, c.refused)
			}
			texts := spanTexts(h.rec)
			if c.refused {
				texts = append(texts, err.Error(), h.logs.String())
				if n := srv.runs.Load(); n != 0 {
					t.Fatalf("the tool ran %d times on a refused session", n)
				}
			}
			found := false
			for _, s := range texts {
				found = found || strings.Contains(s, c.id)
			}
			if found != !c.refused {
				t.Fatalf("session id recorded: %v, want %v", found, !c.refused)
			}
			if c.refused {
				wantHandshakeErrorType(t, h, spans.ErrTypeBadSessionID)
			}
		})
	}
}

// A session id a call's answer carries is checked like the handshake's:
// one switched to the bearer token mid-session fails the call with
// ErrSessionIDRefused (the answer is discarded), drops the session (the
// next call dials again) and shows nowhere.
func TestASessionIDSwitchedToASecretMidSessionIsRefused(t *testing.T) {
	srv := startHostile(t)
	srv.set(nil, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		w.Header().Set("Mcp-Session-Id", bearerSecret)
		writeJSON(w, http.StatusOK, toolResult(id, "ok"))
	})
	h := hostileHarness(t, pool.Options{})
	tg := hostileTarget(t, srv.srv.URL)
	ctx := boundedContext(t)
	_, err := h.callTool(ctx, tg)
	if !errors.Is(err, pool.ErrSessionIDRefused) {
		t.Fatalf("err = %v, want ErrSessionIDRefused", err)
	}
	wantErrorType(t, h, spans.ErrTypeBadSessionID)
	srv.set(nil, nil)
	if _, err := h.callTool(ctx, tg); err != nil {
		t.Fatalf("the next call: %v", err)
	}
	if n, m := srv.inits.Load(), srv.runs.Load(); n != 2 || m != 2 {
		t.Fatalf("%d handshakes and %d runs for two calls, want 2 and 2", n, m)
	}
	for _, s := range append(spanTexts(h.rec), err.Error(), h.logs.String()) {
		if strings.Contains(s, bearerSecret) {
			t.Fatalf("the token shows in %q", s)
		}
	}
}

// wantHandshakeErrorType checks that the last handshake span failed with
// error.type want.
func wantHandshakeErrorType(t *testing.T, h *harness, want string) {
	t.Helper()
	hs := h.spansNamed(spans.SpanHandshake)
	if len(hs) == 0 {
		t.Fatal("no handshake span")
	}
	if got := attr(hs[len(hs)-1], spans.AttrErrorType); got != want {
		t.Fatalf("handshake span error.type %q, want %q", got, want)
	}
}

// A Retry-After the server sends saturates: a delay too large for a
// time.Duration is the documented 24-hour cap, never a negative or
// wrapped one; a negative or unreadable one is no delay.
func TestRetryAfterFromTheServerSaturates(t *testing.T) {
	for _, c := range []struct {
		header string
		want   time.Duration
	}{
		{"120", 2 * time.Minute},
		{"86400", 24 * time.Hour},
		{"86401", 24 * time.Hour},
		{"10000000000", 24 * time.Hour},
		{"99999999999999999999999999", 24 * time.Hour},
		{"Fri, 31 Dec 9999 23:59:59 GMT", 24 * time.Hour},
		{"-5", 0},
		{"soon", 0},
	} {
		t.Run(c.header, func(t *testing.T) {
			srv := startHostile(t)
			srv.set(nil, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
				w.Header().Set("Retry-After", c.header)
				w.WriteHeader(http.StatusServiceUnavailable)
			})
			h := hostileHarness(t, pool.Options{})
			_, err := h.callTool(boundedContext(t), hostileTarget(t, srv.srv.URL))
			var hs *pool.HTTPStatusError
			if !errors.As(err, &hs) || hs.RetryAfter != c.want {
				t.Fatalf("err = %v (%+v), want RetryAfter %s", err, hs, c.want)
			}
		})
	}
}

// oauthSecret is the access token staticOAuth hands out.
const oauthSecret = "oauth-access-s3cr3t-0004"

// staticOAuth is an auth.OAuthHandler that holds one token and has no
// flow.
type staticOAuth struct{}

func (staticOAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: oauthSecret}), nil
}

func (staticOAuth) Authorize(context.Context, *http.Request, *http.Response) error {
	return errors.New("no flow in this test")
}

// The pool's OAuth token is a secret like a target's own: a session id
// equal to it is refused, a server echoing it in an error has it
// redacted, and a redirect to another origin never carries it there. It
// shows in no error, span or log.
func TestOAuthTokensAreSecretsLikeATargetsOwn(t *testing.T) {
	var contacted atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		contacted.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(other.Close)
	for _, c := range []struct {
		name      string
		sessionID func() string
		answer    func(http.ResponseWriter, *http.Request, json.RawMessage)
		check     func(error) bool
	}{
		{"a session id equal to the token is refused", func() string { return oauthSecret }, nil,
			func(err error) bool { return errors.Is(err, pool.ErrSessionIDRefused) }},
		{"an error echoing the token is redacted", nil,
			func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
				msg, _ := json.Marshal("bad credential " + r.Header.Get("Authorization"))
				writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":%s}}`, id, msg))
			},
			func(err error) bool {
				return err != nil && strings.Contains(err.Error(), "bad credential Bearer [REDACTED]")
			}},
		{"a redirect to another origin never carries the token", nil,
			func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
				http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
			},
			func(err error) bool { var re *pool.RedirectError; return errors.As(err, &re) && re.CrossOrigin }},
	} {
		for _, semconv := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/semconv %v", c.name, semconv), func(t *testing.T) {
				srv := startHostile(t)
				srv.set(c.sessionID, c.answer)
				h := hostileHarness(t, pool.Options{OAuthHandler: staticOAuth{}, SemconvCallSpans: semconv, FollowSameOriginRedirects: true})
				tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.srv.URL})
				if err != nil {
					t.Fatal(err)
				}
				_, err = h.callTool(boundedContext(t), tg)
				if !c.check(err) {
					t.Fatalf("err = %v", err)
				}
				for _, s := range append(spanTexts(h.rec), err.Error(), h.logs.String()) {
					if strings.Contains(s, oauthSecret) {
						t.Fatalf("the token shows in %q", s)
					}
				}
				if n := contacted.Load(); n != 0 {
					t.Fatalf("the other origin was contacted %d times", n)
				}
			})
		}
	}
}

// Hostile answers the pool already outlasted stay outlasted, with the
// caps in place: a stream of endless small events and a drip end at the
// call's deadline, 5,000 notifications before the result (far more bytes
// than the cap, each event under it) still answer, an answer with
// another id ends at the deadline, and a 401 is surfaced; the tool runs
// once in every case.
func TestHostileAnswersAlreadyOutlastedStayOutlasted(t *testing.T) {
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tick"}}`
	for _, c := range []struct {
		name     string
		answer   func(http.ResponseWriter, *http.Request, json.RawMessage)
		deadline bool // the call ends at its deadline
		want     func(error) bool
	}{
		{"endless small events end at the deadline", func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			for r.Context().Err() == nil {
				if _, err := fmt.Fprintf(w, "data: %s\n\n", note); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}, true, nil},
		{"a drip ends at the deadline", func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc"`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, true, nil},
		{"5,000 notifications before the result answer", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			for range 5_000 {
				fmt.Fprintf(w, "data: %s\n\n", note)
			}
			fmt.Fprintf(w, "data: %s\n\n", toolResult(id, "done"))
		}, false, func(err error) bool { return err == nil }},
		{"an answer with another id ends at the deadline", func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", toolResult(json.RawMessage("987654"), "not yours"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, true, nil},
		{"401 is surfaced", func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.WriteHeader(http.StatusUnauthorized)
		}, false, func(err error) bool {
			var hs *pool.HTTPStatusError
			return errors.As(err, &hs) && hs.Status == http.StatusUnauthorized
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := startHostile(t)
			srv.set(nil, c.answer)
			h := hostileHarness(t, pool.Options{MaxResponseBytes: testCap})
			ctx := boundedContext(t)
			want := c.want
			if c.deadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
				want = func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }
			}
			if _, err := h.callTool(ctx, hostileTarget(t, srv.srv.URL)); !want(err) {
				t.Fatalf("err = %.300v", err)
			}
			if n := srv.runs.Load(); n != 1 {
				t.Fatalf("the tool ran %d times, want once", n)
			}
		})
	}
}

// Another origin is another scheme, host name or port, however the
// Location spells it: the same listener by another name (localhost for
// 127.0.0.1, [::1]), https on the endpoint's own port, a scheme-relative
// Location, one with user info. None is followed, under either option:
// the listener never sees a request by that name, the error names no user
// info, and the tool runs at most once.
func TestEveryOtherOriginOfTheSameListenerIsNeverFollowed(t *testing.T) {
	srv := startHostile(t)
	port := srv.srv.Listener.Addr().(*net.TCPAddr).Port
	for _, loc := range []string{
		fmt.Sprintf("http://localhost:%d/mcp", port),
		fmt.Sprintf("http://[::1]:%d/mcp", port),
		fmt.Sprintf("https://127.0.0.1:%d/mcp", port),
		fmt.Sprintf("//localhost:%d/mcp", port),
		fmt.Sprintf("http://user:userinfo-s3cr3t@127.0.0.2:%d/mcp", port),
	} {
		for _, follow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/follow %v", loc, follow), func(t *testing.T) {
				srv.runs.Store(0)
				srv.set(nil, func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
					http.Redirect(w, r, loc, http.StatusTemporaryRedirect)
				})
				before := len(srv.hostsSeen())
				h := hostileHarness(t, pool.Options{FollowSameOriginRedirects: follow})
				_, err := h.callTool(boundedContext(t), hostileTarget(t, srv.srv.URL))
				var re *pool.RedirectError
				if !errors.As(err, &re) || !re.CrossOrigin {
					t.Fatalf("err = %v, want a cross-origin *RedirectError", err)
				}
				for _, host := range srv.hostsSeen()[before:] {
					if !strings.HasPrefix(host, "127.0.0.1:") {
						t.Errorf("the listener got a request for %s", host)
					}
				}
				if strings.Contains(err.Error(), "userinfo-s3cr3t") || strings.Contains(re.Location, "user") {
					t.Errorf("the error shows the user info: %v", err)
				}
				if n := srv.runs.Load(); n > 1 {
					t.Errorf("the tool ran %d times", n)
				}
			})
		}
	}
}

// A server echoing the credentials it was sent, in every place its answer
// has for text (a JSON-RPC error's message and data, a 401's
// WWW-Authenticate and body, a 500 body, a garbage Content-Type with
// control bytes), gets neither credential nor a raw control byte into the
// call's error or its spans.
func TestEchoedCredentialsAndControlBytesStayOutOfErrorsAndSpans(t *testing.T) {
	echo := bearerSecret + " " + headerSecret + " \x1b[2J\u202e"
	quoted, _ := json.Marshal(echo)
	for _, c := range []struct {
		name   string
		answer func(w http.ResponseWriter, id json.RawMessage)
	}{
		{"a JSON-RPC error's message and data", func(w http.ResponseWriter, id json.RawMessage) {
			writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s,"data":{"echo":%s}}}`, id, quoted, quoted))
		}},
		{"a 401 with WWW-Authenticate and a body", func(w http.ResponseWriter, _ json.RawMessage) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", token="`+bearerSecret+`"`)
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, echo)
		}},
		{"a 500 body", func(w http.ResponseWriter, _ json.RawMessage) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, echo)
		}},
		{"a garbage Content-Type", func(w http.ResponseWriter, _ json.RawMessage) {
			w.Header()["Content-Type"] = []string{"text/\x7f" + headerSecret}
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, echo)
		}},
	} {
		for _, semconv := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/semconv %v", c.name, semconv), func(t *testing.T) {
				srv := startHostile(t)
				srv.set(nil, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) { c.answer(w, id) })
				h := hostileHarness(t, pool.Options{SemconvCallSpans: semconv})
				_, err := h.callTool(boundedContext(t), hostileTarget(t, srv.srv.URL))
				if err == nil {
					t.Fatal("the call succeeded")
				}
				for _, s := range append(spanTexts(h.rec), err.Error(), fmt.Sprintf("%+v", err)) {
					checkCleanText(t, s)
					if strings.Contains(s, bearerSecret) || strings.Contains(s, headerSecret) {
						t.Errorf("a credential shows in %.300q", s)
					}
				}
			})
		}
	}
}
