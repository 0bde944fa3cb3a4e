package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/internal/poll"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// The measures in two steps. observe reads a finished index holding whole
// traces and returns an observation: figures that no longer refer to the
// index (counts, sketches, trace ids as text, pool acquires with their
// scope and key as text), so the index can be freed. An aggregate merges any
// number of observations, in any order, and reports. Every figure but two
// is per trace, so merging is adding; the two that cross traces are the
// latency percentiles (a mergeable sketch, measure.Latencies) and the pool's
// miss attribution, which walks each (scope, key) pair's acquires in time
// order across traces: observations carry the acquires unattributed and the
// aggregate's measure.PairStage attributes them.
//
// Analyze is observe then report over one index; the Engine observes the
// traces each shard finalizes and merges the observations. One code path.

// observation is what the measures keep of a set of whole traces.
type observation struct {
	spans, duplicates, traces, incomplete, poolSpans int
	seen                                             measure.SpanEvidence
	execNames                                        map[string][2]int
	windowOK                                         bool
	lo, hi                                           int64

	lat        [measure.NumLatencies]measure.Sketch
	exec       report.ExecutionsReport
	protos     map[record.OptStr]*measure.ProtoFigures
	measures   []report.MeasureReport
	events     []record.Acquire // unattributed; scope, key and session index strs
	handshakes map[int32]int    // by scope (an index into strs, -1 none)
	strs       []string
	// settings is the pool's recorded settings by scope
	// (pool_settings.go); nil when no span recorded any.
	settings map[int32]int32
	// services is each acquire scope's service.name (events.serviceByScope).
	services map[int32]int32
	// made is the texts the stage made up (events.made), at the end of
	// strs: what adopt reads to tell whether strs holds a text twice.
	made map[string]int32
	// detect is the vocabulary evidence of the traces (package vocab), profile
	// the profile the measures read them with.
	detect  *vocab.Detection
	profile rulefmt.Profile
}

// observe computes the observation of every trace of idx under cfg, which
// must be valid and defaulted.
func observe(idx *index.Index, cfg rulefmt.Config) (*observation, error) {
	return observeContext(context.Background(), idx, cfg)
}

// observeWith is observe with idx's detection already made (det, from
// observeConfig), or made here when det is nil: a finalization decides
// its configuration from the same detection its observation reports.
func observeWith(idx *index.Index, cfg rulefmt.Config, det *vocab.Detection) (*observation, error) {
	o, _, err := observeStage(context.Background(), idx, cfg, det)
	return o, err
}

// observeContext is observe stopped by ctx: its long loops poll the
// context (see [poll]) and it returns ctx's error, wrapped, when one did.
func observeContext(ctx context.Context, idx *index.Index, cfg rulefmt.Config) (*observation, error) {
	o, _, err := observeStage(ctx, idx, cfg, nil)
	return o, err
}

// observeStage is observeContext that also returns the vocabulary stage's
// events it observed, for the HTML report's events to read the same stage.
// det is idx's detection when the caller made it (nil: made here).
func observeStage(ctx context.Context, idx *index.Index, cfg rulefmt.Config, det *vocab.Detection) (*observation, *record.Table, error) {
	idx.Finish()
	o := &observation{
		spans:      len(idx.Order),
		duplicates: idx.Dups,
		traces:     len(idx.TraceRecs),
		incomplete: idx.Incomplete,
		measures:   make([]report.MeasureReport, 0, len(cfg.Measures)),
	}
	if start, end, ok := idx.Window(); ok {
		o.windowOK, o.lo, o.hi = true, start.UnixNano(), end.UnixNano()
	}
	if o.detect = det; det == nil {
		pl := poll.New(ctx)
		o.detect = vocab.Detect(idx, pl)
		if err := pl.Err(); err != nil {
			return nil, nil, fmt.Errorf("analyze: detection: %w", err)
		}
	}
	if cfg.Vocabulary == nil {
		cfg.Profile = o.detect.Resolve(cfg.Profile)
	}
	o.profile = cfg.Profile
	ev, err := vocab.Stage(ctx, idx, cfg)
	if err != nil {
		return nil, nil, err
	}
	o.poolSpans, o.seen, o.execNames = ev.PoolSpans, measure.EvidenceOf(ev), ev.ExecNames
	o.protos = measure.ProtocolFigures(ev)
	lat := measure.Latencies(ev)
	for i := range lat.Series {
		o.lat[i] = measure.Sketch{Samples: lat.Series[i], N: len(lat.Series[i]), LeftOut: lat.LeftOut[i]}
	}
	o.exec = measure.Executions(ev, nil)
	o.observePool(ev)
	p := poll.New(ctx)
	for _, m := range cfg.Measures {
		acc, err := measure.NewReadsAcc(idx, m)
		if err != nil {
			return nil, nil, fmt.Errorf("analyze: measure %q: %w", m.Name, err)
		}
		acc.Poll = p
		o.measures = append(o.measures, acc.Report())
	}
	if err := p.Err(); err != nil {
		return nil, nil, fmt.Errorf("analyze: measures: %w", err)
	}
	return o, ev, nil
}

