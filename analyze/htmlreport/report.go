package htmlreport

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/spans"
)

// Schema identifies the JSON the HTML report embeds (the data its
// pictures are drawn from); golden tests pin it.
const Schema = "mcptrace.htmlreport/v1"

// Defaults of Options.
const (
	// DefaultMaxMarks caps the acquire marks drawn on all timelines
	// together: past it the timelines are sampled (every miss first, then
	// every k-th hit), which keeps a 1M-span report small and quick to draw.
	DefaultMaxMarks = 12000
	// DefaultMaxLanes caps the session lanes drawn per pool scope: past
	// it only the busiest sessions get a lane.
	DefaultMaxLanes = 120
	// DefaultMaxScopes caps the pool scopes drawn with a timeline: past
	// it only the busiest get one, the others their figures and charts.
	DefaultMaxScopes = 12
	// DefaultMaxTotalLanes caps the lanes of all timelines together, so
	// the page stays a readable height: each drawn scope gets an equal share
	// (at least 8), within DefaultMaxLanes.
	DefaultMaxTotalLanes = 480
	// DefaultBuckets is the number of time buckets of the over-time
	// charts.
	DefaultBuckets = 120
	// DefaultMaxListedScopes caps the pool scopes the page lists at
	// all (the drawn ones included): past it only the busiest are listed,
	// and the page says how many more there are ("and N more"). With the
	// marks, lanes and scopes caps it bounds the report: a scope costs its
	// figures and Buckets of chart data, so a dump of 200k scopes makes a
	// page of a few MB, not hundreds.
	DefaultMaxListedScopes = 200
	// TraceIDPlaceholder is what a --trace-url template's trace id goes in
	// place of.
	TraceIDPlaceholder = "{trace_id}"
)

// Options configures [New]. The zero value draws no links,
// no verdict, and uses the defaults above.
type Options struct {
	// TraceURL is a link template for a trace (a Grafana Explore or Tempo
	// URL) holding TraceIDPlaceholder; "" draws no links. See
	// [ValidateTraceURL].
	TraceURL string
	// Check, when set, puts a check's verdict on top and its failing rules
	// and regressions, with their traces, in the offenders section. The
	// gate builds it (gate.CheckReport.HTML).
	Check *report.HTMLCheck
	// MaxMarks, MaxLanes, MaxScopes, MaxTotalLanes, Buckets and
	// MaxListedScopes override the defaults when positive.
	MaxMarks, MaxLanes, MaxScopes, MaxTotalLanes, Buckets, MaxListedScopes int
	// WhatIf, when set, writes the what-if section drawn under the report
	// (analyze/whatif's WriteReportSection, which the CLI wires in: the
	// replay lives above this package, which it borrows the style of). It
	// must write escaped HTML, a fragment without script, as html/template
	// does; nil draws no section.
	WhatIf func(io.Writer) error
}

// ErrBadTraceURL is returned by ValidateTraceURL (wrapped) for a template
// that cannot make a trace link.
var ErrBadTraceURL = errors.New("bad --trace-url template")

