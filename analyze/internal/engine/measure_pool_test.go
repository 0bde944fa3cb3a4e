package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// reasonsOf returns the non-zero miss reasons of a report.
func reasonsOf(p report.PoolReport) map[string]int {
	out := map[string]int{}
	for k, v := range p.MissReasons {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func sameReasons(got, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func TestMissAttribution(t *testing.T) {
	const k = "k1:aaaa"
	cold := lease{trace: 1, start: 0, end: 10 * time.Second, key: k, hit: false, handshake: true, session: "s1"}
	tests := []struct {
		name   string
		cfg    rulefmt.Config
		leases []lease
		want   map[string]int
	}{{
		name:   "first acquire of a pair is cold",
		leases: []lease{cold},
		want:   map[string]int{spans.MissCold: 1},
	}, {
		name: "a miss after a transport failure is after_failure",
		leases: []lease{cold,
			{trace: 2, start: 20 * time.Second, end: 30 * time.Second, key: k, hit: true, session: "s1", callErr: spans.ErrTypeTransport},
			{trace: 3, start: 40 * time.Second, end: 50 * time.Second, key: k, hit: false, handshake: true, session: "s2"}},
		want: map[string]int{spans.MissCold: 1, spans.MissAfterFailure: 1},
	}, {
		name: "a tool error is a clean release, so the next miss is unexplained",
		leases: []lease{cold,
			{trace: 2, start: 20 * time.Second, end: 30 * time.Second, key: k, hit: true, session: "s1", callErr: spans.ErrTypeToolError},
			{trace: 3, start: 40 * time.Second, end: 50 * time.Second, key: k, hit: false, handshake: true, session: "s2"}},
		want: map[string]int{spans.MissCold: 1, spans.MissUnexplained: 1},
	}, {
		name: "a gap of exactly the TTL has not expired the session",
		cfg:  rulefmt.Config{IdleTTL: time.Minute},
		leases: []lease{cold,
			{trace: 2, start: 70 * time.Second, end: 80 * time.Second, key: k, hit: false, handshake: true, session: "s2"}},
		want: map[string]int{spans.MissCold: 1, spans.MissUnexplained: 1},
	}, {
		name: "a gap beyond the TTL is ttl",
		cfg:  rulefmt.Config{IdleTTL: time.Minute},
		leases: []lease{cold,
			{trace: 2, start: 70*time.Second + time.Millisecond, end: 80 * time.Second, key: k, hit: false, handshake: true, session: "s2"}},
		want: map[string]int{spans.MissCold: 1, spans.MissTTL: 1},
	}, {
		name: "a miss while another lease of the pair is open is concurrent",
		leases: []lease{cold,
			{trace: 2, start: 20 * time.Second, end: 40 * time.Second, key: k, hit: true, session: "s1"},
			{trace: 3, start: 25 * time.Second, end: 30 * time.Second, key: k, hit: false, handshake: true, session: "s2"}},
		want: map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1},
	}, {
		name: "the pool's health_check reason stands when the dump cannot contradict it",
		leases: []lease{cold,
			{trace: 2, start: 20 * time.Second, end: 30 * time.Second, key: k, hit: false, handshake: true, reason: spans.MissHealthCheck, session: "s2"}},
		want: map[string]int{spans.MissCold: 1, spans.MissHealthCheck: 1},
	}, {
		name: "a recorded reason the timeline contradicts is not trusted",
		leases: []lease{cold,
			{trace: 2, start: 20 * time.Second, end: 30 * time.Second, key: k, hit: false, handshake: true, reason: spans.MissCold, session: "s2"}},
		want: map[string]int{spans.MissCold: 1, spans.MissUnexplained: 1},
	}, {
		name: "an attempt 2 acquire is a redial",
		leases: []lease{cold,
			{trace: 2, start: 20 * time.Second, end: 30 * time.Second, key: k, hit: false, handshake: true, attempt: 2, session: "s2"}},
		want: map[string]int{spans.MissCold: 1, spans.MissRedial: 1},
	}, {
		name: "two keys of one scope are two cold pairs",
		leases: []lease{cold,
			{trace: 2, start: 20 * time.Second, end: 30 * time.Second, key: "k1:bbbb", hit: false, handshake: true, session: "s2"}},
		want: map[string]int{spans.MissCold: 2},
	}, {
		name: "without cache_hit a handshake child makes the miss",
		leases: []lease{{trace: 1, start: 0, end: 10 * time.Second, key: k, handshake: true, session: "s1"},
			{trace: 2, start: 20 * time.Second, end: 30 * time.Second, key: k, session: "s1"}},
		want: map[string]int{spans.MissCold: 1},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "do-1")
			for _, l := range tt.leases {
				d.invocation(ss, l)
			}
			r := analyzeTD(t, tt.cfg, d.td)
			if got := reasonsOf(r.Pool); !sameReasons(got, tt.want) {
				t.Errorf("miss reasons = %v, want %v", got, tt.want)
			}
			misses := 0
			for _, n := range tt.want {
				misses += n
			}
			if r.Pool.Misses != misses || r.Pool.Acquires != len(tt.leases) {
				t.Errorf("acquires %d misses %d, want %d %d", r.Pool.Acquires, r.Pool.Misses, len(tt.leases), misses)
			}
		})
	}
}