// observePool takes the acquire events (not attributed) out of the index:
// their strings index the events' table, which the observation keeps, so
// the index can go. Handshakes leave as counts by scope (an inferred
// acquire's handshake is counted where its session's first call is found,
// in the attribution).
func (o *observation) observePool(e *record.Table) {
	o.strs = e.Strs
	o.events = e.Acquires
	o.handshakes = e.HandshakesByScope
	o.settings = e.SettingsByScope
	o.services = e.ServiceByScope
	o.made = e.Made
}

// aggregate merges observations and reports. It is not safe for
// concurrent use: the Engine merges under its lock.
type aggregate struct {
	cfg                                              rulefmt.Config
	spans, duplicates, traces, incomplete, poolSpans int
	seen                                             measure.SpanEvidence
	execNames                                        map[string][2]int
	windowOK                                         bool
	lo, hi                                           int64

	lat      [measure.NumLatencies]measure.Sketch
	exec     report.ExecutionsReport
	protos   map[record.OptStr]*measure.ProtoFigures
	measures []report.MeasureReport
	pairs    *measure.PairStage
	// detect sums the observations' vocabulary evidence; profile is the
	// one the measures read (useProfile), sticky a stream's decisions per
	// resource (nil in a batch run).
	detect  *vocab.Detection
	profile rulefmt.Profile
	sticky  map[string]string

	// The strings the pair stage's events refer to, interned across
	// observations; ids is built on the first intern after adopt.
	strs []string
	ids  map[string]int32
	// strBytes is the length of the texts in strs (scope and key names,
	// sessions), for the memory budget (stateBytes).
	strBytes int64
	// adopted says strs is the table of the observation merge takes next
	// (adopt): it keeps that observation's ids.
	adopted bool
	// keepAt says merge numbers the events by their position in the
	// observation (acquireEvent.at) rather than marking them out of their
	// index: the report events find by it what the index said of each.
	keepAt bool

	// settings is the pool's recorded settings by scope, as
	// events.settingsByScope keyed into strs: the miss attribution replays
	// each scope under its own (recordedSettings).
	settings map[int32]int32
	// services is each scope's service.name, kept like settings (only
	// when ReadAcquires asks): the replay's recent:N ranks a service's keys.
	services map[int32]int32

	// scopeKeyless counts each scope's keyless acquires (measure.Keyless)
	// filed so far, kept only for a TraceStream (non-nil): what its scope's
	// writer shows (writerOf). scopeLacks is, for a PairStream, what the
	// forwarders of each scope's events said their spans lacked.
	scopeKeyless map[int32]int
	scopeLacks   map[int32]rulefmt.Capability
}

// newAggregate returns an empty aggregate for cfg, its latency series
// bounded (sketchExact).
func newAggregate(cfg rulefmt.Config) *aggregate {
	a := &aggregate{
		cfg:      cfg,
		exec:     report.ExecutionsReport{Root: "trace", Examples: []string{}},
		protos:   map[record.OptStr]*measure.ProtoFigures{},
		measures: make([]report.MeasureReport, len(cfg.Measures)),
		pairs:    measure.NewPairStage(cfg),
		ids:      map[string]int32{},
		detect:   vocab.NewDetection(),
		settings: map[int32]int32{},
	}
	if cfg.Profile != rulefmt.ProfileAuto {
		a.profile = cfg.Profile // auto is decided (useProfile), or resolved from the evidence merged (effectiveProfile)
	}
	a.pairs.Recorded = a.recordedSettings
	for i := range a.lat {
		a.lat[i].Bound()
	}
	for i, m := range cfg.Measures {
		a.measures[i] = report.MeasureReport{Name: m.Name, Description: m.Description, Expect: m.Expect, Histogram: []report.HistogramBin{}, Examples: []string{},
			Unmatched: measure.Unmatched(m, false, false, false)} // until a part shows a match
	}
	return a
}

// adopt takes the string table of o, the one observation an empty
// aggregate will merge, as its own: an index's analysis then holds one
// table of its keys, not two (with a map of every key). It refuses, and
// merge re-keys as for any observation, when the table holds a text twice
// (a text the stage made that is also a value), which ids would tell
// apart where the aggregate's table does not.
func (a *aggregate) adopt(o *observation) bool {
	if len(a.strs) > 0 {
		return false
	}
	for _, s := range o.strs[:len(o.strs)-len(o.made)] {
		if _, ok := o.made[s]; ok {
			return false
		}
	}
	a.strs, a.ids, a.adopted = slices.Clip(o.strs), nil, true
	for _, s := range a.strs {
		a.strBytes += int64(len(s))
	}
	return true
}

