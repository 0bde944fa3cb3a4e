package pool_test

// FuzzPoolAgainstHostileServer drives the pool, with zero Options and a
// target carrying a bearer token and a secret header, against a loopback
// server whose every answer is read from the fuzzer's input
// (hostile_fuzz_server_test.go), with sessions (2025-11-25, after a
// refused server/discover) or without (2026-07-28, one shared client):
// statuses, redirects to a second, foreign listener, Retry-After values,
// hostile session ids and content types, JSON-RPC errors with hostile
// text, wrong ids, truncated, huge and gzip bomb bodies, SSE streams with
// many notifications, cut or endless, held answers and cut connections.
// Every case checks the pool's promises to a caller facing an untrusted
// server:
//
//   - a tool runs at most once per call: the server counts each tools/call
//     nonce it answered 2xx, and no nonce may count twice;
//   - memory stays bounded: the live heap, sampled through the case with
//     the collector kept tight, never grows past heapBound (10x the cap,
//     5/8 of the largest body), and the client takes no more of a body
//     than the cap plus what socket buffers hold (acceptSlack);
//   - no credential and no raw control character reaches the caller or a
//     span: error texts and every span's name, status, attributes and
//     events carry neither secret, no C0 or C1 control, DEL, bidi control
//     nor invalid UTF-8, and stay under fuzzShownBound; a reported
//     Retry-After is not negative; the foreign listener never sees the
//     target's credentials;
//   - every call returns by its deadline plus callGrace, Close returns, and
//     no goroutine started by the case still runs seconds after it.
//
// Plain `go test ./pool` replays the seeds below (one or more per family
// of hostility, each named in the test's log). A long run of this target
// alone:
//
//	scripts/fuzz.sh 10m '^FuzzPoolAgainstHostileServer$'
//
// or by hand, go test -run='^$' -fuzz='^FuzzPoolAgainstHostileServer$'
// -fuzztime=10m ./pool. A failing input is written to
// testdata/fuzz/FuzzPoolAgainstHostileServer/: commit it with the fix.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// Bounds of the invariants: generous, so that only a defect crosses them.
const (
	// callGrace is how long past its deadline a call may take to return: a
	// liveness bound, not a performance one.
	callGrace = 5 * time.Second
	// closeBound is how long Close may take: the SDK gives each session's
	// DELETE 5 s.
	closeBound = 15 * time.Second
	// heapBound is how far the live heap may grow during a case: a capped
	// body and the copies the SDK makes decoding it (a JSON-RPC error
	// message just under the cap is held four times over: body, string,
	// two wrapped errors; a malformed SSE line at the cap six times: its
	// fragments, the line, its string and its quoted form), never a
	// 16x-cap body read whole.
	heapBound = 10 * assumedCap
	// fuzzShownBound bounds an error's text and each span string.
	fuzzShownBound = 4 << 10
)

// program is a decoded input: how many calls the case makes, each call's
// deadline, and each request class's stream of steps.
type program struct {
	calls    int
	deadline time.Duration
	streams  [nClasses]*cursor
}

// cursor reads bytes; past the end it reads zeros, so decoding is total.
type cursor struct {
	b []byte
	i int
}

func (c *cursor) byte() byte {
	if c.i >= len(c.b) {
		return 0
	}
	c.i++
	return c.b[c.i-1]
}

// take returns the next n bytes, fewer at the end.
func (c *cursor) take(n int) []byte {
	n = min(n, len(c.b)-c.i)
	c.i += n
	return c.b[c.i-n : c.i]
}

func decodeProgram(in []byte) *program {
	c := &cursor{b: in}
	p := &program{calls: 1 + int(c.byte()%3), deadline: 300*time.Millisecond + time.Duration(c.byte()%8)*250*time.Millisecond}
	for k := range p.streams {
		p.streams[k] = &cursor{b: c.take(int(c.byte()))}
	}
	return p
}

// seedProgram writes a program the way decodeProgram reads it: the seeds
// are written as steps per request class, not as bytes.
type seedProgram struct {
	calls, deadline byte
	handshake, call []step
	del, get        []step
}

