package pool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/pool/idle"
)

// Defaults of [Options]; a zero field takes these.
const (
	DefaultMaxIdlePerKey   = idle.DefaultMaxIdlePerKey
	DefaultMaxIdle         = idle.DefaultMaxIdle
	DefaultIdleTTL         = idle.DefaultTTL
	DefaultSweepInterval   = idle.DefaultSweepInterval
	DefaultMaxSharedCalls  = 4
	DefaultBreakerCooldown = 30 * time.Second
	DefaultPrewarmTimeout  = 10 * time.Second
	// DefaultMaxResponseBytes is the default Options.MaxResponseBytes,
	// 16 MiB: the Go SDK's own bound on one SSE event (mcp.DefaultMaxEventSize),
	// so no answer the SDK accepts on a stream is refused on a plain JSON
	// body, while a server can make the pool hold at most about twice
	// that per request in flight (the SDK's buffer grows while it reads).
	DefaultMaxResponseBytes = 16 << 20
)

// Options configures a [Pool]. The zero value is a valid configuration: every
// zero field means the documented default.
type Options struct {
	// ID names the pool scope in spans (plugin.mcp.pool.id) and metrics.
	// Zero: a random id, so two pools never look like one scope.
	ID string
	// MaxIdlePerKey is the least number of idle sessions a key may keep.
	// A key keeps more when it needed more: as many as its peak of sessions
	// in use within the last IdleTTL, so a burst's sessions wait for the
	// next burst instead of being closed and dialed again (the global
	// MaxIdle still bounds the total). Zero: 1. Negative: keep no idle
	// session at all, which dials per call (the regression mcptrace exists
	// to catch, useful as a contrast).
	MaxIdlePerKey int
	// FixedIdlePerKey turns the peak rule off: a key keeps at most
	// MaxIdlePerKey idle sessions whatever its bursts (the old behaviour,
	// for comparison).
	FixedIdlePerKey bool
	// MaxInUsePerKey caps the sessions of one key leased (or being dialed)
	// at once, like pgxpool's MaxConns or http.Transport's MaxConnsPerHost:
	// an acquire over the cap waits for a lease of the key to end, bounded
	// by its context and AcquireTimeout. It does not apply to sessionless
	// keys, whose callers share one client (see MaxSharedCalls). Zero: no
	// cap.
	MaxInUsePerKey int
	// AcquireTimeout bounds how long an acquire waits for the in-use cap;
	// past it the acquire fails with [ErrAcquireTimeout]. Zero: only the
	// caller's context bounds the wait.
	AcquireTimeout time.Duration
	// MaxIdle caps idle sessions over all keys; the least recently used is
	// closed first. Zero: 64.
	MaxIdle int
	// IdleTTL is how long an idle session may wait before it is closed
	// instead of reused: one idle for exactly IdleTTL is still reused, one
	// idle longer is closed (miss reason ttl), on acquire and by the sweep
	// alike, as the analyzer's ttl attribution reads an idle gap > TTL.
	// Zero: 5 minutes.
	IdleTTL time.Duration
	// SweepInterval is how often idle sessions past their TTL are closed
	// even when their key is never acquired again. Sweeps run on acquire
	// and on a background timer. Zero: 1 minute. Negative: only on acquire.
	SweepInterval time.Duration
	// HealthCheckAfter makes the pool ping (MCP ping) a session idle for
	// longer than this before reusing it; a failed ping drops it and the
	// acquire dials fresh (miss reason health_check). Zero: never ping.
	HealthCheckAfter time.Duration
	// BreakerThreshold turns on a per-key circuit breaker: after this many
	// consecutive failed dials of a key, acquires that would dial fail fast
	// with [ErrCircuitOpen] for BreakerCooldown, then one trial dial decides
	// (success closes the breaker, failure opens it again). Only dials
	// count; one the caller cancelled does not, one that outlasted the
	// caller's deadline does (a server slower than its callers' deadlines
	// is down for them). Zero: off. A single failure never opens it: 1 is
	// refused, use 2 or more.
	BreakerThreshold int
	// BreakerCooldown is how long an open breaker fails fast before a trial
	// dial. Zero: 30 seconds.
	BreakerCooldown time.Duration
	// ProtocolVersion pins the MCP revision of every handshake unless the
	// target pins its own; a pinned revision is never renegotiated. Zero:
	// negotiate. The first dial of a key tries 2026-07-28 (server/discover)
	// and falls back to initialize at 2025-11-25 when the server refuses it;
	// a server that refuses initialize with -32022 is retried with a
	// revision it lists. The revision found is remembered per key, so the
	// fallback's extra round trip is paid once per key.
	ProtocolVersion string
	// MaxSharedCalls bounds the calls in flight at once on the shared
	// client of a sessionless key (see the package doc); more wait for a
	// slot, bounded by their context, like http.Transport's
	// MaxConnsPerHost. Over HTTP/1.1 each call in flight holds a TCP
	// connection, so this is also the connections the pool keeps to such a
	// server. Zero: 4. Negative: no bound.
	MaxSharedCalls int
	// HTTPTransport carries every request. Zero: a clone of
	// http.DefaultTransport owned (and closed) by the pool, whose idle
	// limits follow the pool's: per server as many idle connections as
	// MaxIdle (or MaxSharedCalls) sessions need, and no global cap of
	// net/http's own, whose eviction of another idle connection can fail a
	// dial under a burst. A transport given here is used as is.
	HTTPTransport http.RoundTripper
	// ClientName and ClientVersion are sent in initialize. Zero: "mcptrace".
	ClientName, ClientVersion string
	// ClientOptions configures the Go SDK client every session is opened
	// with: the handlers of server-initiated requests (elicitation, sampling,
	// roots), the capabilities they advertise, its middleware. The handlers
	// serve every session of every key, concurrently. Zero: the SDK's
	// defaults (no handlers).
	ClientOptions *mcp.ClientOptions
	// StandaloneSSE opens each session's standalone SSE stream (an HTTP GET
	// held open for the session's life), on which a server sends the
	// requests and notifications it does not tie to a call: servers on the
	// TypeScript SDK 1.x send elicitation/create that way unless the tool
	// passes its request id. The stream costs a connection per idle
	// session and dies behind any proxy timeout, so pooled sessions go
	// without it unless a ClientOptions handler must hear such requests.
	// The pool's status watcher sees the stream's GET like any request, so
	// a server that refuses it (HTTP 405) may have the session dropped at
	// release: turn this on only for servers that serve the stream.
	// Zero: no standalone stream (server requests reach the client only
	// on a call's own response stream).
	StandaloneSSE bool
	// StreamResumes bounds how often a call whose SSE response stream the
	// server closed or lost before the answer is resumed without progress:
	// a GET with Last-Event-ID that replays the rest of the same response
	// (the streamable HTTP transport's resumability; the server's retry
	// field sets the wait). It never sends the call again, so the tool does
	// not run twice, and only a stream whose events carried ids is
	// resumed. Zero: the Go SDK's default, 5. Negative: never; the call
	// fails as a transport failure and the session is dropped.
	StreamResumes int
	// MaxResponseBytes caps what the pool reads of one answer of a
	// server, counted after decompression (a gzip bomb stops at the cap):
	// a whole JSON body, an error body, and each event of an SSE stream
	// (from its first byte through the blank line that ends it), so an
	// endless stream of small events still works as long as the call's
	// context allows. An answer one byte over fails the call with
	// [ErrResponseTooLarge], drops the session and is not retried. Zero:
	// DefaultMaxResponseBytes (16 MiB). Negative is refused: every server
	// is untrusted.
	MaxResponseBytes int64
	// FollowSameOriginRedirects follows a redirect whose target is on the
	// endpoint's origin (scheme, host and port), up to 10 hops, as net/http
	// would. Zero: no redirect is followed; the call fails with a
	// [*RedirectError] naming the status. A redirect to another origin is
	// never followed, whatever this says, so the target's credential and
	// secret headers never reach another origin.
	FollowSameOriginRedirects bool
	// OAuthHandler authorizes every request of every session with one of
	// the Go SDK's OAuth clients (auth.NewAuthorizationCodeHandler, or any
	// auth.OAuthHandler): the request carries its token, and a 401 or 403
	// runs its flow once and is sent again (see pool/auth.go); the
	// handler's token replaces a target's own Authorization header. It is
	// one OAuth client for the whole pool, shared by every session: its
	// flow runs for one request at a time, and a token does not enter the
	// key, so use one pool per OAuth identity. Zero: no OAuth.
	OAuthHandler auth.OAuthHandler
	// SemconvCallSpans writes the pool's MCP requests as the OpenTelemetry
	// MCP semantic conventions' client spans (semantic-conventions-genai
	// v0.1.0, docs/gen-ai/mcp.md, status Development), for a backend whose
	// dashboards and queries key on the conventions rather than on the
	// pool's names. Each call span is then named "tools/call <tool>" (not
	// plugin.mcp.client.call_tool), kind CLIENT, with mcp.method.name,
	// gen_ai.tool.name, gen_ai.operation.name "execute_tool",
	// jsonrpc.request.id, mcp.protocol.version, mcp.session.id (absent at
	// 2026-07-28, which has no sessions), server.address, server.port,
	// network.transport "tcp" and network.protocol.name "http", and on
	// failure error.type: the JSON-RPC error code ("-32602", with
	// rpc.response.status_code and the error's message as the status),
	// "tool_error" for an isError result, else the pool's class (transport,
	// session_expired, bad_session, http_status, canceled). Every
	// handshake's initialize and server/discover requests get their own
	// client span under the handshake span, with the session id the server
	// issued or error.type the HTTP status of a refusal ("400").
	//
	// The invoke, acquire and handshake spans and the pool's attributes
	// (cache key, cache_hit, miss_reason, attempt, pool id) stay as they
	// are, so hit rate and miss causes stay measurable from the same dump;
	// the call span also carries plugin.mcp.cache_key and
	// plugin.mcp.pool.id (a call on a held Lease has no invoke or acquire
	// span above it to name its pool scope). Tracing costs a little more:
	// the call's JSON-RPC id is read from the head of each request body
	// (BenchmarkCallTool/traced-semconv). See docs/pool-semconv.md. Zero:
	// the pool's own names.
	SemconvCallSpans bool
	// Prewarm lists targets whose sessions New opens before it returns,
	// so that the first acquire of each is a hit instead of a cold miss:
	// for example the keys this service's previous pool scopes called most
	// recently (mcptrace whatif --prewarm recent:N says whether that pays).
	// New dials them in parallel, so a scope's start waits for the slowest
	// server, not for their sum, bounded by PrewarmTimeout; each session
	// goes idle under the usual limits (the idle TTL runs from the dial, and
	// past MaxIdle the least recently used closes). A target given twice,
	// or with the key of one before it, is dialed once; past MaxIdle
	// distinct keys the rest are not dialed. A failed pre-warm dial never
	// fails New: it is logged, counted in Stat.PrewarmFailures and marked
	// on its handshake span, and the key stays unknown, so its first
	// acquire is the cold miss it would have been. Each dial is a
	// handshake span with no acquire above it, marked plugin.mcp.prewarm
	// (spans.AttrPrewarm), a session opened (Stat.Dials,
	// Stat.PrewarmDials) that no acquire paid for. A pool that keeps no
	// idle session (MaxIdlePerKey negative) dials none. Zero: no pre-warm.
	Prewarm []*Target
	// PrewarmTimeout bounds New's pre-warm dials, all together. Zero: 10
	// seconds.
	PrewarmTimeout time.Duration
	// TracerProvider for the pool's spans. Zero: no spans.
	TracerProvider trace.TracerProvider
	// MeterProvider for the pool's metrics. Zero: no metrics.
	MeterProvider metric.MeterProvider
	// Logger receives debug logs of closes and evictions. Zero: discard.
	Logger *slog.Logger
}

