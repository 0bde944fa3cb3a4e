package pool_test

// One matrix, every peer: the same checks against the Go fixture and each
// real server of internal/peers (TypeScript SDK 1.x, TypeScript SDK v2,
// server-everything), at each revision the server speaks, with the pool's
// default Options. Every check ends by holding Stat and the spans against
// the server's own ledger; the continuity and side-effect checks also write
// the spans to an OTLP JSON-lines dump and hold `mcptrace analyze` and
// `mcptrace check` on it against the ledger.
//
// Where a check cannot apply it says so: at a revision without sessions
// (2026-07-28, and the TypeScript SDK v2's stateless 2025-11-25 serving)
// there is nothing to forget or redial (a 404 is an unknown method, and the
// redial checks pin that it is not retried), state is never kept between
// calls (call 2 must read "no workspace"), and Close sends no DELETE.
// server-everything keeps no ledger and has no hooks: its ledger is the
// recording proxy's in front of it (rejections are the proxy's, a forgotten
// session is one the proxy ended with a DELETE), its state is the per-session
// toggle of simulated logging, its side effect is counted from that ledger,
// and it answers a forgotten session 400, which the pool must drop and not
// retry, where the others answer 404 and get one redial.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/internal/peers"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// matrixSubject is one server at one revision.
type matrixSubject struct {
	name string
	// start runs the server for the subject's checks.
	start func(t *testing.T) matrixServer
	// version pins the revision; "" lets the pool negotiate, as
	// pool.Options{} does.
	version string
	// revision is what the pool must end up speaking; sessions whether it
	// has sessions there.
	revision string
	sessions bool
}

var matrixSubjects = []matrixSubject{
	{name: "go-fixture/2025-11-25", start: startGoFixture, version: spans.ProtocolLegacy, revision: spans.ProtocolLegacy, sessions: true},
	{name: "go-fixture/negotiated-2025-11-25", start: startGoFixture, revision: spans.ProtocolLegacy, sessions: true},
	{name: "go-fixture/modern-only-2026-07-28", start: startGoFixtureWith(fixtures.Options{ModernOnly: true}), revision: spans.ProtocolModern},
	{name: "ts-sdk-1/negotiated-2025-11-25", start: startPeer(peers.TSSDK1), revision: spans.ProtocolLegacy, sessions: true},
	{name: "ts-sdk-v2/negotiated-2026-07-28", start: startPeer(peers.TSSDKv2), revision: spans.ProtocolModern},
	{name: "ts-sdk-v2/2025-11-25-stateless", start: startPeer(peers.TSSDKv2), version: spans.ProtocolLegacy, revision: spans.ProtocolLegacy},
	{name: "ts-sdk-v2-modern-only/negotiated-2026-07-28", start: startPeerWith(peers.TSSDKv2, peers.Options{ModernOnly: true}), revision: spans.ProtocolModern},
	{name: "server-everything/negotiated-2025-11-25", start: startPeer(peers.Everything), revision: spans.ProtocolLegacy, sessions: true},
}

// matrixCheck is one behaviour the pool promises, checked on a subject with
// a fresh pool and an empty ledger.
type matrixCheck struct {
	name string
	run  func(t *testing.T, m *matrixRun)
}

var matrixChecks = []matrixCheck{
	{"state_set_by_call_1_is_read_by_call_2_in_every_execution_and_analyze_agrees", checkContinuityExecution},
	{"state_set_by_call_1_is_read_by_call_2_through_a_held_lease", checkContinuityLease},
	{"handshake_only_on_the_cold_start", checkHandshakeOnlyCold},
	{"404_to_a_reused_session_is_redialed_once", via(viaCallTool, checkRedialReused)},
	{"404_to_a_reused_session_is_redialed_once_in_an_execution", via(viaExecution, checkRedialReused)},
	{"404_to_a_fresh_session_is_redialed_once", via(viaCallTool, checkRedialFresh)},
	{"404_to_a_fresh_session_is_redialed_once_in_an_execution", via(viaExecution, checkRedialFresh)},
	{"a_session_the_server_forgot_after_its_handshake", checkForgottenFresh},
	{"never_a_second_redial", via(viaCallTool, checkNoSecondRedial)},
	{"never_a_second_redial_in_an_execution", via(viaExecution, checkNoSecondRedial)},
	{"400_and_500_drop_the_session_and_are_never_retried", checkDropNoRetry},
	{"an_answer_lost_after_the_tool_ran_is_never_retried", checkLostAnswerNoRetry},
	{"isError_on_the_first_session_is_a_clean_release", checkIsErrorClean},
	{"sessions_opened_within_5pct_of_the_in_flight_peak_under_50_concurrent_executions", checkConcurrentSizing},
	{"a_side_effectful_tool_runs_exactly_as_often_as_it_succeeded", checkSideEffectExact},
	{"close_sends_delete_where_the_revision_has_sessions", checkCloseDeletes},
}