func (sp seedProgram) encode() []byte {
	out := []byte{max(sp.calls, 1) - 1, sp.deadline}
	for _, steps := range [][]step{sp.handshake, sp.call, sp.del, sp.get} {
		out = append(out, byte(4*len(steps)))
		for _, st := range steps {
			out = append(out, st.op, st.p1, st.p2, st.p3)
		}
	}
	return out
}

// normal is the well-behaved step, for a seed's padding.
var normal = step{op: opNormal}

// hostileSeeds are the corpus: at least one per family of hostility.
var hostileSeeds = []struct {
	name string
	prog seedProgram
}{
	{"well_behaved", seedProgram{calls: 2}},
	{"sse_answers_with_ids", seedProgram{calls: 1, handshake: []step{{op: opNormalSSE, p1: 3}, {op: opNormalSSE, p1: 1}}, call: []step{{op: opNormalSSE, p1: 3, p2: 1}}}},
	// A 2026-07-28 server: no sessions, one shared client for every call.
	{"sessionless_well_behaved", seedProgram{calls: 3, handshake: []step{{op: opNormal, p1: 1}}}},
	{"sessionless_500_then_hostile_rpc_error", seedProgram{calls: 2, handshake: []step{{op: opNormal, p1: 1}}, call: []step{{op: opStatus, p1: 12, p2: 7, p3: 2<<3 | 1<<5}, {op: opRPCError, p1: 2, p2: 3}}}},
	{"sessionless_then_a_session_id_appears", seedProgram{calls: 2, handshake: []step{{op: opNormal, p1: 1}}, call: []step{{op: opSession, p1: 0}, {op: opSession, p1: 6}}}},
	{"sessionless_huge_and_cut", seedProgram{calls: 3, deadline: 7, handshake: []step{{op: opNormal, p1: 1}}, call: []step{{op: opHuge, p1: 5, p2: 0}, {op: opHang, p1: 2}}}},
	{"sessionless_404_is_not_a_lost_session", seedProgram{calls: 1, handshake: []step{{op: opNormal, p1: 1}}, call: []step{{op: opStatus, p1: 10}}}},
	// Redirects: followed by the client unless the pool refuses them; the
	// foreign listener must never see the credentials.
	{"redirect_307_cross_origin_on_call", seedProgram{calls: 1, call: []step{{op: opStatus, p1: 5, p3: 1}}}},
	{"redirect_308_cross_origin_on_initialize", seedProgram{calls: 1, handshake: []step{normal, {op: opStatus, p1: 6, p3: 1}}}},
	{"redirect_302_cross_origin_on_discover", seedProgram{calls: 1, handshake: []step{{op: opStatus, p1: 4, p3: 1}}}},
	{"redirect_307_same_origin", seedProgram{calls: 1, call: []step{{op: opStatus, p1: 5, p3: 2}}}},
	{"redirect_301_protocol_relative_cross_origin", seedProgram{calls: 1, call: []step{{op: opStatus, p1: 3, p3: 7}}}},
	// Statuses with Retry-After, including ones that overflow.
	{"503_retry_after_overflowing_int64", seedProgram{calls: 1, call: []step{{op: opStatus, p1: 13, p2: 6}}}},
	{"429_retry_after_maxint64_seconds", seedProgram{calls: 1, call: []step{{op: opStatus, p1: 11, p2: 7}}}},
	{"503_retry_after_past_max_duration", seedProgram{calls: 1, call: []step{{op: opStatus, p1: 13, p2: 8}}}},
	{"503_retry_after_year_9999_on_initialize", seedProgram{calls: 1, handshake: []step{normal, {op: opStatus, p1: 13, p2: 9}}}},
	{"500_with_hostile_rpc_error_text", seedProgram{calls: 1, call: []step{{op: opStatus, p1: 12, p2: 0, p3: 1<<3 | 0<<5}}}},
	{"404_then_redial_then_400_with_text", seedProgram{calls: 1, call: []step{{op: opStatus, p1: 10}, {op: opStatus, p1: 7, p3: 2<<3 | 2<<5}}}},
	{"401_403_with_echoed_credential_text", seedProgram{calls: 2, call: []step{{op: opStatus, p1: 8, p3: 1<<3 | 7<<5}, {op: opStatus, p1: 9, p3: 2<<3 | 6<<5}}}},
	{"202_and_204_to_a_call", seedProgram{calls: 2, call: []step{{op: opStatus, p1: 1}, {op: opStatus, p1: 2}}}},
	// Server text in errors: controls, C1, bidi, invalid UTF-8, huge.
	{"rpc_error_control_bytes", seedProgram{calls: 1, call: []step{{op: opRPCError, p1: 0}}}},
	{"rpc_error_c1_and_bidi", seedProgram{calls: 2, call: []step{{op: opRPCError, p1: 1}, {op: opRPCError, p1: 2}}}},
	{"rpc_error_invalid_utf8_and_del", seedProgram{calls: 2, call: []step{{op: opRPCError, p1: 3}, {op: opRPCError, p1: 4}}}},
	{"rpc_error_1mib_message", seedProgram{calls: 1, deadline: 7, call: []step{{op: opRPCError, p1: 5, p2: 5}}}},
	{"rpc_error_on_sse_with_osc8_link", seedProgram{calls: 1, call: []step{{op: opRPCError, p1: 5, p3: 2}}}},
	{"tool_error_result_hostile_text", seedProgram{calls: 1, call: []step{{op: opRPCError, p1: 0, p2: 4, p3: 1}}}},
	{"initialize_refused_with_hostile_text", seedProgram{calls: 1, handshake: []step{normal, {op: opRPCError, p1: 2, p2: 3}}}},
	// Wrong ids and truncation.
	{"wrong_id_json", seedProgram{calls: 1, call: []step{{op: opWrongID, p1: 0}}}},
	{"wrong_id_sse_then_right_twice", seedProgram{calls: 1, call: []step{{op: opWrongID, p1: 3, p2: 3}}}},
	{"truncated_json_with_content_length", seedProgram{calls: 1, call: []step{{op: opTruncated, p1: 100, p2: 2}}}},
	{"truncated_sse", seedProgram{calls: 1, call: []step{{op: opTruncated, p1: 200, p2: 1}}}},
	{"truncated_initialize", seedProgram{calls: 1, handshake: []step{normal, {op: opTruncated, p1: 40}}}},
	// Huge bodies: under the cap, just over it, a few times it.
	{"huge_valid_json_just_under_cap", seedProgram{calls: 1, deadline: 7, call: []step{{op: opHuge, p1: 2, p2: 0}}}},
	{"huge_valid_json_one_byte_over_cap", seedProgram{calls: 1, deadline: 7, call: []step{{op: opHuge, p1: 3, p2: 0, p3: 1}}}},
	{"huge_valid_json_16x_cap", seedProgram{calls: 1, deadline: 7, call: []step{{op: opHuge, p1: 5, p2: 0}}}},
	{"huge_junk_16x_cap_on_initialize", seedProgram{calls: 1, deadline: 7, handshake: []step{normal, {op: opHuge, p1: 5, p2: 1, p3: 1}}}},
	{"huge_error_message_just_under_cap", seedProgram{calls: 1, deadline: 7, call: []step{{op: opHuge, p1: 2, p2: 2}}}},
	{"huge_error_message_2x_cap", seedProgram{calls: 1, deadline: 7, call: []step{{op: opHuge, p1: 4, p2: 2}}}},
	{"huge_single_sse_event_16x_cap", seedProgram{calls: 1, deadline: 7, call: []step{{op: opHuge, p1: 5, p2: 3}}}},
	{"huge_500_error_body_16x_cap", seedProgram{calls: 1, deadline: 7, call: []step{{op: opHuge, p1: 5, p2: 4, p3: 5}}}},
	{"huge_400_error_body_16x_cap_on_initialize", seedProgram{calls: 1, deadline: 7, handshake: []step{normal, {op: opHuge, p1: 5, p2: 4, p3: 0}}}},
	{"gzip_bomb_json_16x_cap", seedProgram{calls: 1, deadline: 7, call: []step{{op: opGzipBomb, p1: 1}}}},
	{"gzip_bomb_sse_data_field_16x_cap", seedProgram{calls: 1, deadline: 7, call: []step{{op: opGzipBomb, p1: 1, p2: 1}}}},
	// SSE streams: many notifications, cut and resumed, endless.
	{"sse_1000_notifications_then_result", seedProgram{calls: 1, deadline: 7, call: []step{{op: opNotifications, p1: 125, p2: 0, p3: 1}}}},
	{"sse_notifications_hostile_text", seedProgram{calls: 1, call: []step{{op: opNotifications, p1: 2, p2: 2, p3: 2}, {op: opNotifications, p1: 1, p2: 0, p3: 6}}}},
	{"sse_server_requests_without_handler", seedProgram{calls: 1, call: []step{{op: opNotifications, p1: 3, p2: 7, p3: 4}}}},
	{"sse_cut_then_resumed_by_get", seedProgram{calls: 2, call: []step{{op: opSSECut, p1: 5}}}},
	{"sse_cut_get_refused_404", seedProgram{calls: 1, call: []step{{op: opSSECut, p3: 1}}, get: []step{{op: opStatus, p1: 10}}}},
	{"sse_cut_get_endless", seedProgram{calls: 1, call: []step{{op: opSSECut}}, get: []step{{op: opEndless, p1: 1}}}},
	{"sse_endless_keepalive", seedProgram{calls: 1, deadline: 0, call: []step{{op: opEndless}}}},
	{"sse_endless_progress", seedProgram{calls: 1, deadline: 0, call: []step{{op: opEndless, p1: 2}}}},
	{"sse_retry_huge_then_cut", seedProgram{calls: 1, call: []step{{op: opNormalSSE, p1: 2, p2: 255}, {op: opSSECut, p1: 255}}}},
	// Session ids: huge, control bytes, non-ASCII, the credential itself.
	{"session_id_control_bytes", seedProgram{calls: 2, handshake: []step{normal, {op: opSession, p1: 0}}}},
	{"session_id_c1", seedProgram{calls: 1, handshake: []step{normal, {op: opSession, p1: 1}}}},
	{"session_id_bidi", seedProgram{calls: 1, handshake: []step{normal, {op: opSession, p1: 2}}}},
	{"session_id_invalid_utf8", seedProgram{calls: 1, handshake: []step{normal, {op: opSession, p1: 3}}}},
	{"session_id_64kib", seedProgram{calls: 2, handshake: []step{normal, {op: opSession, p1: 9, p2: 4}}}},
	{"session_id_is_the_bearer_token", seedProgram{calls: 2, handshake: []step{normal, {op: opSession, p1: 6}}}},
	{"session_id_changes_on_a_call", seedProgram{calls: 2, call: []step{{op: opSession, p1: 8}}}},
	{"session_id_is_the_secret_header", seedProgram{calls: 1, handshake: []step{normal, {op: opEcho, p1: 0, p2: 1}}}},
	// Content types and headers.
	{"content_type_garbage", seedProgram{calls: 3, call: []step{{op: opContentType, p1: 4}, {op: opContentType, p1: 5}, {op: opContentType, p1: 7}}}},
	{"content_type_missing_and_sse_for_json", seedProgram{calls: 2, handshake: []step{normal, {op: opContentType, p1: 0}}, call: []step{{op: opContentType, p1: 3}}}},
	{"header_past_1mib", seedProgram{calls: 1, call: []step{{op: opHeaders, p1: 0}}}},
	{"many_hostile_headers_and_retry_after", seedProgram{calls: 2, call: []step{{op: opHeaders, p1: 1, p3: 1}, {op: opHeaders, p1: 2, p2: 0, p3: 3}}}},
	// Credentials echoed back.
	{"echo_authorization_in_rpc_error", seedProgram{calls: 1, call: []step{{op: opEcho, p1: 1, p2: 0}}}},
	{"echo_secret_header_in_500_body", seedProgram{calls: 1, call: []step{{op: opEcho, p1: 2, p2: 1, p3: 5}}}},
	{"echo_bearer_in_sse_error", seedProgram{calls: 1, call: []step{{op: opEcho, p1: 3, p2: 2}}}},
	{"echo_session_id_with_credential_and_control", seedProgram{calls: 1, handshake: []step{normal, {op: opEcho, p1: 4, p2: 2}}}},
	// Held and cut answers, on every request class.
	{"call_held_until_deadline", seedProgram{calls: 1, deadline: 0, call: []step{{op: opHang}}}},
	{"call_headers_then_held", seedProgram{calls: 1, deadline: 0, call: []step{{op: opHang, p1: 1, p2: 1}}}},
	{"call_connection_cut", seedProgram{calls: 2, call: []step{{op: opHang, p1: 2}}}},
	{"initialize_held", seedProgram{calls: 1, deadline: 0, handshake: []step{normal, {op: opHang}}}},
	{"delete_held_and_cut", seedProgram{calls: 3, call: []step{{op: opStatus, p1: 12}, {op: opStatus, p1: 12}}, del: []step{{op: opHang}, {op: opHang, p1: 2}}}},
	{"slow_answers", seedProgram{calls: 2, handshake: []step{{op: 3 << 4}, {op: 3 << 4}, {op: 2 << 4}}, call: []step{{op: opNormalSSE | 3<<4, p1: 1}}}},
}

