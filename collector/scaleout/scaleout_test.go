package scaleout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/collector/mcptraceconnector"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// settleBound bounds every wait for the counters: the connector finalizes
// a trace between wait (2 s here) and wait + 1 s after its last span, emits
// within a second, and Prometheus scrapes every second.
const settleBound = 60 * time.Second

// sendTimeout bounds one export request through the router (its retries
// to a dead backend give up after 3 s).
const sendTimeout = 20 * time.Second

func workload(t *testing.T, seed uint64, traces int) *tracegen.Workload {
	t.Helper()
	wl, err := tracegen.GenerateWorkload(tracegen.WorkloadConfig{
		Seed: seed, Traces: traces, Pools: []string{"pool-a", "pool-b"},
		KeysPerPool: 8, TracesPerBatch: 40,
		// pool-b records that it keeps no idle session: its misses after
		// the first are evicted, attributed only where its settings
		// travelled with its acquire records.
		Settings: map[string]map[string]string{"pool-b": {
			spans.AttrPoolIdleTTL: "300", spans.AttrPoolMaxIdlePerKey: "-1",
			spans.AttrPoolIdleSizing: spans.IdleSizingPeak, spans.AttrPoolMaxIdle: "64",
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

// requireCoverage fails when the whole dump's analysis lacks what the test
// is meant to compare: every miss cause, multi-session executions and a
// violation of every in-stream built-in rule, on both pools.
func requireCoverage(t *testing.T, whole figures) {
	t.Helper()
	for _, cause := range spans.MissReasons {
		if whole.sum("acquire ", " miss="+cause) == 0 {
			t.Errorf("the workload has no %s miss: the comparison does not cover it", cause)
		}
	}
	for _, pool := range []string{"pool-a", "pool-b"} {
		if whole.sum(fmt.Sprintf("acquire pool=%q", pool), "") == 0 {
			t.Errorf("the workload has no acquire on %s", pool)
		}
	}
	if whole["executions multi_session"] == 0 {
		t.Error("the workload has no execution on several sessions")
	}
	for rule := range inStreamRules() {
		if whole.sum("violations rule="+rule+" ", "") == 0 {
			t.Errorf("the workload breaks no %s: the comparison does not cover it", rule)
		}
	}
}

// checkTotals compares the per-trace facts and violations by rule of got
// with want.
func checkTotals(t *testing.T, what string, got, want figures) {
	t.Helper()
	for _, c := range perTraceFacts {
		if g, w := got.sum(c.prefix, c.suffix), want.sum(c.prefix, c.suffix); g != w {
			t.Errorf("%s: %s = %d, mcptrace analyze %d", what, c.what, g, w)
		}
	}
	if g, w := got.misses(), want.misses(); g != w {
		t.Errorf("%s: misses = %d, mcptrace analyze %d", what, g, w)
	}
	for k, w := range want {
		if strings.HasPrefix(k, "violations ") && got[k] != w {
			t.Errorf("%s: %s = %d, mcptrace check %d", what, k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; strings.HasPrefix(k, "violations ") && !ok {
			t.Errorf("%s: %s = %d, mcptrace check has none", what, k, g)
		}
	}
}

// checkBackend compares one backend process's per-trace counters
// (everything but the acquires, which its pair tier counts for the pairs
// routed to it) with mcptrace analyze / check of exactly the traces that
// process received and finalized, and checks it counted no late span and
// cut no trace.
func checkBackend(t *testing.T, run string, got, want figures) {
	t.Helper()
	late, cut := got["late spans"], got["cut"]
	if late != 0 || cut != 0 {
		t.Errorf("%s: %d late spans, %d cut traces: every trace was sent whole, under max_open_traces", run, late, cut)
	}
	if d := diff(got.without("acquire ", "late spans", "cut", "pending"), want.without("acquire ")); len(d) > 0 {
		t.Errorf("%s: Prometheus differs from mcptrace analyze/check of the traces it received:\n  %s", run, strings.Join(d, "\n  "))
	}
}

// sharedPairs counts the (pool, key) pairs whose acquires reached both
// backends.
func sharedPairs(a, b batchTraces) int {
	seen := func(bt batchTraces) map[string]bool {
		m := map[string]bool{}
		for _, ps := range bt.pairs {
			for _, p := range ps {
				m[p] = true
			}
		}
		return m
	}
	sa, sb := seen(a), seen(b)
	n := 0
	for p := range sa {
		if sb[p] {
			n++
		}
	}
	return n
}

// TestScaleOutCountersEqualAnalyze sends a generated workload (about
// 3000 traces, two pools, every miss cause, every in-stream rule broken)
// over OTLP to the router and checks, once both backends finalized every
// trace, attributed every acquire their pair tiers received, and
// Prometheus scraped them:
//
//   - routing: every trace reached exactly one backend, whole;
//   - per backend: every per-trace counter (handshakes, executions,
//     executions on several sessions, violations by rule, finalized
//     traces) equals mcptrace analyze / check of exactly the traces that
//     backend received (captured by a second traces pipeline on the
//     backend);
//   - summed over both backends: every counter, acquires by pool, hit and
//     miss cause included, equals mcptrace analyze / check of the whole
//     dump. The acquires are counted by the pair tiers, which received
//     each acquire from whichever backend measured its trace, routed by
//     pool scope.
func TestScaleOutCountersEqualAnalyze(t *testing.T) {
	started := time.Now()
	bins := findBinaries(t)
	top := startTopology(t, bins)
	up := time.Now()
	wl := workload(t, 1, 3000)
	t.Logf("workload: %d traces, %d spans in %d requests; kinds %v", wl.Traces, wl.Spans, len(wl.Batches), wl.Kinds)

	dir := t.TempDir()
	want := analyzeDump(t, bins.cli, writeDump(t, dir, "whole", wl.Batches))
	requireCoverage(t, want)
	analysed := time.Now()

	s := newSender(t, top.routerAddr)
	for i, td := range wl.Batches {
		if err := s.send(td, sendTimeout); err != nil {
			t.Fatalf("request %d of %d to the router: %v", i+1, len(wl.Batches), err)
		}
	}
	sent := time.Now()

	b1, b2 := top.backends[0], top.backends[1]
	got1, got2 := tracesOf(b1.capture.received()), tracesOf(b2.capture.received())
	whole := tracesOf(wl.Batches)
	// Routing: each trace on one backend, with all its spans.
	for id, n := range whole.spans {
		n1, n2 := got1.spans[id], got2.spans[id]
		switch {
		case n1 > 0 && n2 > 0:
			t.Errorf("trace %s split: %d spans on backend 1, %d on backend 2", id, n1, n2)
		case n1+n2 != n:
			t.Errorf("trace %s: %d spans sent, %d received", id, n, n1+n2)
		}
	}
	if len(got1.order)+len(got2.order) != len(whole.order) {
		t.Fatalf("backends received %d + %d traces, %d sent", len(got1.order), len(got2.order), len(whole.order))
	}
	if len(got1.order) == 0 || len(got2.order) == 0 {
		t.Fatalf("one backend received nothing (%d, %d traces): the router did not spread the traces", len(got1.order), len(got2.order))
	}

	prom := settle(t, top.prom, map[string]int64{b1.run: int64(len(got1.order)), b2.run: int64(len(got2.order))}, want.sum("acquire ", ""), settleBound)
	settled := time.Now()

	want1 := analyzeDump(t, bins.cli, writeDump(t, dir, b1.run, b1.capture.received()))
	want2 := analyzeDump(t, bins.cli, writeDump(t, dir, b2.run, b2.capture.received()))
	checkBackend(t, b1.run, prom[b1.run], want1)
	checkBackend(t, b2.run, prom[b2.run], want2)
	// Each pair tier counts what the analyzer's pair stage gives the
	// records it received, all of them, none twice.
	records := 0
	for _, b := range []*backend{b1, b2} {
		pf, n := pairFigures(t, b.capture.logs.all())
		records += n
		if d := diff(acquiresOnly(prom[b.run]), pf); len(d) > 0 {
			t.Errorf("%s: the pair tier's counters differ from the pair stage over the %d acquire records it received:\n  %s", b.run, n, strings.Join(d, "\n  "))
		}
	}
	if w := want.sum("acquire ", ""); int64(records) != w {
		t.Errorf("the pair tiers received %d acquire records, the dump has %d acquires", records, w)
	}

	sum := figures{}
	for _, run := range []string{b1.run, b2.run} {
		for k, v := range prom[run] {
			sum[k] += v
		}
	}
	checkTotals(t, "both backends", sum, want)
	if d := diff(sum.without("late spans", "cut", "pending"), want); len(d) > 0 {
		t.Errorf("summed over both backends, Prometheus differs from mcptrace analyze/check of the whole dump:\n  %s", strings.Join(d, "\n  "))
	}
	for _, b := range []*backend{b1, b2} {
		if late := lateLines(b.proc.out.String()); len(late) > 0 {
			t.Errorf("%s attributed acquires late (after a later acquire of their pair), so causes may differ: %q", b.run, late)
		}
	}
	shared := sharedPairs(got1, got2)
	for i, b := range []*backend{b1, b2} {
		t.Logf("backend %d: %d traces; its pair tier counted acquires %v", i+1, len([]batchTraces{got1, got2}[i].order), causes(prom[b.run]))
	}
	t.Logf("miss causes summed over the backends %v, whole dump %v; %d pairs had acquires in traces on both backends", causes(sum), causes(want), shared)
	if shared == 0 {
		t.Error("no pair had acquires on both backends: the test does not exercise forwarding across backends")
	}
	t.Logf("timings: start the processes %s, analysis %s, send %s, settle %s",
		up.Sub(started).Round(time.Millisecond), analysed.Sub(up).Round(time.Millisecond), sent.Sub(analysed).Round(time.Millisecond), settled.Sub(sent).Round(time.Millisecond))
}

// causes sums misses by cause over pools.
func causes(f figures) map[string]int64 {
	m := map[string]int64{}
	for _, c := range spans.MissReasons {
		if n := f.sum("acquire ", " miss="+c); n != 0 {
			m[c] = n
		}
	}
	return m
}

// TestScaleOutBackendKillLosesOnlyItsOpenTraces kills backend 1 (SIGKILL)
// mid-run, sends while it is down, restarts it on the same ports, sends
// the rest, and accounts for every trace:
//
//   - lost, as docs/collector.md says: the traces backend 1 had received
//     but not finalized when it died (its open traces; with a 1 s scrape,
//     also any it finalized in its last second that Prometheus never
//     scraped), and the traces the router could not deliver while it was
//     down, or while it reconnected after the restart (the router's
//     retries give up after 3 s here and it answers the request with an
//     error; the client saw every such request fail);
//   - nothing else: every trace that reached backend 2 is counted there
//     (all its counters equal mcptrace analyze of what it received); the
//     traces the first backend-1 process finalized and Prometheus scraped
//     are exactly the first N it received (N = its last scraped finalized
//     count), counted with the figures mcptrace analyze gives those N; the
//     restarted process counts exactly what it received; no trace is in two
//     places, and no trace of a request the router accepted is missing;
//   - the per-trace totals over the three process lifetimes equal
//     mcptrace analyze / check of the whole dump less the lost traces.
//
// The pair tier of backend 1 dies too. Lost with it: the acquire records
// it held for attribution (its pending gauge's last value) and the
// history of the pairs routed to it, so after the restart the first
// acquire of each such pair it sees is cold. The router queues the records
// for backend 1 while it is down and delivers them after the restart. So
// the acquires are not compared exactly; the test checks that none is
// counted twice (the summed acquires and hits are at most those of every
// trace a backend received), that the extra cold misses are at most one a
// pair, and states the acquires lost.
//
// Counter resets: the restarted process starts its counters at zero. Each
// process lifetime carries its own run label here, so its counters are
// their own series and the test sums the lifetimes' last values exactly.
// Without such a label the two lifetimes are one series with a drop; rate()
// and increase() treat the drop as a reset (extrapolated, so not exact), and
// a restarted counter that has already climbed back to its old value by the
// first scrape hides the reset from Prometheus altogether.
func TestScaleOutBackendKillLosesOnlyItsOpenTraces(t *testing.T) {
	started := time.Now()
	bins := findBinaries(t)
	top := startTopology(t, bins)
	wl := workload(t, 2, 2400)
	b1, b2 := top.backends[0], top.backends[1]
	s := newSender(t, top.routerAddr)
	n := len(wl.Batches)
	phaseA, phaseKill, phaseDown := n/3, n/3+5, n/3+8

	sendAll := func(from, to int) {
		for i := from; i < to; i++ {
			if err := s.send(wl.Batches[i], sendTimeout); err != nil {
				t.Fatalf("request %d of %d to the router: %v", i+1, n, err)
			}
		}
	}
	// A: a third of the workload, finalized and scraped on both backends.
	sendAll(0, phaseA)
	settle(t, top.prom, map[string]int64{
		b1.run: int64(len(tracesOf(b1.capture.received()).order)),
		b2.run: int64(len(tracesOf(b2.capture.received()).order)),
	}, -1, settleBound)
	// Five more requests, then SIGKILL at once: backend 1 holds them open
	// (its wait is 2 s). No request is in flight at the kill.
	sendAll(phaseA, phaseKill)
	b1.proc.kill()
	life1 := b1
	life1Batches := b1.capture.received()
	killed := time.Now()

	// While backend 1 is down: each request fails once the router's
	// retries give up (backend 2's share of it is delivered).
	failed := map[int]error{}
	for i := phaseKill; i < phaseDown; i++ {
		if err := s.send(wl.Batches[i], sendTimeout); err != nil {
			failed[i] = err
		}
	}
	if len(failed) == 0 {
		t.Fatalf("no request failed while backend 1 was down: the router accepted traces it could not deliver")
	}

	// Restart backend 1 on the same ports, as a new lifetime.
	life2 := &backend{n: 1, otlpPort: b1.otlpPort, promPort: b1.promPort, telPort: b1.telPort}
	top.startBackend(life2)
	top.backends[0] = life2
	restarted := time.Now()
	// After the restart the router's connection to backend 1 comes back
	// after gRPC's reconnect backoff, which can outlast its 3 s of
	// retries: a request that fails then is accounted for like the ones
	// sent while the backend was down.
	afterRestart := 0
	for i := phaseDown; i < n; i++ {
		if err := s.send(wl.Batches[i], sendTimeout); err != nil {
			failed[i] = err
			afterRestart++
		}
	}

	c1, c2, c3 := tracesOf(life1Batches), tracesOf(life2.capture.received()), tracesOf(b2.capture.received())
	prom := settle(t, top.prom, map[string]int64{life2.run: int64(len(c2.order)), b2.run: int64(len(c3.order))}, -1, settleBound)
	settled := time.Now()

	// Account for every trace sent.
	whole := tracesOf(wl.Batches)
	inFailed := map[pcommon.TraceID]bool{}
	for i := range failed {
		for _, id := range tracesOf([]ptrace.Traces{wl.Batches[i]}).order {
			inFailed[id] = true
		}
	}
	undelivered := map[pcommon.TraceID]bool{}
	for _, id := range whole.order {
		places := 0
		for _, c := range []batchTraces{c1, c2, c3} {
			if c.spans[id] > 0 {
				places++
				if c.spans[id] != whole.spans[id] {
					t.Errorf("trace %s: %d spans sent, %d received by one backend", id, whole.spans[id], c.spans[id])
				}
			}
		}
		switch {
		case places > 1:
			t.Errorf("trace %s reached %d backend processes", id, places)
		case places == 0 && !inFailed[id]:
			t.Errorf("trace %s was in a request the router accepted, yet no backend received it", id)
		case places == 0:
			undelivered[id] = true
		}
	}

	if len(c2.order) == 0 {
		t.Fatalf("the restarted backend 1 received nothing of the %d requests sent after its restart", n-phaseDown)
	}

	// What the killed process finalized and Prometheus scraped: the first
	// N traces it received, N its last scraped finalized count.
	finalized := prom[life1.run]["traces"]
	if finalized == 0 || finalized >= int64(len(c1.order)) {
		t.Fatalf("the killed backend's last scrape says %d traces finalized of the %d it received: the kill did not land mid-run", finalized, len(c1.order))
	}
	counted1 := map[pcommon.TraceID]bool{}
	for _, id := range c1.order[:finalized] {
		counted1[id] = true
	}
	lostOpen := len(c1.order) - int(finalized)

	dir := t.TempDir()
	want1 := analyzeDump(t, bins.cli, writeDump(t, dir, life1.run, filterBatches(life1Batches, counted1)))
	want2 := analyzeDump(t, bins.cli, writeDump(t, dir, life2.run, life2.capture.received()))
	want3 := analyzeDump(t, bins.cli, writeDump(t, dir, b2.run, b2.capture.received()))
	checkBackend(t, life1.run+" (killed; its finalized and scraped traces)", prom[life1.run], want1)
	checkBackend(t, life2.run+" (restarted)", prom[life2.run], want2)
	checkBackend(t, b2.run+" (survived)", prom[b2.run], want3)

	counted := map[pcommon.TraceID]bool{}
	for _, id := range whole.order {
		if !undelivered[id] && (counted1[id] || c2.spans[id] > 0 || c3.spans[id] > 0) {
			counted[id] = true
		}
	}
	if got := len(whole.order) - len(counted); got != lostOpen+len(undelivered) {
		t.Errorf("%d traces uncounted, want the %d open on the killed backend plus the %d undelivered", got, lostOpen, len(undelivered))
	}
	wantAll := analyzeDump(t, bins.cli, writeDump(t, dir, "whole-less-lost", filterBatches(wl.Batches, counted)))
	sum := figures{}
	for run, f := range prom {
		if run != life1.run && run != life2.run && run != b2.run {
			t.Errorf("unexpected run %q in Prometheus", run)
		}
		for k, v := range f {
			sum[k] += v
		}
	}
	checkTotals(t, "three process lifetimes", sum.without("acquire "), wantAll.without("acquire "))

	// The acquires: every trace a backend received (the counted ones and
	// those open on backend 1 at the kill, whose records it may have
	// forwarded before it died) bounds them; none may count twice.
	delivered := map[pcommon.TraceID]bool{}
	for id := range counted {
		delivered[id] = true
	}
	for _, id := range c1.order {
		delivered[id] = true
	}
	wantDelivered := analyzeDump(t, bins.cli, writeDump(t, dir, "delivered", filterBatches(wl.Batches, delivered)))
	for _, c := range []struct{ what, suffix string }{{"acquires", ""}, {"hits", " hit"}} {
		if g, w := sum.sum("acquire ", c.suffix), wantDelivered.sum("acquire ", c.suffix); g > w {
			t.Errorf("%s counted over the lifetimes: %d, more than the %d of every trace a backend received: some acquire counted twice", c.what, g, w)
		}
	}
	// The surviving pair tier counts exactly what the pair stage gives the
	// records it received; no record reached a pair tier twice, but for
	// the kill's redelivery.
	if late := lateLines(b2.proc.out.String()); len(late) > 0 {
		t.Errorf("%s attributed acquires late: %q", b2.run, late)
	}
	pf2, n2 := pairFigures(t, b2.capture.logs.all())
	if d := diff(acquiresOnly(prom[b2.run]), pf2); len(d) > 0 {
		t.Errorf("%s (survived): the pair tier's counters differ from the pair stage over the %d acquire records it received:\n  %s", b2.run, n2, strings.Join(d, "\n  "))
	}
	_, n1 := pairFigures(t, life1.capture.logs.all())
	pf3, n3 := pairFigures(t, life2.capture.logs.all())
	// Where each record arrived. The one duplicate delivery is allowed is
	// the kill's: a request the killed process took but never answered is
	// sent again, by the router's queue, to the restarted one
	// (at-least-once delivery); any other is a bug.
	seenRecord := map[string][]string{}
	for _, b := range []*backend{life1, life2, b2} {
		for _, ld := range b.capture.logs.all() {
			evs, err := mcptraceconnector.ReadAcquireRecords(ld)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				id := ev.TraceID.String() + "/" + ev.SpanID.String()
				seenRecord[id] = append(seenRecord[id], b.run)
			}
		}
	}
	redelivered := 0
	for id, runs := range seenRecord {
		switch {
		case len(runs) == 1:
		case len(runs) == 2 && runs[0] == life1.run && runs[1] == life2.run:
			redelivered++
		default:
			t.Errorf("acquire record %s reached the pair tiers %d times: %v", id, len(runs), runs)
		}
	}
	t.Logf("acquire records redelivered to the restarted pair tier after the killed one took them unanswered: %d", redelivered)
	heldAtKill := int64(n1) - prom[life1.run].sum("acquire ", "")
	if heldAtKill < 0 {
		t.Errorf("the killed pair tier counted %d acquires of the %d records it received", prom[life1.run].sum("acquire ", ""), n1)
	}
	t.Logf("pair tiers: %s received %d records and counted %d before the kill (lost with it: %d, held or counted after its last scrape); %s received %d (figures %v against the pair stage's %v: records the router queued while it was down arrive late); %s received %d, counted exactly",
		life1.run, n1, prom[life1.run].sum("acquire ", ""), heldAtKill, life2.run, n3, causes(prom[life2.run]), causes(pf3), b2.run, n2)

	pairs := map[string]bool{}
	for _, ps := range whole.pairs {
		for _, p := range ps {
			pairs[p] = true
		}
	}
	cold, coldWant := sum.sum("acquire ", " miss=cold"), wantAll.sum("acquire ", " miss=cold")
	if cold > coldWant+int64(len(pairs)) {
		t.Errorf("cold misses %d: more than the %d of the counted traces plus one for each of the %d pairs (a restarted pair tier forgets its pairs once)", cold, coldWant, len(pairs))
	}
	for _, run := range []string{life1.run, life2.run, b2.run} {
		t.Logf("%s: acquires %d, hits %d, misses by cause %v", run, prom[run].sum("acquire ", ""), prom[run].sum("acquire ", " hit"), causes(prom[run]))
	}
	t.Logf("counted traces: misses by cause %v", causes(wantAll))
	for _, b := range []*backend{life1, life2, b2} {
		t.Logf("%s: late acquire lines: %q", b.run, lateLines(b.proc.out.String()))
	}
	t.Logf("acquires: %d counted over the lifetimes; %d in the counted traces, %d in every trace a backend received (the killed backend forwarded the acquires of traces it finalized after its last scrape); the killed pair tier held %d at its last scrape; cold misses %d against %d (the restarted pair tier's pairs start again, and records the router queued for it arrive late)",
		sum.sum("acquire ", ""), wantAll.sum("acquire ", ""), wantDelivered.sum("acquire ", ""), prom[life1.run]["pending"], cold, coldWant)

	t.Logf("sent %d traces (%d spans) in %d requests; %d requests failed while backend 1 was down, %d after its restart (first error: %v)",
		len(whole.order), wl.Spans, n, len(failed)-afterRestart, afterRestart, firstErr(failed))
	t.Logf("lost: %d traces open on backend 1 at the kill (it had received %d, Prometheus last scraped %d finalized), %d traces the router could not deliver while it was down",
		lostOpen, len(c1.order), finalized, len(undelivered))
	t.Logf("counted exactly once: %d traces (backend 2: %d, backend 1 before the kill: %d, after the restart: %d)",
		len(counted), len(c3.order), finalized, len(c2.order))
	t.Logf("timings: until the kill %s, down %s, after the restart until settled %s, analysis %s",
		killed.Sub(started).Round(time.Millisecond), restarted.Sub(killed).Round(time.Millisecond), settled.Sub(restarted).Round(time.Millisecond), time.Since(settled).Round(time.Millisecond))
}

func firstErr(m map[int]error) error {
	best := -1
	for i := range m {
		if best < 0 || i < best {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	return m[best]
}

// lateLines are the connector's log lines about forwarded acquires that
// arrived after a later acquire of their pair was attributed.
func lateLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "forwarded acquires arrived after") {
			lines = append(lines, l)
		}
	}
	return lines
}