func TestRedialInTheSameInvocationIsARedialNotConcurrent(t *testing.T) {
	// One invocation: attempt 1 reuses s1, its call fails session_expired,
	// attempt 2 dials s2. The first lease ends where the redial begins.
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "do-1")
	d.invocation(ss, lease{trace: 1, start: 0, end: time.Second, key: "k", hit: false, handshake: true, session: "s1"})
	inv := d.add(ss, sp{trace: 2, name: spans.SpanInvoke, start: 10 * time.Second, end: 20 * time.Second, attrs: []any{spans.AttrCacheKey, "k"}})
	d.add(ss, sp{trace: 2, parent: inv, name: spans.SpanAcquire, start: 10 * time.Second, end: 11 * time.Second,
		attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, true, spans.AttrAttempt, 1}})
	d.add(ss, sp{trace: 2, parent: inv, name: spans.SpanCallTool, start: 11 * time.Second, end: 12 * time.Second, status: 2,
		attrs: []any{spans.AttrSessionID, "s1", spans.AttrErrorType, spans.ErrTypeSessionExpired}})
	d.add(ss, sp{trace: 2, parent: inv, name: spans.SpanAcquire, start: 12 * time.Second, end: 14 * time.Second,
		attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false, spans.AttrAttempt, 2}})
	d.add(ss, sp{trace: 2, parent: inv, name: spans.SpanCallTool, start: 14 * time.Second, end: 20 * time.Second,
		attrs: []any{spans.AttrSessionID, "s2"}})
	// A later hit: the redialed session went back idle.
	d.invocation(ss, lease{trace: 3, start: 30 * time.Second, end: 31 * time.Second, key: "k", hit: true, session: "s2"})

	r := analyzeTD(t, rulefmt.Config{}, d.td)
	want := map[string]int{spans.MissCold: 1, spans.MissRedial: 1}
	if got := reasonsOf(r.Pool); !sameReasons(got, want) {
		t.Errorf("miss reasons = %v, want %v", got, want)
	}
	if r.Executions.MultiSession != 1 || r.Executions.MaxSessions != 2 {
		t.Errorf("the redialed invocation saw 2 sessions: multi %d max %d, want 1 2", r.Executions.MultiSession, r.Executions.MaxSessions)
	}
}