// seedNames maps a seed's bytes to its name, for failure messages.
var seedNames = func() map[string]string {
	m := map[string]string{}
	for _, s := range hostileSeeds {
		m[string(s.prog.encode())] = s.name
	}
	return m
}()

func FuzzPoolAgainstHostileServer(f *testing.F) {
	for i, s := range hostileSeeds {
		if testing.Short() && i%2 == 1 {
			continue // -short replays every other seed; every other run, all of them
		}
		f.Add(s.prog.encode())
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if name := seedNames[string(in)]; name != "" {
			t.Logf("seed %s", name)
		}
		runHostileCase(t, decodeProgram(in))
	})
}

// hostileCase is what one program's run left to check.
type hostileCase struct {
	prog    *program
	secrets fuzzSecrets
	srv     *scriptedServer
	rec     *telemetry.Recorder
	errs    []error // each call's, in order
	grew    uint64  // how far the live heap grew
}

// runHostileCase runs one program against a fresh server and pool and
// checks every invariant.
func runHostileCase(t *testing.T, prog *program) {
	leaks := goleak.IgnoreCurrent()
	c := runCase(t, prog)
	checkCase(t, c)
	verifyNoLeak(t, leaks)
}

// verifyNoLeak fails t if a goroutine started during the case is still
// there after ten rounds of goleak's own waiting (about 0.45 s each): the
// SDK's reader of a capped body may still be decoding what it read when
// Close returns, which ends, where a leak does not.
func verifyNoLeak(t *testing.T, leaks goleak.Option) {
	t.Helper()
	var err error
	for range 10 {
		if err = goleak.Find(leaks); err == nil {
			return
		}
	}
	t.Error(err)
}