// intern returns the aggregate's id of s.
func (a *aggregate) intern(s string) int32 {
	if a.ids == nil {
		a.ids = make(map[string]int32, len(a.strs))
		for i, t := range a.strs {
			a.ids[t] = int32(i)
		}
	}
	if id, ok := a.ids[s]; ok {
		return id
	}
	id := int32(len(a.strs))
	a.strs = append(a.strs, s)
	a.ids[s] = id
	a.strBytes += int64(len(s))
	return id
}

// strCost is what the aggregate holds per text of strs past the text
// itself: its string header, its ids entry, and (for a scope) the copy the
// renderer writes.
const strCost = 64

// stateBytes estimates the memory the aggregate's state across traces
// takes and its report will: the pair stage's (measure.PairStage.StateBytes)
// and the texts it names scopes, keys and sessions with, each held once
// and written once more by the renderer.
func (a *aggregate) stateBytes() int64 {
	return a.pairs.StateBytes() + 2*a.strBytes + int64(len(a.strs))*strCost
}

// merge adds an observation. Its events go to the pair stage, which
// attributes them when told how far time has gone (advance).
func (a *aggregate) merge(o *observation) {
	a.spans += o.spans
	a.duplicates += o.duplicates
	a.traces += o.traces
	a.incomplete += o.incomplete
	a.poolSpans += o.poolSpans
	a.seen.Add(o.seen)
	a.execNames = measure.MergeExecNames(a.execNames, o.execNames)
	a.detect.Merge(o.detect)
	if o.windowOK {
		if !a.windowOK {
			a.lo, a.hi = o.lo, o.hi
		}
		a.windowOK = true
		a.lo, a.hi = min(a.lo, o.lo), max(a.hi, o.hi)
	}
	for i := range a.lat {
		a.lat[i].Merge(&o.lat[i])
	}
	a.exec.Count += o.exec.Count
	a.exec.MultiSession += o.exec.MultiSession
	a.exec.MaxSessions = max(a.exec.MaxSessions, o.exec.MaxSessions)
	a.exec.Examples = mergeExamples(a.exec.Examples, o.exec.Examples)
	measure.MergeMeasurability(&a.exec, &o.exec)
	for ver, g := range o.protos {
		if mine, ok := a.protos[ver]; ok {
			mine.Merge(g)
		} else {
			a.protos[ver] = g
			g.Cold.Bound()
		}
	}
	for i := range a.measures {
		mergeMeasure(&a.measures[i], &o.measures[i])
	}
	a.fileEvents(o)
}

// fileEvents re-keys o's events and its per-scope notes (handshakes,
// services, settings) from o's string ids to the aggregate's, and files
// the events with the pair stage, which keeps copies: o's are let go.
func (a *aggregate) fileEvents(o *observation) {
	global := a.globalIDs(o)
	for i := range o.events {
		ev := &o.events[i]
		ev.Scope, ev.Key, ev.Session = global(ev.Scope), global(ev.Key), global(ev.Session)
		ev.At = -1 // out of its index
		if a.keepAt {
			ev.At = int32(i)
		}
		if a.scopeKeyless != nil && measure.Keyless(ev) {
			a.scopeKeyless[ev.Scope]++
		}
	}
	if a.settings == nil {
		a.settings = map[int32]int32{}
	}
	a.pairs.Recorded = a.recordedSettings
	a.pairs.Add(o.events)
	o.events = nil // filed as copies: let them go before the attribution
	for scope, n := range o.handshakes {
		a.pairs.Handshakes[global(scope)] += n
	}
	if a.services != nil {
		for scope, svc := range o.services {
			a.services[global(scope)] = global(svc)
		}
	}
	for scope, id := range o.settings {
		if id >= 0 {
			id = global(id)
		}
		record.NoteSettings(a.settings, global(scope), id)
	}
}

// recordedSettings returns what scope recorded of its settings (nil:
// none), and whether it recorded different ones.
func (a *aggregate) recordedSettings(scope int32) (record.PoolSettings, bool) {
	return record.RecordedIn(a.settings, a.strs, scope)
}