// TestPeerMatrix runs every check on every subject. Without Node or
// peers/node_modules the real peers skip (naming `cd peers && npm ci`);
// under CI=true they fail.
func TestPeerMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the pool against every real peer server (about 20 s)")
	}
	cli := &cliBuild{dir: t.TempDir()}
	for _, subj := range matrixSubjects {
		t.Run(subj.name, func(t *testing.T) {
			srv := subj.start(t)
			for _, c := range matrixChecks {
				t.Run(c.name, func(t *testing.T) {
					srv.Reset(t)
					m := newMatrixRun(t, subj, srv, cli)
					c.run(t, m)
				})
			}
		})
	}
}

// checkContinuityExecution: in each of n executions, call 1 sets the state
// and call 2 reads it, the first execution included; Stat, the spans, and
// analyze and check on the dump agree with the ledger.
func checkContinuityExecution(t *testing.T, m *matrixRun) {
	const n = 6
	var ends []int
	for i := range n {
		m.execution(t, i, func(ctx context.Context, e *pool.Execution) {
			m.mustCall(t, ctx, e, m.tools.set(i))
			got := m.mustCall(t, ctx, e, m.tools.get)
			m.wantState(t, i, got)
		})
		ends = append(ends, len(ledgerCalls(m.srv.Requests(t))))
	}
	reqs := m.agree(t)
	m.wantOneSessionPerExecution(t, reqs, 2)
	m.agreeAnalyze(t, reqs, execCalls(reqs, ends))
}

// checkContinuityLease is the same through Pool.Acquire and a held lease.
func checkContinuityLease(t *testing.T, m *matrixRun) {
	ctx := boundedContext(t)
	for i := range 3 {
		l, err := m.pool.Acquire(ctx, m.target)
		if err != nil {
			t.Fatalf("lease %d: acquire: %v", i, err)
		}
		m.leaseCall(t, ctx, l, m.tools.set(i))
		got := m.leaseCall(t, ctx, l, m.tools.get)
		l.Release(nil)
		m.wantState(t, i, got)
	}
	reqs := m.agree(t)
	m.wantOneSessionPerExecution(t, reqs, 2)
	if st := m.pool.Stat(); st.Dials != 1 || st.Hits != 2 {
		t.Errorf("three leases in a row: Stat dials %d hits %d, want 1 dial and 2 hits (a release after a clean lease keeps the session)%s", st.Dials, st.Hits, ledgerString(reqs))
	}
}