// runCase makes the program's calls through a fresh pool (zero Options,
// tracing on) and closes pool and server. It fails t only when a call or
// Close does not return in time.
func runCase(t *testing.T, prog *program) *hostileCase {
	c := &hostileCase{prog: prog, secrets: fuzzSecrets{bearer: "fzBearer" + randomHex(), header: "fzHeader" + randomHex()}}
	heap := startHeapWatch()
	c.srv = newScriptedServer(prog, c.secrets)
	c.rec = telemetry.NewRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(c.rec))
	p, err := pool.New(pool.Options{TracerProvider: tp})
	if err != nil {
		t.Fatalf("pool.New: %v", err)
	}
	target, err := pool.NewTarget(pool.TargetConfig{
		Endpoint:      c.srv.main.URL + "/mcp",
		BearerToken:   c.secrets.bearer,
		Header:        http.Header{secretHeaderName: {c.secrets.header}},
		SecretHeaders: []string{secretHeaderName},
	})
	if err != nil {
		t.Fatalf("NewTarget: %v", err)
	}
	for i := range prog.calls {
		err, ok := callWithin(p, target, fmt.Sprintf("nonce-%d", i), prog.deadline)
		if !ok {
			t.Errorf("call %d did not return within its deadline %s + %s", i, prog.deadline, callGrace)
			break
		}
		c.errs = append(c.errs, err)
	}
	if !returnsWithin(closeBound, func() { _ = p.Close() }) {
		t.Errorf("Pool.Close did not return within %s", closeBound)
	}
	c.srv.close()
	_ = tp.Shutdown(context.Background())
	c.grew = heap.stop()
	return c
}

