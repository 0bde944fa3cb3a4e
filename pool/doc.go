// Package pool leases downstream MCP client sessions so that the tool calls of
// one execution ride one Mcp-Session-Id, and says in OpenTelemetry spans and
// metrics what it did on every acquire.
//
// # Why
//
// A gateway that dials a fresh connection per tool call lands every call in a
// new downstream session, and stateful servers lose their state between calls
// (select a workspace, then read it: the read sees no selection). A pool keeps
// the session, but then someone must prove it hits: every acquire is a span
// with plugin.mcp.cache_hit and, on a miss, the reason.
//
// # Contract
//
//   - A [Target] is an identity: endpoint, transport, sorted headers and query,
//     credential. Its key is an HMAC with a per-process random key, so no
//     secret ever appears in a key, span, metric, log or error, and two
//     identities never share a session.
//   - Leases are exclusive where the server has sessions: an idle session is
//     taken out for one invocation; a concurrent invocation on the same key
//     dials its own session.
//   - A sessionless server (MCP 2026-07-28, or an older one that issues no
//     Mcp-Session-Id) has no session to keep apart: all callers of its key
//     share one client and its HTTP connections, at most
//     Options.MaxSharedCalls calls in flight at once (default 4; more wait
//     their turn). Concurrent first acquires wait for the key's one
//     handshake instead of each making their own.
//   - A key keeps as many idle sessions as it had in use at its recent peak
//     (within the idle TTL; at least Options.MaxIdlePerKey, default 1), so a
//     burst's sessions wait for the next burst instead of being closed and
//     dialed again; all keys together keep at most 64 (least recently used
//     closed first). Idle sessions expire after an idle TTL (default 5
//     minutes), evicted lazily on acquire plus a cheap periodic sweep.
//   - Options.MaxInUsePerKey (off by default) caps a key's sessions in use:
//     more acquires wait, bounded by their context and
//     Options.AcquireTimeout ([ErrAcquireTimeout]); the wait is on the acquire
//     span (plugin.mcp.acquire.wait_s), and Stat and the metrics count
//     pending acquires and timeouts.
//   - A transport failure, an expired or rejected session, a non-2xx HTTP
//     status seen during the lease or a cancellation mid-call drops the
//     session. A tool result with isError true is a clean release.
//   - A lease begins clean: it is judged by its own requests only. What a
//     handshake saw (a refused version probe, such as a TypeScript SDK 1.x
//     server's HTTP 400 to server/discover before it accepts initialize, or
//     a -32022 retry) is on the handshake span and in [Stat], never held
//     against the first lease of the session it opened; a dial that fails is
//     reported by the request that failed it.
//   - Only a session answered 404 (the server forgot it, before running the
//     tool), whether reused or freshly dialed, is redialed, once per
//     invocation, transparently. Nothing else is retried, so a
//     side-effectful tool never runs twice. On a sessionless server a 404
//     means an unknown method, never an expired session.
//   - Health checks (Options.HealthCheckAfter) ping only sessions with an id;
//     a sessionless client is reused as is, since 2026-07-28 has no ping and a
//     dead HTTP connection is re-established underneath.
//   - An optional per-key circuit breaker (Options.BreakerThreshold, off by
//     default) fails acquires fast with [ErrCircuitOpen] after consecutive
//     failed dials, and lets one trial dial through after a cooldown.
//   - Every server is untrusted. Each answer is capped at
//     Options.MaxResponseBytes (16 MiB; per event on an SSE stream; counted
//     decoded) and fails with [ErrResponseTooLarge] past it; no redirect is
//     followed unless Options.FollowSameOriginRedirects asks, and none to
//     another origin ever ([*RedirectError]), so credentials stay with their
//     origin; a session id outside visible ASCII, over 1024 bytes or holding
//     a secret is refused ([ErrSessionIDRefused]); server text is redacted,
//     escaped and bounded before it reaches an error, span or log; a
//     Retry-After saturates at 24 hours. A server that breaks a bound has
//     its session dropped and the call is not retried.
//
// # Protocol revisions
//
// Unless a revision is pinned (Options.ProtocolVersion or
// TargetConfig.ProtocolVersion), a dial negotiates: the first dial of a key
// tries 2026-07-28 (server/discover) and falls back to initialize at
// 2025-11-25 when the server does not speak it; a server that refuses
// initialize with JSON-RPC -32022 is retried once with the newest revision
// its error lists. The revision found is remembered per key, so the fallback's
// extra round trip is paid once per key, and renegotiated the same way if
// the server changes. Every acquire, handshake and call span carries
// mcp.protocol.version; the handshake span says how the revision was chosen
// (plugin.mcp.negotiation: pinned, remembered, probed, fallback), how many
// HTTP requests it took, and one event per request. [Stat] counts handshakes
// by revision, the revision each key speaks, handshake requests and
// fallbacks.
//
// # What a hit means
//
// On a server with sessions, a hit is an acquire that reused an idle session
// (the same Mcp-Session-Id, so the server's state is still there). On a
// sessionless server, a hit is an acquire that reused the key's client
// without a handshake of its own: no server/discover, warm HTTP
// connections; such acquire spans carry plugin.mcp.sessionless=true, and
// session rules (one session per execution) do not apply to them. A miss, on
// either, is an acquire that made a handshake.
//
// # Use
//
// [Pool.CallTool] is one invocation: acquire, call, release. An execution
// whose calls depend on each other (select a workspace, then read it) runs
// them on a [Pool.Execution], or passes [WithExecution]'s context to
// [Pool.CallTool]: its calls to a target ride one session until
// [Execution.Close], with the same drop and redial rules, and no lease to
// manage. [Pool.Acquire] hands out a [Lease] for callers that need requests
// the pool does not wrap; they must call [Lease.Release] exactly once. [Pool.Stat] is a snapshot of the
// counters, like pgxpool's Stat. [Pool.Close] closes idle sessions and makes
// later acquires fail with [ErrPoolClosed]. Options.SemconvCallSpans writes
// call spans (and each handshake's initialize or server/discover request)
// the way the OpenTelemetry MCP conventions do ("tools/call <tool>").
package pool
