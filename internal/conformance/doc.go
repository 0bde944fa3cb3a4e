// Package conformance runs the official MCP conformance runner
// (@modelcontextprotocol/conformance, pinned in peers/package.json) with
// mcptrace's pool as the client under test, through every client scenario
// the runner ships. The client is package ./client, wiring of pool.Pool
// (CallTool, Execution, Acquire and the leased session, with the options a
// scenario needs), never a second MCP implementation; the test binary
// itself is the command the runner starts (TestMain hands it to
// client.Main), so the client is built with the test, under -race when the
// test is.
//
// The test (conformance_test.go) holds one table row per client scenario
// of the pinned runner, and fails when the runner lists a scenario the
// table does not name, or the table names one the runner does not list.
// A row is run (the runner's exit code 0, and every check of its
// checks.json SUCCESS or INFO, any other status only where the row says
// why), a known failure of the Go SDK the pool is built on (run under the
// runner's expected-failures baseline, so the day it passes the test turns
// red), or skipped with the reason the scenario cannot apply to a pool.
// Each runnable scenario runs at the revision the runner picks for it and,
// when it also applies to 2026-07-28, at 2026-07-28 too.
//
// It needs Node 22 and the runner: `cd peers && npm ci`. Without them the
// test skips, naming that step; under CI=true it fails.
package conformance