// checkCase checks the invariants on a run.
func checkCase(t *testing.T, c *hostileCase) {
	t.Helper()
	for i, err := range c.errs {
		t.Logf("call %d: error %.200q", i, fmt.Sprint(err))
	}
	t.Logf("the heap grew %d MiB", c.grew/mib)
	checkRuns(t, c.srv)
	checkMemory(t, c.srv, c.grew)
	for i, err := range c.errs {
		checkError(t, fmt.Sprintf("call %d error", i), err, c.secrets)
	}
	checkSpans(t, c.rec, c.secrets)
}

// TestHostileServerWellBehavedProgramIsServedAndScanned pins that the
// harness is not vacuous: a program of well-behaved answers (the empty
// input) serves every call, runs each tool once, puts the credentials on
// the wire for the scans to look for, and records the spans they scan.
func TestHostileServerWellBehavedProgramIsServedAndScanned(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	c := runCase(t, decodeProgram([]byte{2}))
	checkCase(t, c)
	verifyNoLeak(t, leaks)
	if len(c.errs) != 3 {
		t.Fatalf("%d calls made, want 3", len(c.errs))
	}
	for i, err := range c.errs {
		if err != nil {
			t.Errorf("call %d against the well-behaved program: %v", i, err)
		}
		if n := c.srv.runs[fmt.Sprintf("nonce-%d", i)]; n != 1 {
			t.Errorf("call %d ran the tool %d times, want 1", i, n)
		}
	}
	if !c.srv.sawCreds {
		t.Error("the server never saw the bearer token and the secret header: the secret scans would look for nothing")
	}
	if len(recordedNamed(c.rec, spans.SpanCallTool)) != 3 {
		t.Errorf("recorded %d call spans, want 3", len(recordedNamed(c.rec, spans.SpanCallTool)))
	}
}