// globalIDs returns the re-keying of o's string ids to the aggregate's
// (-1 stays -1): none for the observation it adopted.
func (a *aggregate) globalIDs(o *observation) func(int32) int32 {
	if a.adopted {
		a.adopted = false
		return func(id int32) int32 { return max(id, -1) }
	}
	tr := make([]int32, len(o.strs))
	for i := range tr {
		tr[i] = -2 // not yet looked up
	}
	return func(id int32) int32 {
		if id < 0 {
			return -1
		}
		if tr[id] == -2 {
			tr[id] = a.intern(o.strs[id])
		}
		return tr[id]
	}
}

// mergeMeasure adds o's reads-per-request figures to m.
func mergeMeasure(m, o *report.MeasureReport) {
	m.Requests += o.Requests
	m.Complete += o.Complete
	m.Incomplete += o.Incomplete
	m.Unexpected += o.Unexpected
	m.Examples = mergeExamples(m.Examples, o.Examples)
	m.Unmatched = measure.MergeUnmatched(m.Unmatched, o.Unmatched)
	if len(o.Histogram) == 0 {
		return
	}
	h := append(m.Histogram, o.Histogram...)
	slices.SortStableFunc(h, func(a, b report.HistogramBin) int { return cmp.Compare(a.Reads, b.Reads) })
	out := h[:0]
	for _, b := range h {
		if n := len(out); n > 0 && out[n-1].Reads == b.Reads {
			out[n-1].Requests += b.Requests
			continue
		}
		out = append(out, b)
	}
	m.Histogram = out
}

// mergeExamples merges two sorted, distinct lists of example trace ids
// into one, sorted, distinct, at most MaxExamples: the smallest ids of the
// union, whatever order the traces were observed in.
func mergeExamples(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > report.MaxExamples {
		out = out[:report.MaxExamples]
	}
	return out
}

// writer is what the writer of the spans merged so far shows, with what
// the readers saw of inputs (the lone surrogates the spans cannot say
// they held): the report's writer section, and what a replay of the
// acquires (ReadAcquiresWriter) asks whether it can tell keys apart.
func (a *aggregate) writer(inputs []report.InputReport) *report.WriterReport {
	seen := a.seen
	seen.AddInputs(inputs) // what the spans cannot say of themselves
	return measure.WriterReport(a.vocabulary(), seen, a.cfg.Vocabulary != nil)
}

// report attributes every acquire still pending and returns the report.
// Call it once.
func (a *aggregate) report(inputs []report.InputReport) *report.Report {
	cfg := a.cfg
	r := &report.Report{
		Schema: report.Schema,
		Settings: report.Settings{
			Profile:        cfg.Profile,
			ScopeAttr:      cfg.ScopeAttr,
			IdleTTLSeconds: cfg.IdleTTL.Seconds(),
			PoolSpanNames:  a.vocabulary().PoolSpanNames(),
		},
		Inputs:           inputs,
		Spans:            a.spans,
		DuplicateSpans:   a.duplicates,
		Traces:           a.traces,
		IncompleteTraces: a.incomplete,
		PoolSpans:        a.poolSpans,
		ByProtocol:       measure.ProtocolReports(a.protos),
		Executions:       a.exec,
		Measures:         a.measures,
	}
	if r.Inputs == nil {
		r.Inputs = []report.InputReport{}
	}
	for _, in := range r.Inputs {
		r.Partial = r.Partial || in.Partial
	}
	if a.windowOK {
		start, end := time.Unix(0, a.lo).UTC(), time.Unix(0, a.hi).UTC()
		r.Window = report.Window{Start: &start, End: &end}
	}
	a.pairs.Advance(math.MaxInt64)
	r.Pool = a.pairs.Report(a.strs)
	r.Settings.PoolSettings = measure.SettingsSource(r.Pool.ByScope)
	r.Pool.Latency = report.LatencyReport{
		AcquireHit:  a.lat[measure.LatAcquireHit].PercentilesWithSample(),
		AcquireMiss: a.lat[measure.LatAcquireMiss].PercentilesWithSample(),
		Handshake:   a.lat[measure.LatHandshake].PercentilesWithSample(),
		Call:        a.lat[measure.LatCall].PercentilesWithSample(),
	}
	if root := a.resolved().EffectiveExecutionRoot(); root != nil {
		r.Settings.ExecutionRoot = root.String()
		r.Executions.Root = r.Settings.ExecutionRoot
	}
	a.reportDetection(r)
	r.Writer = a.writer(inputs)
	r.Warnings = append(a.seen.Warnings(), measure.LeftOutWarnings(&r.Pool.Latency)...)
	if w := a.pairs.UnusableSettingsWarning(a.strs); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	r.Executions.ExecutionsWithoutCalls = measure.ExecutionsWithoutCalls(a.execNames)
	measure.JudgeMeasurability(&r.Executions, r.PoolSpans, rulefmt.CapabilitiesOf(r.Writer.Shows))
	r.DeclareFigures()
	return r
}
