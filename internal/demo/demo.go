// Package demo runs mcptrace's demonstration workload: executions of
// dependent tool calls through the instrumented pool against a session-
// stateful fixture, once pooled and once with a fresh dial per call, so the
// difference shows in the results and in the exported spans.
//
// It lives under internal because it is wiring for the CLI's demo command
// (and its tests), not an API: it imports pool, fixtures and spans together,
// which no public package may.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// Mode is how the workload reaches the server.
type Mode string

const (
	// ModePooled leases sessions from the pool (the default pool options).
	ModePooled Mode = "pooled"
	// ModePerCall dials a fresh session for every call: the regression.
	ModePerCall Mode = "per-call"
)

// Modes lists the modes in report order.
var Modes = []Mode{ModePooled, ModePerCall}

// ModeNames lists the names ParseMode accepts, the default ("both") first:
// the one list its error and the CLI's --mode validation and completion
// are made from.
var ModeNames = []string{"both", string(ModePooled), string(ModePerCall), string(ModeSeeded)}

// ParseMode accepts "pooled", "per-call", "both" or "seeded" (the seeded
// workload, ModeSeeded, which "both" does not include).
func ParseMode(s string) ([]Mode, error) {
	switch s {
	case "both", "":
		return Modes, nil
	case string(ModePooled):
		return []Mode{ModePooled}, nil
	case string(ModePerCall):
		return []Mode{ModePerCall}, nil
	case string(ModeSeeded):
		return []Mode{ModeSeeded}, nil
	}
	return nil, fmt.Errorf("unknown mode %q: expected %s or %s", s, strings.Join(ModeNames[:len(ModeNames)-1], ", "), ModeNames[len(ModeNames)-1])
}

// SpanExecution is the root span of one demo execution.
const SpanExecution = "demo.execution"

// AttrMode names the mode on execution spans.
const AttrMode = "demo.mode"

// Config sizes the workload. Zero fields take the defaults.
type Config struct {
	// Modes to run, in order. Zero: both.
	Modes []Mode
	// Scopes is the number of pools (pool scopes) per mode. Zero: 3.
	Scopes int
	// Executions per scope. Zero: 4.
	Executions int
	// Latency added by the fixture to every request, emulating a network.
	Latency time.Duration
	// Dump receives the OTLP JSON-lines spans of every mode; nil: none.
	Dump io.Writer
	// Dumps receives each mode's spans in a dump of its own (instead of
	// Dump for the modes it names), so the pooled run's dump reads as a
	// pass and the per-call run's as the regression, each on its own.
	Dumps map[Mode]io.Writer
	// Exporter, if set, also receives every span of the run (the CLI's
	// OTLP exporter, so a collector sees the demo live), batched like the
	// dump and, like it, never dropping a span on a full queue. The demo
	// flushes it at the end of each mode but never shuts it down: it spans
	// the modes, and the caller owns it.
	Exporter sdktrace.SpanExporter
	// Progress, if set, is called after each execution.
	Progress func(mode Mode, done, total int)
	// SemconvCallSpans runs the pools with pool.Options.SemconvCallSpans:
	// call spans in the OpenTelemetry MCP conventions' form.
	SemconvCallSpans bool
	// Seeded is the seed, shape and pool settings of ModeSeeded (see
	// seeded.go); the other modes ignore it.
	Seeded Seeded
}

func (c Config) withDefaults() Config {
	if len(c.Modes) == 0 {
		c.Modes = Modes
	}
	if c.Scopes <= 0 {
		c.Scopes = 3
	}
	if c.Executions <= 0 {
		c.Executions = 4
	}
	return c
}

// dumpOf is where mode's spans go: its own dump, else the shared one.
func (c Config) dumpOf(mode Mode) io.Writer {
	if w := c.Dumps[mode]; w != nil {
		return w
	}
	return c.Dump
}