func randomHex() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// callWithin makes one call with its own nonce under a deadline, and says
// whether it returned by the deadline plus callGrace.
func callWithin(p *pool.Pool, target *pool.Target, nonce string, deadline time.Duration) (error, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var err error
	ok := returnsWithin(deadline+callGrace, func() {
		_, err = p.CallTool(ctx, target, &mcp.CallToolParams{Name: "act", Arguments: map[string]any{"nonce": nonce}})
	})
	return err, ok
}

// returnsWithin runs fn and says whether it returned within d. A fn that
// did not is left running: the case has failed, and the server's close
// is what may still end it.
func returnsWithin(d time.Duration, fn func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}

// checkRuns: no tools/call nonce was answered 2xx twice.
func checkRuns(t *testing.T, srv *scriptedServer) {
	t.Helper()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for nonce, n := range srv.runs {
		if n > 1 {
			t.Errorf("the tool ran %d times for one call (nonce %q): a call may run it at most once", n, nonce)
		}
	}
	if len(srv.leaked) > 0 {
		t.Errorf("the foreign listener received the target's credentials (%s): a redirect carried them across origins", strings.Join(srv.leaked, ", "))
	}
}

// checkMemory: the heap stayed bounded and no body was read past the cap.
func checkMemory(t *testing.T, srv *scriptedServer, grew uint64) {
	t.Helper()
	if grew > heapBound {
		t.Errorf("the live heap grew by %d MiB during the case, over the bound of %d MiB: a response body was not capped", grew/mib, heapBound/mib)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, o := range srv.overAccepted {
		t.Errorf("the client read %s: past the cap of at most %d MiB (plus %d MiB of socket buffers)", o, assumedCap/mib, acceptSlack/mib)
	}
}

// checkError checks a call's error: its text as checkShown does, and a
// Retry-After it reports is not negative (a server's huge value must not
// overflow into one).
func checkError(t *testing.T, where string, err error, secrets fuzzSecrets) {
	t.Helper()
	if err == nil {
		return
	}
	checkShown(t, where, err.Error(), secrets)
	var hse *pool.HTTPStatusError
	if errors.As(err, &hse) && hse.RetryAfter < 0 {
		t.Errorf("%s reports a negative Retry-After %s: the server's value overflowed", where, hse.RetryAfter)
	}
}

// checkShown checks text the pool shows to a caller or a span: no secret,
// no control character, valid UTF-8, bounded.
func checkShown(t *testing.T, where, s string, secrets fuzzSecrets) {
	t.Helper()
	if len(s) > fuzzShownBound {
		t.Errorf("%s is %d bytes, over %d: server text must be bounded (starts %q)", where, len(s), fuzzShownBound, s[:200])
	}
	for _, sec := range []string{secrets.bearer, secrets.header} {
		if strings.Contains(s, sec) {
			t.Errorf("%s carries a secret: %.300q", where, s)
		}
	}
	if !utf8.ValidString(s) {
		t.Errorf("%s is not valid UTF-8: %.300q", where, s)
		return
	}
	for i, r := range s {
		if isControl(r) {
			t.Errorf("%s has the raw control %U at byte %d: %.300q", where, r, i, s)
			return
		}
	}
}

// isControl reports the characters a terminal, a log line or a trace
// viewer must never receive raw from a server: C0 controls (tab and
// newline too), DEL, C1 controls, and the bidi controls that reorder text.
func isControl(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// checkSpans checks every recorded span's name, status, attributes and
// events.
func checkSpans(t *testing.T, rec *telemetry.Recorder, secrets fuzzSecrets) {
	t.Helper()
	for _, s := range rec.Spans() {
		where := "span " + s.Name()
		checkShown(t, where+" name", s.Name(), secrets)
		checkShown(t, where+" status", s.Status().Description, secrets)
		checkAttrs(t, where, s.Attributes(), secrets)
		for _, e := range s.Events() {
			checkShown(t, where+" event name", e.Name, secrets)
			checkAttrs(t, where+" event "+e.Name, e.Attributes, secrets)
		}
	}
}

func checkAttrs(t *testing.T, where string, attrs []attribute.KeyValue, secrets fuzzSecrets) {
	t.Helper()
	for _, kv := range attrs {
		switch kv.Value.Type() {
		case attribute.STRING:
			checkShown(t, where+" "+string(kv.Key), kv.Value.AsString(), secrets)
		case attribute.STRINGSLICE:
			for _, v := range kv.Value.AsStringSlice() {
				checkShown(t, where+" "+string(kv.Key), v, secrets)
			}
		}
	}
}

// heapWatch samples the live heap through a case: the heap the collector
// marked live, which a body read whole stays in while it is decoded, and
// dead objects do not (a body capped as it is read leaves garbage behind,
// not a live buffer). The collector is kept tight (GOGC 10) meanwhile, so
// it runs often and a large buffer cannot live between two of its cycles.
type heapWatch struct {
	base, peak uint64
	gcPercent  int
	done       chan struct{}
	wg         sync.WaitGroup
}

const heapMetric = "/gc/heap/live:bytes"

func heapNow() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapWatch() *heapWatch {
	h := &heapWatch{gcPercent: debug.SetGCPercent(10), done: make(chan struct{})}
	runtime.GC() // the base is this moment's live heap
	h.base = heapNow()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			h.peak = max(h.peak, heapNow())
			select {
			case <-h.done:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

// stop ends the sampling and returns how far the live heap grew past its
// base.
func (h *heapWatch) stop() uint64 {
	close(h.done)
	h.wg.Wait()
	debug.SetGCPercent(h.gcPercent)
	if h.peak < h.base {
		return 0
	}
	return h.peak - h.base
}