func TestAcquireOnMissRedialImpliesAHitBeforeIt(t *testing.T) {
	// Acquire-on-miss: invocation 2 reused the session (no span), the call
	// failed expired, and the redial emitted an attempt 2 acquire.
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "do-1")
	d.invocation(ss, lease{trace: 1, start: 0, end: time.Second, key: "k", hit: false, handshake: true, session: "s1"})
	d.invocation(ss, lease{trace: 2, start: 10 * time.Second, end: 20 * time.Second, key: "k", hit: false, handshake: true, attempt: 2, session: "s2"})
	d.invocation(ss, lease{trace: 3, start: 30 * time.Second, end: 31 * time.Second, key: "k", noAcquire: true, session: "s2"})

	r := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAcquireOnMiss}, d.td)
	p := r.Pool
	if p.Acquires != 4 || p.Hits != 2 || p.Misses != 2 {
		t.Errorf("acquires %d hits %d misses %d, want 4 (cold, implied hit, redial, hit) 2 2", p.Acquires, p.Hits, p.Misses)
	}
	want := map[string]int{spans.MissCold: 1, spans.MissRedial: 1}
	if got := reasonsOf(p); !sameReasons(got, want) {
		t.Errorf("miss reasons = %v, want %v", got, want)
	}
}

func TestPoolScopeChain(t *testing.T) {
	tests := []struct {
		name      string
		resource  []string
		invokeKV  []any
		scopeAttr string
		want      string
	}{
		{"plugin.mcp.pool.id on the invoke wins", []string{spans.ResourceServiceInstanceID, "inst", spans.ResourceServiceName, "svc"}, []any{spans.AttrPoolID, "pool-7"}, "", "pool-7"},
		{"then the resource service.instance.id", []string{spans.ResourceServiceInstanceID, "inst", spans.ResourceServiceName, "svc"}, nil, "", "inst"},
		{"then service.name", []string{spans.ResourceServiceName, "svc"}, nil, "", "svc"},
		{"nothing names it", nil, nil, "", ""},
		{"--scope-attr reads a resource attribute", []string{"cloud.region", "eu-1", spans.ResourceServiceName, "svc"}, nil, "cloud.region", "eu-1"},
		{"--scope-attr reads a span attribute", []string{spans.ResourceServiceName, "svc"}, []any{"tenant", "t-9"}, "tenant", "t-9"},
		{"--scope-attr missing leaves the scope empty", []string{spans.ResourceServiceName, "svc"}, nil, "tenant", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(tt.resource...)
			d.invocation(ss, lease{trace: 1, start: 0, end: time.Second, key: "k", hit: false, handshake: true, session: "s", invokeKV: tt.invokeKV})
			r := analyzeTD(t, rulefmt.Config{ScopeAttr: tt.scopeAttr}, d.td)
			if len(r.Pool.ByScope) != 1 || r.Pool.ByScope[0].Scope != tt.want {
				t.Errorf("by_scope = %+v, want one scope %q", r.Pool.ByScope, tt.want)
			}
		})
	}
}

func TestByScopeIsSortedAndSumsToTheTotals(t *testing.T) {
	d := newDump()
	for _, inst := range []string{"do-c", "do-a", "do-b"} {
		ss := d.resource(spans.ResourceServiceInstanceID, inst)
		d.invocation(ss, lease{trace: 1, start: 0, end: time.Second, key: "k", hit: false, handshake: true, session: inst})
		d.invocation(ss, lease{trace: 2, start: 2 * time.Second, end: 3 * time.Second, key: "k", hit: true, session: inst})
	}
	r := analyzeTD(t, rulefmt.Config{}, d.td)
	var names []string
	acq := 0
	for _, s := range r.Pool.ByScope {
		names = append(names, s.Scope)
		acq += s.Acquires
		if s.Handshakes != 1 || s.Keys != 1 || !near(s.HitRate, 0.5) {
			t.Errorf("scope %s: handshakes %d keys %d hit rate %v, want 1 1 0.5", s.Scope, s.Handshakes, s.Keys, deref(s.HitRate))
		}
	}
	if len(names) != 3 || names[0] != "do-a" || names[1] != "do-b" || names[2] != "do-c" {
		t.Errorf("scopes = %v, want sorted do-a do-b do-c", names)
	}
	if acq != r.Pool.Acquires || r.Pool.Acquires != 6 || r.Pool.Keys != 3 || r.Pool.Scopes != 3 {
		t.Errorf("totals: acquires %d (scopes sum %d) keys %d scopes %d, want 6 6 3 3", r.Pool.Acquires, acq, r.Pool.Keys, r.Pool.Scopes)
	}
	if !near(r.Pool.AcquiresPerHandshake, 2) {
		t.Errorf("acquires_per_handshake = %v, want 2", deref(r.Pool.AcquiresPerHandshake))
	}
}

