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
//   - Leases are exclusive: an idle session is taken out for one invocation; a
//     concurrent invocation on the same key dials its own session.
//   - Idle sessions are capped per key (default 1) and globally (default 64,
//     least recently used closed first), and expire after an idle TTL (default
//     5 minutes), evicted lazily on acquire plus a cheap periodic sweep.
//   - A transport failure, an expired or rejected session, a non-2xx HTTP
//     status or a cancellation mid-call drops the session. A tool result with
//     isError true is a clean release.
//   - Only a reused session answered 404 (the server forgot it, before running
//     the tool) is redialed, once, transparently. Nothing else is retried, so a
//     side-effectful tool never runs twice.
//   - An optional per-key circuit breaker (Options.BreakerThreshold, off by
//     default) fails acquires fast with [ErrCircuitOpen] after consecutive
//     failed dials, and lets one trial dial through after a cooldown.
//
// # Use
//
// [Pool.CallTool] is one invocation: acquire, call, release. [Pool.Acquire]
// hands out a [Lease] for callers that need several requests on one session;
// they must call [Lease.Release] exactly once. [Pool.Stat] is a snapshot of the
// counters, like pgxpool's Stat. [Pool.Close] closes idle sessions and makes
// later acquires fail with [ErrPoolClosed].
package pool