// Result is the outcome of one mode.
type Result struct {
	Mode Mode `json:"mode"`
	// Executions run, and tool calls made.
	Executions int `json:"executions"`
	Calls      int `json:"calls"`
	// SessionsOpened counts initialize requests the server answered.
	SessionsOpened int `json:"sessions_opened"`
	// HitRate is pool hits / acquires over all scopes of the mode.
	HitRate float64 `json:"hit_rate"`
	// MultiSession counts executions whose calls reached the server on
	// more than one Mcp-Session-Id.
	MultiSession int `json:"multi_session_executions"`
	// StateLost counts executions whose second call did not see the
	// selection made by the first.
	StateLost int `json:"state_lost_executions"`
	// Errors counts failed calls.
	Errors int `json:"errors"`
	// Acquires, Hits and MissReasons are the pools' own counters (Stat)
	// summed over the mode's scopes; PrewarmDials the sessions they
	// pre-warmed (seeded mode with a pre-warm only).
	Acquires     int64            `json:"acquires"`
	Hits         int64            `json:"hits"`
	MissReasons  map[string]int64 `json:"miss_reasons,omitempty"`
	PrewarmDials int64            `json:"prewarm_dials,omitempty"`
	// Seed is the seeded workload's seed and Settings its shape and pool
	// settings, defaults filled in; absent in the other modes.
	Seed     *uint64 `json:"seed,omitempty"`
	Settings Seeded  `json:"-"`
	// LateMS is, in the seeded workload, the most any step started or
	// released its leases behind its planned time: past half a slot (the
	// TTL's distance to the planned grid, Seeded), the machine's load, not
	// the settings alone, may have decided a hit or a ttl miss.
	LateMS float64 `json:"late_ms,omitempty"`
	// Wall is the wall time of the mode.
	Wall time.Duration `json:"-"`
	// WallMS is Wall in milliseconds, for JSON.
	WallMS float64 `json:"wall_ms"`
}

// Run starts a fixture on 127.0.0.1, runs the workload of cfg and returns
// one result per mode. The fixture and every pool are closed before it
// returns.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	cfg = cfg.withDefaults()
	srv, err := fixtures.Start(fixtures.Options{Latency: cfg.Latency})
	if err != nil {
		return nil, fmt.Errorf("start fixture: %w", err)
	}
	defer srv.Close()
	var results []Result
	for _, mode := range cfg.Modes {
		r, err := runMode(ctx, srv, mode, cfg)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

// runMode runs every scope of one mode with its own tracer provider, so the
// dump names the mode in service.name.
func runMode(ctx context.Context, srv *fixtures.Server, mode Mode, cfg Config) (res Result, err error) {
	res.Mode = mode
	r, rerr := resource.Merge(resource.Empty(), resource.NewSchemaless(
		semconv.ServiceName("mcptrace-demo-"+string(mode)),
		attribute.String(spans.ResourceServiceInstanceID, "demo-"+string(mode)),
	))
	if rerr != nil {
		return res, fmt.Errorf("demo resource: %w", rerr)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(r)}
	if dump := cfg.dumpOf(mode); dump != nil {
		opts = append(opts, sdktrace.WithBatcher(telemetry.NewFileExporter(dump)))
	}
	if cfg.Exporter != nil {
		// Blocking, as the dump: the demo waits for a slow receiver rather
		// than drop spans, so what it sends equals what it dumps.
		opts = append(opts, sdktrace.WithBatcher(keepOpen{cfg.Exporter}, sdktrace.WithBlocking()))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	defer func() {
		// Bounded: the file exporter writes locally, and an OTLP exporter
		// gives up after its own timeout; a wedged one must not hang the
		// command.
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if serr := tp.Shutdown(ctx); serr != nil && err == nil {
			err = fmt.Errorf("flush %s spans: %w", mode, serr)
		}
	}()
	tracer := tp.Tracer(spans.ScopeName + "/demo")

	if mode == ModeSeeded {
		if err := warmSeeded(ctx, srv); err != nil {
			return res, err
		}
	}
	initsBefore := srv.Initializes()
	start := time.Now()
	if mode == ModeSeeded {
		err = runSeeded(ctx, srv, tp, cfg, &res)
		res.finish(start, srv.Initializes()-initsBefore)
		return res, err
	}
	var acquires, hits int64
	total := cfg.Scopes * cfg.Executions
	done := 0
	for s := range cfg.Scopes {
		popts := pool.Options{ID: fmt.Sprintf("%s-scope-%d", mode, s+1), TracerProvider: tp, SemconvCallSpans: cfg.SemconvCallSpans}
		if mode == ModePerCall {
			popts.MaxIdlePerKey = -1
		}
		p, perr := pool.New(popts)
		if perr != nil {
			return res, perr
		}
		target, terr := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL(), Header: map[string][]string{"X-Demo-Tenant": {fmt.Sprint(s + 1)}}})
		if terr != nil {
			p.Close()
			return res, terr
		}
		for e := range cfg.Executions {
			if cerr := ctx.Err(); cerr != nil {
				p.Close()
				return res, cerr
			}
			runExecution(ctx, tracer, p, target, srv, mode, fmt.Sprintf("ws-%d-%d", s+1, e+1), &res)
			done++
			if cfg.Progress != nil {
				cfg.Progress(mode, done, total)
			}
		}
		st := p.Stat()
		acquires += st.Acquires
		hits += st.Hits
		if cerr := p.Close(); cerr != nil {
			return res, cerr
		}
	}
	res.Acquires, res.Hits = acquires, hits
	res.finish(start, srv.Initializes()-initsBefore)
	return res, nil
}