func TestEmptyDumpHasNullRatios(t *testing.T) {
	r := analyzeTD(t, rulefmt.Config{}, newDump().td)
	p := r.Pool
	if p.HitRate != nil || p.ColdStartFloor != nil || p.AcquiresPerHandshake != nil {
		t.Errorf("ratios of an empty dump must be null, got %v %v %v", deref(p.HitRate), deref(p.ColdStartFloor), deref(p.AcquiresPerHandshake))
	}
	if r.Window.Start != nil || r.Window.End != nil {
		t.Errorf("window of an empty dump must be null, got %v", r.Window)
	}
	if len(p.MissReasons) != len(spans.MissReasons) {
		t.Errorf("miss_reasons must list every reason, got %v", p.MissReasons)
	}
}

func TestPercentilesUseNearestRank(t *testing.T) {
	var ds []int64
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, int64(i)*int64(time.Millisecond))
	}
	p := measure.Percentiles(ds)
	if p.Count != 100 || *p.P50 != 50 || *p.P95 != 95 || *p.P99 != 99 {
		t.Errorf("percentiles of 1..100 ms = %d %v %v %v, want 100 50 95 99", p.Count, *p.P50, *p.P95, *p.P99)
	}
	one := measure.Percentiles([]int64{1500 * int64(time.Microsecond)})
	if *one.P50 != 1.5 || *one.P99 != 1.5 {
		t.Errorf("percentiles of one 1.5 ms sample = %v %v, want 1.5", *one.P50, *one.P99)
	}
	if none := measure.Percentiles(nil); none.Count != 0 || none.P50 != nil {
		t.Errorf("percentiles of nothing = %+v, want count 0 and nulls", none)
	}
}

func TestLatencySplitsAcquiresByHit(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "do-1")
	d.invocation(ss, lease{trace: 1, start: 0, end: 10 * time.Second, key: "k", hit: false, handshake: true, session: "s"}) // acquire 1 s
	d.invocation(ss, lease{trace: 2, start: 20 * time.Second, end: 21 * time.Second, key: "k", hit: true, session: "s"})    // acquire 100 ms
	l := analyzeTD(t, rulefmt.Config{}, d.td).Pool.Latency
	if l.AcquireMiss.Count != 1 || *l.AcquireMiss.P50 != 1000 {
		t.Errorf("acquire_miss = %+v, want one 1000 ms sample", l.AcquireMiss)
	}
	if l.AcquireHit.Count != 1 || *l.AcquireHit.P50 != 100 {
		t.Errorf("acquire_hit = %+v, want one 100 ms sample", l.AcquireHit)
	}
	if l.Handshake.Count != 1 || l.Call.Count != 2 || *l.Call.P99 != 9000 {
		t.Errorf("handshake %+v call %+v, want 1 handshake and 2 calls with p99 9000 ms", l.Handshake, l.Call)
	}
}

func TestSelectNthAgreesWithSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 2, 3, 10, 101, 1000} {
		for _, spread := range []int64{1, 5, 1 << 40} { // many ties, some, none
			ds := make([]int64, size)
			for i := range ds {
				ds[i] = rng.Int64N(spread)
			}
			sorted := slices.Clone(ds)
			slices.Sort(sorted)
			for _, n := range []int{0, size / 2, size * 95 / 100, size - 1} {
				work := slices.Clone(ds)
				if got := measure.SelectNth(work, n); got != sorted[n] {
					t.Errorf("size %d spread %d: selectNth(%d) = %d, want %d", size, spread, n, got, sorted[n])
				}
			}
		}
	}
}