// checkHandshakeOnlyCold: many calls and executions, one handshake, all of
// its requests before the first call.
func checkHandshakeOnlyCold(t *testing.T, m *matrixRun) {
	ctx := boundedContext(t)
	for range 4 {
		if _, err := m.pool.CallTool(ctx, m.target, m.params(m.tools.echo)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		m.execution(t, i, func(ctx context.Context, e *pool.Execution) { m.mustCall(t, ctx, e, m.tools.echo) })
	}
	reqs := m.agree(t)
	if got := ledgerHandshakes(reqs, m.subj.revision); got != 1 {
		t.Errorf("the server completed %d handshakes, want 1 (the cold start)%s", got, ledgerString(reqs))
	}
	seenCall := false
	for _, r := range reqs {
		seenCall = seenCall || r.RPCMethod == "tools/call"
		if seenCall && handshakeMethods[r.RPCMethod] {
			t.Errorf("a %s after the first call: handshakes belong to the cold start only%s", r.RPCMethod, ledgerString(reqs))
			break
		}
	}
	if st := m.pool.Stat(); st.MissReasons[spans.MissAfterFailure] != 0 || st.Misses != 1 {
		t.Errorf("Stat misses %d (%v), want the one cold miss", st.Misses, st.MissReasons)
	}
}

// callVia names the two redial paths: Pool.CallTool, and the calls of one
// Execution (which holds its session between calls).
type callVia int

const (
	viaCallTool callVia = iota
	viaExecution
)

// via runs check with do making its calls the way v says: each through
// Pool.CallTool, or all within one Execution.
func via(v callVia, check func(t *testing.T, m *matrixRun, do func(c call) error)) func(t *testing.T, m *matrixRun) {
	return func(t *testing.T, m *matrixRun) {
		ctx := boundedContext(t)
		if v == viaCallTool {
			check(t, m, func(c call) error {
				_, err := m.pool.CallTool(ctx, m.target, m.params(c))
				return err
			})
			return
		}
		e := m.pool.Execution()
		check(t, m, func(c call) error {
			_, err := e.CallTool(ctx, m.target, m.params(c))
			return err
		})
		e.Close()
	}
}

// checkRedialReused: a 404 to a warm session's call is one transparent
// redial; on a sessionless revision a 404 is an unknown method, never
// redialed.
func checkRedialReused(t *testing.T, m *matrixRun, do func(c call) error) {
	if err := do(m.tools.echo); err != nil {
		t.Fatalf("warm-up call: %v", err)
	}
	before := m.srv.Ran(t)
	m.srv.Reject(t, http.StatusNotFound)
	err := do(m.tools.effect)
	reqs := m.agree(t)
	m.wantRedial(t, err, reqs, before, 1)
}

// checkRedialFresh: the same on a key's first session.
func checkRedialFresh(t *testing.T, m *matrixRun, do func(c call) error) {
	before := m.srv.Ran(t)
	m.srv.Reject(t, http.StatusNotFound)
	err := do(m.tools.effect)
	reqs := m.agree(t)
	m.wantRedial(t, err, reqs, before, 1)
}

// wantRedial holds the outcome of one call answered 404 once: where the
// revision has sessions, one redial, the tool ran once, the caller saw
// success; elsewhere the 404 reaches the caller unretried.
func (m *matrixRun) wantRedial(t *testing.T, err error, reqs []fixtures.Request, before int64, wantRuns int64) {
	t.Helper()
	calls := ledgerCallsOf(reqs, m.tools.effect.name)
	st := m.pool.Stat()
	if !m.subj.sessions {
		var hs *pool.HTTPStatusError
		if !errors.As(err, &hs) || hs.Status != http.StatusNotFound || errors.Is(err, pool.ErrSessionExpired) {
			t.Errorf("sessionless 404: err %v, want an HTTPStatusError 404 that is not ErrSessionExpired", err)
		}
		if len(calls) != 1 || st.Redials != 0 {
			t.Errorf("sessionless 404: %d calls reached the server, %d redials; want 1 and 0%s", len(calls), st.Redials, ledgerString(reqs))
		}
		return
	}
	if err != nil {
		t.Fatalf("a call answered 404 once was not redialed transparently: %v%s", err, ledgerString(reqs))
	}
	if len(calls) != 2 || calls[0].Status != http.StatusNotFound || calls[1].Status != http.StatusOK || calls[0].SessionID == calls[1].SessionID {
		t.Errorf("want the 404 on one session, then 200 on a new one%s", ledgerString(reqs))
	}
	if st.Redials != 1 || st.MissReasons[spans.MissRedial] != 1 {
		t.Errorf("Stat redials %d, miss reasons %v; want one redial", st.Redials, st.MissReasons)
	}
	if ran := m.srv.Ran(t) - before; ran != wantRuns {
		t.Errorf("the side-effect tool ran %d times, want %d", ran, wantRuns)
	}
}

// checkForgottenFresh: the server itself forgets a session right after its
// handshake. On a 404 (the spec, the TypeScript SDK) the pool redials once;
// server-everything answers 400 instead, which the pool must drop and never
// retry (a 400 does not prove the tool did not run).
func checkForgottenFresh(t *testing.T, m *matrixRun) {
	if !m.subj.sessions {
		t.Skip("no sessions at this revision: nothing to forget")
	}
	ctx := boundedContext(t)
	before := m.srv.Ran(t)
	m.srv.ForgetNext(t, 1)
	_, err := m.pool.CallTool(ctx, m.target, m.params(m.tools.effect))
	reqs := m.agree(t)
	if m.srv.ForgottenStatus() == http.StatusNotFound {
		m.wantRedial(t, err, reqs, before, 1)
		return
	}
	calls := ledgerCallsOf(reqs, m.tools.effect.name)
	if !errors.Is(err, pool.ErrSessionRejected) || len(calls) != 1 || calls[0].Status != http.StatusBadRequest {
		t.Errorf("a forgotten session answered 400: err %v, %d calls; want ErrSessionRejected after exactly one call%s", err, len(calls), ledgerString(reqs))
	}
	if st := m.pool.Stat(); st.Redials != 0 || st.Failures[spans.ErrTypeBadSession] != 1 {
		t.Errorf("Stat redials %d failures %v; want no redial and one bad_session drop", st.Redials, st.Failures)
	}
}

// checkNoSecondRedial: a 404 to the redial too reaches the caller.
func checkNoSecondRedial(t *testing.T, m *matrixRun, do func(c call) error) {
	if !m.subj.sessions {
		t.Skip("no redial at this revision (404 is an unknown method): see 404_to_a_reused_session_is_redialed_once")
	}
	if err := do(m.tools.echo); err != nil {
		t.Fatalf("warm-up call: %v", err)
	}
	before := m.srv.Ran(t)
	m.srv.Reject(t, http.StatusNotFound)
	m.srv.Reject(t, http.StatusNotFound)
	err := do(m.tools.effect)
	reqs := m.agree(t)
	calls := ledgerCallsOf(reqs, m.tools.effect.name)
	if !errors.Is(err, pool.ErrSessionExpired) || len(calls) != 2 {
		t.Errorf("two 404s: err %v after %d calls; want ErrSessionExpired after exactly 2%s", err, len(calls), ledgerString(reqs))
	}
	if st := m.pool.Stat(); st.Redials != 1 {
		t.Errorf("Stat redials %d, want 1", st.Redials)
	}
	if ran := m.srv.Ran(t) - before; ran != 0 {
		t.Errorf("the side-effect tool ran %d times, want 0", ran)
	}
}

// checkDropNoRetry: a 400 or 500 to a call drops the session, reaches the
// caller, is never retried; the next call dials anew, for that reason.
func checkDropNoRetry(t *testing.T, m *matrixRun) {
	ctx := boundedContext(t)
	m.warm(t, ctx)
	for i, status := range []int{http.StatusBadRequest, http.StatusInternalServerError} {
		mark := len(m.srv.Requests(t))
		before, dials := m.srv.Ran(t), m.pool.Stat().Dials
		m.srv.Reject(t, status)
		_, err := m.pool.CallTool(ctx, m.target, m.params(m.tools.effect))
		wantErr := errors.Is(err, pool.ErrSessionRejected)
		var hs *pool.HTTPStatusError
		if status != http.StatusBadRequest || !m.subj.sessions {
			wantErr = errors.As(err, &hs) && hs.Status == status
		}
		reqs := m.srv.Requests(t)[mark:]
		if calls := ledgerCallsOf(reqs, m.tools.effect.name); !wantErr || len(calls) != 1 {
			t.Errorf("HTTP %d: err %v after %d calls; want its error after exactly one%s", status, err, len(calls), ledgerString(reqs))
		}
		if ran := m.srv.Ran(t) - before; ran != 0 {
			t.Errorf("HTTP %d: the side-effect tool ran %d times, want 0", status, ran)
		}
		if _, err := m.pool.CallTool(ctx, m.target, m.params(m.tools.echo)); err != nil {
			t.Fatalf("the call after a dropped session: %v", err)
		}
		st := m.pool.Stat()
		if st.Dials != dials+1 || st.MissReasons[spans.MissAfterFailure] != int64(i+1) {
			t.Errorf("HTTP %d: after the drop, dials %d -> %d, after_failure misses %d; want one new dial for that reason", status, dials, st.Dials, st.MissReasons[spans.MissAfterFailure])
		}
	}
	m.agree(t)
}

// checkLostAnswerNoRetry: the tool ran and its answer was lost (a 500 in
// its place, or the connection reset): the caller gets the failure, the
// session is dropped, and nothing is retried, so the tool ran once.
func checkLostAnswerNoRetry(t *testing.T, m *matrixRun) {
	ctx := boundedContext(t)
	m.warm(t, ctx)
	before := m.srv.Ran(t)
	m.srv.LoseAnswer(t)
	_, err := m.pool.CallTool(ctx, m.target, m.params(m.tools.effect))
	reqs := m.agree(t)
	if err == nil {
		t.Fatalf("a call whose answer was lost succeeded%s", ledgerString(reqs))
	}
	if calls := ledgerCallsOf(reqs, m.tools.effect.name); len(calls) != 1 {
		t.Errorf("%d calls reached the server for one lost answer, want 1: never retried%s", len(calls), ledgerString(reqs))
	}
	if ran := m.srv.Ran(t) - before; ran != 1 {
		t.Errorf("the side-effect tool ran %d times, want 1", ran)
	}
	if _, err := m.pool.CallTool(ctx, m.target, m.params(m.tools.echo)); err != nil {
		t.Fatalf("the call after a lost answer: %v", err)
	}
	if st := m.pool.Stat(); st.Dials != 2 || st.MissReasons[spans.MissAfterFailure] != 1 {
		t.Errorf("after a lost answer: dials %d, miss reasons %v; want the session dropped and one after_failure dial", st.Dials, st.MissReasons)
	}
}

// checkIsErrorClean: an isError result, on the key's very first session,
// keeps the session: the next call is a hit on it.
func checkIsErrorClean(t *testing.T, m *matrixRun) {
	ctx := boundedContext(t)
	res, err := m.pool.CallTool(ctx, m.target, m.params(m.tools.fail))
	if err != nil || res == nil || !res.IsError {
		t.Fatalf("the failing tool: res %+v err %v, want an isError result and no error", res, err)
	}
	if _, err := m.pool.CallTool(ctx, m.target, m.params(m.tools.echo)); err != nil {
		t.Fatal(err)
	}
	reqs := m.agree(t)
	st := m.pool.Stat()
	if st.Dials != 1 || st.Hits != 1 || st.MissReasons[spans.MissAfterFailure] != 0 || sum(st.Failures) != 0 {
		t.Errorf("after isError: dials %d hits %d miss reasons %v failures %v; want one dial, then a hit, no failure%s", st.Dials, st.Hits, st.MissReasons, st.Failures, ledgerString(reqs))
	}
	if calls := ledgerCalls(reqs); m.subj.sessions && (len(calls) != 2 || calls[0].SessionID != calls[1].SessionID) {
		t.Errorf("the call after isError left the session%s", ledgerString(reqs))
	}
}

// checkConcurrentSizing: 50 executions at once, each holding its session
// until all 50 have made their first call, twice. The first burst opens at
// most the peak plus 5%, the second at most 5% more; each execution keeps
// its state.
func checkConcurrentSizing(t *testing.T, m *matrixRun) {
	const n = 50
	m.concurrent = true
	var opened [2]int
	for round := range 2 {
		before := ledgerHandshakes(m.srv.Requests(t), m.subj.revision)
		var all sync.WaitGroup
		all.Add(n)
		var done sync.WaitGroup
		for i := range n {
			done.Go(func() {
				m.execution(t, i, func(ctx context.Context, e *pool.Execution) {
					_, err := e.CallTool(ctx, m.target, m.params(m.tools.set(i)))
					all.Done()
					if err != nil {
						t.Errorf("execution %d call 1: %v", i, err)
						return
					}
					all.Wait()
					got, err := m.call(ctx, e, m.tools.get)
					if err != nil {
						t.Errorf("execution %d call 2: %v", i, err)
						return
					}
					m.wantState(t, i, got)
				})
			})
		}
		done.Wait()
		opened[round] = ledgerHandshakes(m.srv.Requests(t), m.subj.revision) - before
	}
	reqs := m.agree(t)
	peak := m.pool.Stat().PeakInUse
	limit := peak + peak*5/100
	if !m.subj.sessions {
		limit = 1 // one shared client: concurrent first acquires wait for the key's one handshake
	} else if peak != n {
		t.Errorf("in-use peak %d, want %d: every execution holds its session at the barrier", peak, n)
	}
	if opened[0] > limit || opened[1] > peak*5/100 {
		t.Errorf("sessions opened %v in two bursts of %d for an in-use peak of %d; want the first <= %d and the second <= %d%s", opened, n, peak, limit, peak*5/100, ledgerString(reqs[:min(len(reqs), 20)]))
	}
}

// checkSideEffectExact: calls of the side-effect tool under a mix of
// faults (rejections before it runs, answers lost after it ran); the server
// ran it exactly as often as the caller saw success, plus once per lost
// answer, never more.
func checkSideEffectExact(t *testing.T, m *matrixRun) {
	const lost = -1
	ctx := boundedContext(t)
	before := m.srv.Ran(t)
	var succeeded, lostAnswers int64
	var ends []int
	for _, fault := range []int{0, 500, 0, 404, lost, 0, 400, 0, 404, 404, lost, 0} {
		switch fault {
		case 0:
		case lost:
			m.srv.LoseAnswer(t)
			lostAnswers++
		default:
			m.srv.Reject(t, fault)
		}
		if _, err := m.pool.CallTool(ctx, m.target, m.params(m.tools.effect)); err == nil {
			succeeded++
		}
		ends = append(ends, len(ledgerCalls(m.srv.Requests(t))))
	}
	reqs := m.agree(t)
	m.agreeAnalyze(t, reqs, execCalls(reqs, ends))
	if ran := m.srv.Ran(t) - before; ran != succeeded+lostAnswers {
		t.Errorf("the side-effect tool ran %d times for %d successes and %d answers lost after it ran", ran, succeeded, lostAnswers)
	}
}

// checkCloseDeletes: Close ends every idle session with a DELETE where the
// revision has sessions, and sends none where it has not.
func checkCloseDeletes(t *testing.T, m *matrixRun) {
	const n = 3
	m.concurrent = true
	var all, done sync.WaitGroup
	all.Add(n)
	for i := range n {
		done.Go(func() {
			m.execution(t, i, func(ctx context.Context, e *pool.Execution) {
				_, err := m.call(ctx, e, m.tools.echo)
				all.Done()
				if err != nil {
					t.Errorf("execution %d: %v", i, err)
					return
				}
				all.Wait()
			})
		})
	}
	done.Wait()
	m.closePool(t)
	reqs := m.srv.Requests(t)
	deleted := map[string]int{}
	for _, r := range reqs {
		if r.HTTPMethod == http.MethodDelete {
			deleted[r.SessionID]++
		}
	}
	sessions := ledgerSessions(reqs)
	if !m.subj.sessions {
		if len(deleted) != 0 {
			t.Errorf("Close sent DELETE %v at a revision without sessions%s", deleted, ledgerString(reqs))
		}
		return
	}
	if len(sessions) != n {
		t.Fatalf("%d sessions for %d concurrent executions%s", len(sessions), n, ledgerString(reqs))
	}
	for _, id := range sessions {
		if deleted[id] != 1 {
			t.Errorf("session %s: %d DELETEs at Close, want 1%s", id, deleted[id], ledgerString(reqs))
		}
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// describe names a subject's expectations in failure messages.
func (s matrixSubject) describe() string {
	return fmt.Sprintf("%s (revision %s, sessions %v, version %q)", s.name, s.revision, s.sessions, s.version)
}
