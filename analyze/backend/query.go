package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// API is one backend's query API as a Query pages through it. Another
// backend whose API answers OTLP JSON is one more file implementing it.
type API interface {
	// Name names the backend in reports ("jaeger").
	Name() string
	// Services lists the services the backend has spans of.
	Services(ctx context.Context, c *Client) ([]string, error)
	// Find returns the OTLP JSON (TracesData, or JSON lines of it) of at
	// most f.Traces traces, each whole, that hold a span f selects
	// (Matches) starting in [f.Min, f.Max]; nil for none. An answer
	// longer than limit bytes is an error wrapping ErrTooLarge; a
	// backend refusing to return f.Traces traces at once says so with an
	// error wrapping ErrPageTooLarge.
	Find(ctx context.Context, c *Client, f Find, limit int64) ([]byte, error)
	// Matches is the backend's own test of a span of a resource of
	// service, its start time aside: the source tells by it which page
	// owns a trace, so it must be the backend's test exactly.
	Matches(f Find, service string, s ptrace.Span) bool
}

// ErrPageTooLarge is wrapped by Find's error when the backend refuses to
// return as many traces at once as asked: the source asks for half.
var ErrPageTooLarge = errors.New("the backend refuses a page of this many traces")

// Filter narrows a query to spans the backend's API can select.
type Filter struct {
	Operation                string        // the span's name; "" any
	MinDuration, MaxDuration time.Duration // 0: no bound
}

// Find is one request of a Query: a service, a time range and a limit.
type Find struct {
	Service  string
	Min, Max time.Time // both inclusive
	Traces   int       // at most this many traces
	Filter   Filter
}

// Query is a window of a backend's traces as a source of spans
// (ingest.Source): what `--jaeger URL --service NAME --since 1h` reads.
// Read pages through the window, service by service, from its start: a
// page that comes back full (PageTraces traces, the most a request may
// ask for) may have lost traces, so its range is halved and asked again,
// down to MinStep; a page still full there is kept and the window is
// cut (the Input is partial). A page less than a quarter full doubles the
// next range. Every trace comes whole, so each is decoded (ingest.ReadFrom,
// as a file is) and handed to the engine as one batch: memory holds one
// page, not the window.
//
// A trace is handed over once, by the page of the first service that
// selects it and of the range where its earliest selected span starts
// (owner), though the backend returns it to every page one of its spans
// matches. A trace whose latest span ended less than Settle before Now
// is still being written: it is not judged but counted (Settling), and
// the input is partial, as a dump cut short is.
type Query struct {
	API      API
	Client   *Client
	Services []string
	// Start and End bound the window: a trace is in it when a span the
	// query selects starts at or after Start and before End.
	Start, End time.Time
	Filter     Filter
	// PageTraces is the most traces one request asks for; 0 means
	// DefaultPageTraces.
	PageTraces int
	// MinStep is the narrowest range a full page is split down to; 0
	// means DefaultMinStep.
	MinStep time.Duration
	// Settle is how long after its latest span a trace counts as whole.
	Settle time.Duration
	// Now is the clock Settle is measured against; nil means time.Now.
	Now func() time.Time
}

// Defaults of Query.
const (
	DefaultPageTraces = 500
	DefaultMinStep    = time.Millisecond
	DefaultSettle     = 30 * time.Second
)

var _ ingest.Source = (*Query)(nil)

// Rereadable says whether a second Read returns the same spans: true once
// the window has settled (its end is Settle or more in the past), so a
// speculative run may read it again should it need to.
func (q *Query) Rereadable() bool { return !q.End.After(q.now().Add(-q.Settle)) }

// Bytes is 0: a backend does not say how much a window holds.
func (q *Query) Bytes() int64 { return 0 }

func (q *Query) now() time.Time {
	if q.Now == nil {
		return time.Now()
	}
	return q.Now()
}

// UnknownServiceError is a service the backend has no spans of, with the
// services it has: a typo's nearest name is among them.
type UnknownServiceError struct {
	URL     string
	Service string
	Known   []string
}

func (e *UnknownServiceError) Error() string {
	return fmt.Sprintf("%s knows no service %q", e.URL, e.Service)
}