// withDefaults fills defaults into a copy and checks the rest, every
// mistake at once (errors.Join), so a caller fixes them in one round.
func (o Options) withDefaults() (Options, error) {
	o.fillDefaults()
	if err := errors.Join(o.check()...); err != nil {
		return o, fmt.Errorf("pool: invalid options: %w", err)
	}
	return o, nil
}

// fillDefaults sets the defaults of the options that have no invalid
// value: a zero is "the default" (and an empty ID a random one).
func (o *Options) fillDefaults() {
	if o.ID == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		o.ID = "pool-" + hex.EncodeToString(b)
	}
	if o.MaxIdlePerKey == 0 {
		o.MaxIdlePerKey = DefaultMaxIdlePerKey
	}
	if o.MaxIdle == 0 {
		o.MaxIdle = DefaultMaxIdle
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = DefaultSweepInterval
	}
	if o.MaxSharedCalls == 0 {
		o.MaxSharedCalls = DefaultMaxSharedCalls
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.ClientName == "" {
		o.ClientName = "mcptrace"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	o.OAuthHandler = shareOAuth(o.OAuthHandler) // one flow at a time for all sessions (auth.go)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// defaultDuration sets *d to def when zero and refuses a negative one,
// naming the option.
func defaultDuration(d *time.Duration, def time.Duration, name string) error {
	if *d == 0 {
		*d = def
	}
	if *d < 0 {
		//lint:ignore ST1005 the message starts with the option's Go name, Options.X
		return fmt.Errorf("Options.%s is %s: expected a positive duration or 0 for the default %s", name, *d, def)
	}
	return nil
}

// check returns every invalid option, in the order Options declares them,
// and sets the durations' defaults (defaultDuration) on the way.
func (o *Options) check() []error {
	var errs []error
	if o.MaxIdle < 0 {
		errs = append(errs, fmt.Errorf("Options.MaxIdle is %d: expected a positive number or 0 for the default %d", o.MaxIdle, DefaultMaxIdle))
	}
	errs = append(errs, defaultDuration(&o.IdleTTL, DefaultIdleTTL, "IdleTTL"))
	if o.MaxInUsePerKey < 0 {
		errs = append(errs, fmt.Errorf("Options.MaxInUsePerKey is %d: expected a positive cap or 0 for none", o.MaxInUsePerKey))
	}
	if o.AcquireTimeout < 0 {
		errs = append(errs, fmt.Errorf("Options.AcquireTimeout is %s: expected a positive duration or 0 for none", o.AcquireTimeout))
	}
	if o.HealthCheckAfter < 0 {
		errs = append(errs, fmt.Errorf("Options.HealthCheckAfter is %s: expected a positive duration or 0 to never ping", o.HealthCheckAfter))
	}
	switch {
	case o.BreakerThreshold < 0:
		errs = append(errs, fmt.Errorf("Options.BreakerThreshold is %d: expected 0 (off) or 2 or more consecutive dial failures", o.BreakerThreshold))
	case o.BreakerThreshold == 1:
		errs = append(errs, fmt.Errorf("Options.BreakerThreshold is 1: a single failure must never open the breaker; expected 0 (off) or 2 or more"))
	}
	if o.MaxResponseBytes < 0 {
		errs = append(errs, fmt.Errorf("Options.MaxResponseBytes is %d: expected a positive cap or 0 for the default %d (every answer is capped)", o.MaxResponseBytes, DefaultMaxResponseBytes))
	}
	errs = append(errs, defaultDuration(&o.BreakerCooldown, DefaultBreakerCooldown, "BreakerCooldown"),
		defaultDuration(&o.PrewarmTimeout, DefaultPrewarmTimeout, "PrewarmTimeout"))
	for i, t := range o.Prewarm {
		if t == nil {
			errs = append(errs, fmt.Errorf("Options.Prewarm[%d] is nil: expected a target from NewTarget", i))
		}
	}
	//lint:ignore SA1019 the deprecated sampling handlers still work, and the SDK panics on both
	if co := o.ClientOptions; co != nil && co.CreateMessageHandler != nil && co.CreateMessageWithToolsHandler != nil {
		errs = append(errs, fmt.Errorf("Options.ClientOptions sets both CreateMessageHandler and CreateMessageWithToolsHandler: expected at most one (the SDK panics on both)"))
	}
	return errs
}