// ValidateTraceURL checks a trace link template: an absolute http or https
// URL holding {trace_id}. Other schemes (javascript:, data:) are refused so
// a report never carries a script link.
func ValidateTraceURL(tmpl string) error {
	if tmpl == "" {
		return nil
	}
	if !strings.Contains(tmpl, TraceIDPlaceholder) {
		return fmt.Errorf("%w %q: it has no %s to put the trace id in", ErrBadTraceURL, truncateQuoted(tmpl), TraceIDPlaceholder)
	}
	u, err := url.Parse(strings.ReplaceAll(tmpl, TraceIDPlaceholder, "0"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w %q: want an absolute http:// or https:// URL", ErrBadTraceURL, truncateQuoted(tmpl))
	}
	return nil
}

// truncateQuoted caps user text quoted in an error.
func truncateQuoted(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// Report is the data of the self-contained HTML report: everything its
// pictures show, computed from the report, the rule verdicts and the index.
// Its JSON (schema Schema) is embedded in the page; times on the
// timelines are microseconds after Window.Start.
type Report struct {
	Schema  string   `json:"schema"`
	Inputs  []string `json:"inputs"`
	Partial bool     `json:"partial"`
	// RunsNote says the inputs hold several runs analyzed as one ("":
	// one run); report.RunsNote words it.
	RunsNote string              `json:"runs_note"`
	Window   Window              `json:"window"`
	Verdict  *report.HTMLVerdict `json:"verdict"`
	// Rules are every rule a check judged, passing ones too (the rule
	// table); absent without a check.
	Rules    []report.RuleVerdict `json:"rules,omitempty"`
	Headline Headline             `json:"headline"`
	TraceURL string               `json:"trace_url"`
	Sampling Sampling             `json:"sampling"`
	Causes   []Count              `json:"miss_causes"`
	Latency  []Latency            `json:"latency"`
	Scopes   []Scope              `json:"scopes"`
	// Offenders are the failing rules (with check) or the unexplained misses
	// and multi-session executions (without), each with its traces.
	Offenders []report.HTMLOffender `json:"offenders"`
	// Traces lists the trace ids the timelines reference by position.
	Traces []string `json:"traces"`

	// whatIf is Options.WhatIf's section, written once by New: markup,
	// not data, so it is drawn under the report and not in its JSON.
	whatIf string
}

// Window is the time the dump covers.
type Window struct {
	Start      string  `json:"start"`
	End        string  `json:"end"`
	DurationMs float64 `json:"duration_ms"`
}

// Headline holds the figures drawn as tiles. A figure the spans cannot
// tell (report.Report.FigureOf: not measurable) is null, never a number
// that reads as a count.
type Headline struct {
	Spans             int      `json:"spans"`
	Traces            int      `json:"traces"`
	IncompleteTraces  int      `json:"incomplete_traces"`
	Acquires          *int     `json:"acquires"`
	Hits              *int     `json:"hits"`
	Misses            *int     `json:"misses"`
	HitRate           *float64 `json:"hit_rate"`
	ColdStartFloor    *float64 `json:"cold_start_floor"`
	ExcessMisses      *int     `json:"excess_misses"`
	UnexplainedMisses *int     `json:"unexplained_misses"`
	Handshakes        *int     `json:"handshakes"`
	Executions        *int     `json:"executions"`
	MultiSession      *int     `json:"multi_session_executions"`
	// ExecutionsMeasurable is the report's executions.measurable, and
	// ExecutionsWhyNot its why_not: the page then says the executions
	// could not be measured instead of drawing their figures.
	ExecutionsMeasurable bool    `json:"executions_measurable"`
	ExecutionsWhyNot     string  `json:"executions_why_not"`
	Reads                []Reads `json:"reads_per_request"`
	// Figures are the report's figures that are not the truth (a bound,
	// or not measurable, with why: report.Report.FigureOf): the page
	// draws "≥ 59" or "not measurable" for them, never the bare number.
	Figures map[string]report.FigureState `json:"figures"`
}

// Reads is one reads-per-request measure's headline.
type Reads struct {
	Name       string `json:"name"`
	Requests   int    `json:"requests"`
	Expect     *int   `json:"expect"`
	Unexpected int    `json:"unexpected"`
	// Mean is the mean number of reads per complete request; null without.
	Mean *float64 `json:"mean"`
	// Unmatched names the measure's selectors that matched no span; ""
	// when each did.
	Unmatched string `json:"unmatched"`
}

// Sampling says what the timelines leave out of a long dump.
type Sampling struct {
	Acquires        int `json:"acquires"`
	MarksShown      int `json:"marks_shown"`
	Sessions        int `json:"sessions"`
	LanesShown      int `json:"lanes_shown"`
	Handshakes      int `json:"handshakes"`
	HandshakesShown int `json:"handshakes_shown"`
	// Scopes counts pool scopes; ScopesDrawn those with a timeline;
	// ScopesLeftOut those not listed at all (past MaxListedScopes, the
	// least busy), which the page names as "and N more".
	Scopes        int `json:"scopes"`
	ScopesDrawn   int `json:"scopes_drawn"`
	ScopesLeftOut int `json:"scopes_left_out,omitempty"`
	// HitStride is k when only every k-th hit is drawn (1: all); MissStride
	// the same for misses.
	HitStride  int    `json:"hit_stride"`
	MissStride int    `json:"miss_stride"`
	Note       string `json:"note"`
}

// Count is the misses of one cause; Count is null where the spans cannot
// show it (a figure, or a share of one, that is not measurable:
// report.Report.ShareOf).
type Count struct {
	Name  string `json:"name"`
	Count *int   `json:"count"`
	// Figure names the figure the count is (report.MissCauseFigure): the
	// page draws it as that figure is worth (Headline.Figures), "≥ 3" for
	// a lower bound, never the bare number.
	Figure string `json:"figure"`
}

// causeCount is the count n of the misses of cause, null by unknownShares
// where the spans cannot show it.
func causeCount(cause string, n int) Count {
	return Count{Name: cause, Count: &n, Figure: report.MissCauseFigure(cause)}
}

// Latency is one latency distribution: nearest-rank quantiles with a
// 95% confidence interval from the order statistics (how far the quantile
// of another run of the same size could plausibly be), and a histogram on
// log-spaced buckets.
type Latency struct {
	Name string `json:"name"`
	// Figure names the measure of its count (acquire_hit.count): the page
	// draws the count as what that figure is worth (Headline.Figures).
	Figure    string     `json:"figure"`
	Count     int        `json:"count"`
	Quantiles []Quantile `json:"quantiles"`
	// Buckets are [upper bound ms, count] pairs, empty buckets left out.
	Buckets [][2]float64 `json:"buckets"`
}

// Quantile is a quantile in milliseconds with its 95% interval.
type Quantile struct {
	Q  float64 `json:"q"`
	Ms float64 `json:"ms"`
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Scope is one pool scope's pictures.
type Scope struct {
	Scope          string   `json:"scope"`
	Acquires       int      `json:"acquires"`
	Hits           int      `json:"hits"`
	HitRate        *float64 `json:"hit_rate"`
	ColdStartFloor *float64 `json:"cold_start_floor"`
	Sessions       int      `json:"sessions"`
	// Drawn is false for a scope outside the busiest MaxScopes: it has no
	// lanes, only its figures and charts.
	Drawn  bool    `json:"timeline"`
	Causes []Count `json:"miss_causes"`
	Lanes  []Lane  `json:"lanes"`
	// BucketUs is the width of a time bucket; Buckets are [acquires, hits,
	// cold misses] per bucket from Window.Start.
	BucketUs int64    `json:"bucket_us"`
	Buckets  [][3]int `json:"buckets"`
}

// Lane is one downstream session's lane.
type Lane struct {
	Session  string `json:"session"`
	Acquires int    `json:"acquires"`
	Misses   int    `json:"misses"`
	// Marks are drawn acquires: [start µs, duration µs, cause (0 hit, else
	// 1 + index in Causes order of spans.MissReasons), trace (index in
	// Traces), span id (hex, as a JSON string)].
	Marks [][5]any `json:"marks"`
	// Handshakes are [start µs, duration µs, failed 0/1, trace, span id].
	Handshakes [][5]any `json:"handshakes"`
}

// New computes the HTML report's data from a finished analysis: r is the
// dump's analysis (analyze.Analyze), ev its events
// (analyze.NewReportEvents of the same index and configuration), opts.Check
// the verdict of the same dump (nil for `analyze`). Long dumps are sampled
// as Sampling says; every count, rate and latency still uses every span.
func New(r *report.Report, ev *events.ReportEvents, opts Options) (*Report, error) {
	if err := ValidateTraceURL(opts.TraceURL); err != nil {
		return nil, err
	}
	opts.MaxMarks = cmp.Or(max(opts.MaxMarks, 0), DefaultMaxMarks)
	opts.MaxLanes = cmp.Or(max(opts.MaxLanes, 0), DefaultMaxLanes)
	opts.Buckets = cmp.Or(max(opts.Buckets, 0), DefaultBuckets)
	opts.MaxScopes = cmp.Or(max(opts.MaxScopes, 0), DefaultMaxScopes)
	opts.MaxTotalLanes = cmp.Or(max(opts.MaxTotalLanes, 0), DefaultMaxTotalLanes)
	opts.MaxListedScopes = max(cmp.Or(max(opts.MaxListedScopes, 0), DefaultMaxListedScopes), opts.MaxScopes)

	h := &Report{
		Schema:    Schema,
		Inputs:    []string{},
		Partial:   r.Partial,
		RunsNote:  r.RunsNote(),
		TraceURL:  opts.TraceURL,
		Scopes:    []Scope{},
		Offenders: []report.HTMLOffender{},
		Traces:    []string{},
	}
	for _, in := range r.Inputs {
		h.Inputs = append(h.Inputs, in.Path)
	}
	var t0, t1 int64
	if r.Window.Start != nil {
		t0, t1 = r.Window.Start.UnixNano(), r.Window.End.UnixNano()
		h.Window = Window{
			Start:      r.Window.Start.UTC().Format(time.RFC3339Nano),
			End:        r.Window.End.UTC().Format(time.RFC3339Nano),
			DurationMs: roundMs(t1 - t0),
		}
	}
	if c := opts.Check; c != nil {
		v := c.Verdict
		h.Verdict = &v
		h.Partial = h.Partial || c.Partial
		h.Rules = append([]report.RuleVerdict{}, c.Rules...)
	}
	h.Headline = htmlHeadline(r)
	for _, reason := range spans.MissReasons {
		h.Causes = append(h.Causes, causeCount(reason, r.Pool.MissReasons[reason]))
	}
	h.Latency = htmlLatencies(ev, r)
	h.Offenders = htmlOffenders(r, opts)
	h.Scopes, h.Sampling = htmlTimelines(h, ev, t0, t1, opts)
	h.unknownShares(r)
	if f := r.FigureOf("acquires"); !f.Known() {
		h.Sampling.Note = "No timeline: the spans cannot show acquires (" + f.Why + ")."
	}
	h.escapeText()
	if opts.WhatIf != nil {
		var b strings.Builder
		if err := opts.WhatIf(&b); err != nil {
			return nil, fmt.Errorf("html report: what-if section: %w", err)
		}
		h.whatIf = `<div class="report-more">` + b.String() + `</div>`
	}
	return h, nil
}

func htmlHeadline(r *report.Report) Headline {
	count := func(name string, v int) *int {
		if !r.FigureOf(name).Known() {
			return nil
		}
		return &v
	}
	share := func(name string, v *float64) *float64 {
		if !r.FigureOf(name).Known() {
			return nil
		}
		return v
	}
	hl := Headline{
		Spans:                r.Spans,
		Traces:               r.Traces,
		IncompleteTraces:     r.IncompleteTraces,
		Acquires:             count("acquires", r.Pool.Acquires),
		Hits:                 count("hits", r.Pool.Hits),
		Misses:               count("misses", r.Pool.Misses),
		HitRate:              share("hit_rate", r.Pool.HitRate),
		ColdStartFloor:       share("cold_start_floor", r.Pool.ColdStartFloor),
		ExcessMisses:         count("excess_misses", r.Pool.ExcessMisses),
		UnexplainedMisses:    count("unexplained_misses", r.Pool.UnexplainedMisses),
		Handshakes:           count("handshakes", r.Pool.Handshakes),
		Executions:           count("executions", r.Executions.Count),
		MultiSession:         count("multi_session_executions", r.Executions.MultiSession),
		Reads:                []Reads{},
		ExecutionsMeasurable: r.Executions.Measurable,
		ExecutionsWhyNot:     r.Executions.WhyNot,
		Figures:              map[string]report.FigureState{},
	}
	for _, m := range report.Measures() {
		if f := r.FigureOf(m.Name); !f.Exact() {
			hl.Figures[m.Name] = f
		}
	}
	for _, m := range r.Measures {
		rd := Reads{Name: m.Name, Requests: m.Requests, Expect: m.Expect, Unexpected: m.Unexpected, Unmatched: m.UnmatchedNote()}
		total, n := 0, 0
		for _, b := range m.Histogram {
			total += b.Reads * b.Requests
			n += b.Requests
		}
		if n > 0 {
			mean := float64(total) / float64(n)
			rd.Mean = &mean
		}
		hl.Reads = append(hl.Reads, rd)
	}
	return hl
}

// roundMs converts nanoseconds to milliseconds rounded to the microsecond.
func roundMs(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }

// htmlLatencies builds the four distributions. The quantiles are the
// report's own (nearest rank over every sample); the intervals and
// histograms come from the same samples.
func htmlLatencies(ev *events.ReportEvents, r *report.Report) []Latency {
	var hit, miss, hs, call []int64
	for i := range ev.NumAcquires() {
		e := ev.Acquire(i)
		switch {
		case e.Implied:
			// An implied hit has no acquire span to time.
		case e.Hit:
			hit = append(hit, max(e.End-e.Start, 0))
		default:
			miss = append(miss, max(e.End-e.Start, 0))
		}
	}
	for _, e := range ev.Handshakes {
		hs = append(hs, max(e.End-e.Start, 0))
	}
	for _, c := range ev.Calls {
		call = append(call, max(c.End-c.Start, 0))
	}
	lat := r.Pool.Latency
	return []Latency{
		latency("acquire (hit)", "acquire_hit.count", hit, lat.AcquireHit),
		latency("acquire (miss)", "acquire_miss.count", miss, lat.AcquireMiss),
		latency("handshake", "handshake.count", hs, lat.Handshake),
		latency("call", "call.count", call, lat.Call),
	}
}

func latency(name, figure string, ds []int64, p report.Percentiles) Latency {
	l := Latency{Name: name, Figure: figure, Count: len(ds), Quantiles: []Quantile{}, Buckets: [][2]float64{}}
	if len(ds) == 0 {
		return l
	}
	slices.Sort(ds)
	n := float64(len(ds))
	for _, q := range []struct {
		q float64
		v *float64
	}{{0.5, p.P50}, {0.95, p.P95}, {0.99, p.P99}} {
		// Nearest rank, as the report computes it, when it has no figure.
		ms := roundMs(ds[min(len(ds)-1, max(0, int(math.Ceil(q.q*n))-1))])
		if q.v != nil {
			ms = *q.v
		}
		half := 1.96 * math.Sqrt(n*q.q*(1-q.q))
		lo := int(math.Floor(n*q.q - half))
		hi := int(math.Ceil(n*q.q + half))
		l.Quantiles = append(l.Quantiles, Quantile{
			Q:  q.q,
			Ms: ms,
			Lo: roundMs(ds[min(len(ds)-1, max(0, lo-1))]),
			Hi: roundMs(ds[min(len(ds)-1, max(0, hi-1))]),
		})
	}
	// Log-spaced buckets, five per decade from 1µs.
	counts := map[int]int{}
	for _, d := range ds {
		b := 0
		if d > 1000 {
			b = int(math.Ceil(5 * math.Log10(float64(d)/1000)))
		}
		counts[b]++
	}
	keys := make([]int, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		upper := math.Pow(10, float64(k)/5) / 1000 // ms
		l.Buckets = append(l.Buckets, [2]float64{math.Round(upper*1e6) / 1e6, float64(counts[k])})
	}
	return l
}

// traceLink fills the template with a trace id.
func traceLink(tmpl, traceID string) string {
	if tmpl == "" {
		return ""
	}
	return strings.ReplaceAll(tmpl, TraceIDPlaceholder, url.PathEscape(traceID))
}

func htmlOffenders(r *report.Report, opts Options) []report.HTMLOffender {
	out := []report.HTMLOffender{}
	example := func(tid, sid, q string) report.HTMLExample {
		if q == "" {
			q = fmt.Sprintf(`{ trace:id = "%s" }`, tid)
		}
		return report.HTMLExample{TraceID: tid, SpanID: sid, TraceQL: q, URL: traceLink(opts.TraceURL, tid)}
	}
	if c := opts.Check; c != nil {
		for _, o := range c.Offenders {
			exs := make([]report.HTMLExample, 0, len(o.Examples))
			for _, ex := range o.Examples {
				exs = append(exs, example(ex.TraceID, ex.SpanID, ex.TraceQL))
			}
			o.Examples = exs
			out = append(out, o)
		}
		return out
	}
	if n, f := r.Pool.UnexplainedMisses, r.FigureOf("unexplained_misses"); n > 0 && f.Known() {
		status, found := findingOf(f, fmt.Sprintf("%d unexplained miss(es)", n))
		o := report.HTMLOffender{ID: "unexplained misses", Severity: "finding", Status: status,
			Expected: "every miss explained: " + strings.Join(spans.ExplainedMissReasons, ", "),
			Found:    found, TraceQL: spans.TraceQLUnexplainedMiss, Examples: []report.HTMLExample{}}
		for _, tid := range r.Pool.UnexplainedExamples {
			o.Examples = append(o.Examples, example(tid, "", ""))
		}
		out = append(out, o)
	}
	if o, ok := unmeasurableOffender(r); ok {
		out = append(out, o)
	}
	if n, f := r.Executions.MultiSession, r.FigureOf("multi_session_executions"); n > 0 && f.Known() {
		status, found := findingOf(f, fmt.Sprintf("%s of %s on several sessions (at most %d)", textfmt.Count(n), countOf(r.Executions.Count, "execution"), r.Executions.MaxSessions))
		o := report.HTMLOffender{ID: "executions on several sessions", Severity: "finding", Status: status,
			Expected: "each execution's tool calls on one downstream session",
			Found:    found,
			TraceQL:  multiSessionTraceQL(r.Executions.Examples), Examples: []report.HTMLExample{}}
		for _, tid := range r.Executions.Examples {
			o.Examples = append(o.Examples, example(tid, "", multiSessionTraceQL([]string{tid})))
		}
		out = append(out, o)
	}
	return out
}

// ratio returns a/b, or nil when b is 0 (the figure is undefined, not 0),
// as the report's own rates are.
func ratio(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	f := float64(a) / float64(b)
	return &f
}

// findingOf is the status and words of a finding counted by a figure in
// state f, found its words as measured: found where every item counted
// certainly is one (report.FigureState.Certain); where f is an upper
// bound, some of them may not be, and the finding says so and why.
func findingOf(f report.FigureState, found string) (status, words string) {
	if f.Certain() {
		return "found", found
	}
	return "upper bound", "at most " + found + ": " + f.Why
}

// unmeasurableOffender is the HTML report's finding, without a check, that
// the executions could not be measured, saying why.
func unmeasurableOffender(r *report.Report) (report.HTMLOffender, bool) {
	if r.Executions.Measurable {
		return report.HTMLOffender{}, false
	}
	return report.HTMLOffender{ID: "executions not measurable", Severity: "finding", Status: "not measurable",
		Expected: "each tool call tied to the execution that made it",
		Found:    r.Executions.WhyNot, Examples: []report.HTMLExample{}}, true
}

// unknownShares empties the page's figures and shares of figures the
// spans cannot show, where the JSON report nulls them
// (report.Report.ShareOf): the misses by cause, overall and per scope, and
// each scope's hit rate and cold-start floor. The page then says "not
// measurable" for them, never 0.
func (h *Report) unknownShares(r *report.Report) {
	blank := func(causes []Count, at string) {
		for i := range causes {
			if !r.ShareOf(at + causes[i].Name).Known() {
				causes[i].Count = nil
			}
		}
	}
	blank(h.Causes, "pool.miss_reasons.")
	for i := range h.Scopes {
		sc := &h.Scopes[i]
		blank(sc.Causes, "pool.by_scope[].miss_reasons.")
		if !r.ShareOf("pool.by_scope[].hit_rate").Known() {
			sc.HitRate = nil
		}
		if !r.ShareOf("pool.by_scope[].cold_start_floor").Known() {
			sc.ColdStartFloor = nil
		}
	}
}