// Read pages through the window into sink. It returns one Input, the
// query's: its Backend says what was asked and fetched.
func (q *Query) Read(ctx context.Context, opts ingest.ReadOptions, sink ingest.Sink) ([]ingest.Input, error) {
	in := ingest.Input{Path: redactURL(q.Client.base), Format: ingest.FormatOTLPJSON, Size: -1, Backend: &ingest.BackendRead{
		Backend: q.API.Name(), URL: redactURL(q.Client.base), Services: slices.Clone(q.Services),
		Start: q.Start, End: q.End, Filter: q.Filter.String(),
	}}
	if err := q.checkServices(ctx); err != nil {
		return []ingest.Input{in}, err
	}
	r := &pager{q: q, in: &in, opts: opts, sink: sink, limit: pageLimit(opts), pageTraces: cmpOr(q.PageTraces, DefaultPageTraces)}
	for i := range q.Services {
		if err := r.service(ctx, i); err != nil {
			return []ingest.Input{in}, err
		}
	}
	r.finish()
	return []ingest.Input{in}, nil
}

// checkServices fails on a service the backend does not know.
func (q *Query) checkServices(ctx context.Context) error {
	known, err := q.API.Services(ctx, q.Client)
	if err != nil {
		return err
	}
	for _, s := range q.Services {
		if !slices.Contains(known, s) {
			return &UnknownServiceError{URL: redactURL(q.Client.base), Service: s, Known: known}
		}
	}
	return nil
}

// pageLimit is the longest answer a page may be: a sixteenth of the
// memory budget, as a file's record, at least 1 MiB.
func pageLimit(opts ingest.ReadOptions) int64 { return max(opts.MemoryBudget()/16, 1<<20) }

// String is the filter for people: "" for none.
func (f Filter) String() string {
	var parts []string
	if f.Operation != "" {
		parts = append(parts, "operation "+f.Operation)
	}
	if f.MinDuration > 0 {
		parts = append(parts, "duration >= "+f.MinDuration.String())
	}
	if f.MaxDuration > 0 {
		parts = append(parts, "duration <= "+f.MaxDuration.String())
	}
	return strings.Join(parts, ", ")
}

// pager is one Read's state.
type pager struct {
	q     *Query
	in    *ingest.Input
	opts  ingest.ReadOptions
	sink  ingest.Sink
	limit int64
	cut   int // pages kept full at MinStep
	// pageTraces is the most traces a page asks for: Query.PageTraces,
	// halved each time the backend refuses that many.
	pageTraces int
}

// service pages through the window for the service at index i.
func (r *pager) service(ctx context.Context, i int) error {
	q := r.q
	minStep := cmpOr(q.MinStep, DefaultMinStep)
	step := q.End.Sub(q.Start)
	for lo := q.Start; lo.Before(q.End); {
		hi := lo.Add(step)
		if !hi.Before(q.End) || step <= 0 {
			hi = q.End
		}
		narrow := hi.Sub(lo) > minStep
		f, td, n, err := r.fetch(ctx, i, lo, hi, narrow)
		switch {
		case errors.Is(err, errNarrower):
			step = hi.Sub(lo) / 2
			continue
		case err != nil:
			return err
		}
		if n >= r.pageTraces {
			r.cut++
		}
		r.in.Backend.Pages++
		if err := r.hand(i, f, lo, hi, td); err != nil {
			return err
		}
		if 4*n < r.pageTraces { // a page less than a quarter full: the next range may be twice as long
			step = hi.Sub(lo) * 2
		}
		lo = hi
	}
	return nil
}

// errNarrower is fetch's word that the range must be asked again,
// narrower: its answer was too long, or full while it can be narrowed.
var errNarrower = errors.New("ask again over a narrower range")