// finish books the mode's wall time, the sessions the server opened and
// the hit rate.
func (r *Result) finish(start time.Time, sessionsOpened int) {
	r.Wall = time.Since(start)
	r.WallMS = float64(r.Wall.Microseconds()) / 1000
	r.SessionsOpened = sessionsOpened
	if r.Acquires > 0 {
		r.HitRate = float64(r.Hits) / float64(r.Acquires)
	}
}

// shutdownTimeout bounds the flush of one mode's spans.
const shutdownTimeout = 30 * time.Second

// keepOpen passes spans on to an exporter the caller owns: shutting a
// mode's tracer provider down flushes the spans into it but leaves it open
// for the next mode.
type keepOpen struct{ sdktrace.SpanExporter }

// Shutdown does nothing: the caller shuts the exporter down.
func (keepOpen) Shutdown(context.Context) error { return nil }

// runExecution is one agent execution: select a workspace, then read it.
// It runs alone, so the ledger entries it adds are its own.
func runExecution(ctx context.Context, tracer trace.Tracer, p *pool.Pool, target *pool.Target, srv *fixtures.Server, mode Mode, workspace string, res *Result) {
	ctx, span := tracer.Start(ctx, SpanExecution, trace.WithAttributes(attribute.String(AttrMode, string(mode))))
	defer span.End()
	before := len(srv.Requests())
	res.Executions++
	var errs []error
	call := func(name string, args map[string]any) string {
		res.Calls++
		r, err := p.CallTool(ctx, target, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			errs = append(errs, err)
			return ""
		}
		for _, c := range r.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				return t.Text
			}
		}
		return ""
	}
	call(fixtures.ToolSelectWorkspace, map[string]any{"workspace": workspace})
	if got := call(fixtures.ToolGetWorkspace, nil); got != "workspace:"+workspace {
		res.StateLost++
	}
	res.Errors += len(errs)
	if err := errors.Join(errs...); err != nil {
		span.RecordError(err)
	}
	sessions := map[string]bool{}
	for _, r := range srv.Requests()[before:] {
		if r.RPCMethod == "tools/call" && r.SessionID != "" {
			sessions[r.SessionID] = true
		}
	}
	if len(sessions) > 1 {
		res.MultiSession++
	}
}