// fetch asks for service i's traces in [lo, hi] and decodes them,
// halving the page size while the backend refuses it; n counts the
// traces. A backend answering traces that hold no span selected in the
// range is an error: it does not select by time.
func (r *pager) fetch(ctx context.Context, i int, lo, hi time.Time, narrow bool) (Find, ptrace.Traces, int, error) {
	q := r.q
	for {
		f := Find{Service: q.Services[i], Min: lo, Max: hi, Traces: r.pageTraces, Filter: q.Filter}
		body, err := q.API.Find(ctx, q.Client, f, r.limit)
		switch {
		case errors.Is(err, ErrTooLarge) && narrow:
			return f, ptrace.Traces{}, 0, errNarrower
		case errors.Is(err, ErrPageTooLarge) && r.pageTraces > 1:
			r.pageTraces /= 2
			continue
		case err != nil:
			return f, ptrace.Traces{}, 0, err
		}
		td, err := r.decode(ctx, body)
		if err != nil {
			return f, td, 0, err
		}
		if stray := r.strays(f, td); stray > 0 {
			return f, td, 0, fmt.Errorf("%s answered %d traces without a span of %s starting in %s .. %s, the range asked: it does not select by time as %s's API does",
				r.in.Path, stray, textfmt.QuoteInput(f.Service), f.Min.UTC().Format(time.RFC3339Nano), f.Max.UTC().Format(time.RFC3339Nano), q.API.Name())
		}
		n := traceCount(td)
		if n >= r.pageTraces && narrow {
			return f, td, n, errNarrower
		}
		return f, td, n, nil
	}
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// decode reads one page's OTLP JSON as a file's, every warning kept.
func (r *pager) decode(ctx context.Context, body []byte) (ptrace.Traces, error) {
	td := ptrace.NewTraces()
	if body == nil {
		return td, nil
	}
	page, err := ingest.ReadFrom(ctx, r.in.Path, bytes.NewReader(body), r.opts, ingest.SinkFunc(func(_ *ingest.Input, b ptrace.Traces) error {
		b.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		return nil
	}))
	r.in.Warnings = append(r.in.Warnings, page.Warnings...)
	r.in.Partial = r.in.Partial || page.Partial
	r.in.LoneSurrogates += page.LoneSurrogates
	if errors.Is(err, ingest.ErrInvalidTraceID) && !r.opts.Strict {
		// Every span of the page had an invalid trace id: the reader left
		// them out and warned, and a page is not an input, so the query
		// reads on; its input is partial.
		return td, nil
	}
	return td, err
}

// traceCount counts the distinct traces of td.
func traceCount(td ptrace.Traces) int {
	ids := map[pcommon.TraceID]struct{}{}
	eachSpan(td, func(_ string, s ptrace.Span) { ids[s.TraceID()] = struct{}{} })
	return len(ids)
}

// eachSpan calls fn with every span of td and its resource's service.
func eachSpan(td ptrace.Traces, fn func(service string, s ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		svc := ""
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok {
			svc = v.AsString()
		}
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				fn(svc, s)
			}
		}
	}
}

// finish says on the input what the read could not see, and a page
// size the backend made smaller.
func (r *pager) finish() {
	b := r.in.Backend
	if asked := cmpOr(r.q.PageTraces, DefaultPageTraces); r.pageTraces < asked {
		r.in.Warnings = append(r.in.Warnings, fmt.Sprintf("%s: the backend refused pages of %d traces: asked for %d at a time (give --page-traces %d to spare the refusals)",
			r.in.Path, asked, r.pageTraces, r.pageTraces))
	}
	b.Cut = r.cut > 0
	if r.cut > 0 {
		r.in.Partial = true
		r.in.Warnings = append(r.in.Warnings, fmt.Sprintf("%s: the window was cut: %d pages held %d traces, the most a page asks for, in a range of %v: traces may be missing (raise the page size, or narrow the window)",
			r.in.Path, r.cut, r.pageTraces, cmpOr(r.q.MinStep, DefaultMinStep)))
	}
	if b.Settling > 0 {
		r.in.Partial = true
		r.in.Warnings = append(r.in.Warnings, fmt.Sprintf("%s: %d traces were still receiving spans (the latest less than %v ago): not judged", r.in.Path, b.Settling, r.q.Settle))
	}
}

// strays counts the traces of td holding no span f selects starting in
// [f.Min, f.Max]: none, from a backend that does what its API says. A
// backend answering the same traces whatever range is asked would
// otherwise be paged a millisecond at a time through the whole window.
func (r *pager) strays(f Find, td ptrace.Traces) int {
	lo, hi := f.Min.UnixNano(), f.Max.UnixNano()
	in := map[pcommon.TraceID]bool{}
	eachSpan(td, func(svc string, s ptrace.Span) {
		at := int64(s.StartTimestamp())
		in[s.TraceID()] = in[s.TraceID()] || (at >= lo && at <= hi && r.q.API.Matches(f, svc, s))
	})
	n := 0
	for _, ok := range in {
		if !ok {
			n++
		}
	}
	return n
}
