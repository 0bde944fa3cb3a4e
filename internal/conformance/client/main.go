// Package client is mcptrace's pool as the client of the official MCP
// conformance runner (@modelcontextprotocol/conformance, pinned in
// peers/package.json). The runner starts a scenario's server, then runs its
// client command with the server's URL as the last argument and the
// scenario's name in MCP_CONFORMANCE_SCENARIO (its revision in
// MCP_CONFORMANCE_PROTOCOL_VERSION, its extra data as JSON in
// MCP_CONFORMANCE_CONTEXT), and judges what went over the wire. [Main] is
// that command's body; internal/conformance's test binary is the command
// (it runs Main when the runner starts it).
//
// It is wiring, not a second MCP client: every scenario opens a pool.Pool
// with the options it needs (an elicitation handler, one of the Go SDK's
// OAuth handlers) and reaches the server only through the pool's verbs
// (CallTool, Execution, Acquire and the leased session), so what the runner
// judges is what a caller of the pool gets.
//
// The target is pinned to the revision the runner names, as the runner asks
// of its clients. With [NegotiateEnv] set it is not, and the
// pool negotiates as its defaults do (server/discover first, initialize at
// 2025-11-25 when the server refuses it).
package client

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcptrace/mcptrace/pool"
)

// scenario is one conformance scenario: the pool options it needs and what
// the client does through the pool.
type scenario struct {
	// options returns the pool options (Options.ProtocolVersion and
	// ClientName are set by run); nil means the defaults.
	options func(env *env) (pool.Options, error)
	// run drives the server through p; t is the scenario server.
	run func(ctx context.Context, p *pool.Pool, t *pool.Target, env *env) error
}

// env is what the runner told this process.
type env struct {
	name      string         // MCP_CONFORMANCE_SCENARIO
	serverURL string         // the last argument
	version   string         // MCP_CONFORMANCE_PROTOCOL_VERSION
	context   map[string]any // MCP_CONFORMANCE_CONTEXT, decoded
}

// scenarios maps every scenario this client plays to its handler; see
// core.go and oauth.go.
var scenarios = map[string]scenario{}

// timeout bounds one scenario; the runner's own default is 30 s.
const timeout = 25 * time.Second

// Main plays the scenario the runner's environment names against the
// server URL that ends args, and returns the process's exit code: 0 when
// the scenario ran to its end, 1 (with the reason on stderr) when not.
func Main(args []string) int {
	e, err := readEnv(args)
	if err != nil {
		logger.Print(err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err = run(ctx, e)
	cancel()
	if err != nil {
		logger.Printf("scenario %q: %v", e.name, err)
		return 1
	}
	return 0
}

// NegotiateEnv, set, leaves the target unpinned: the pool negotiates the
// revision as its defaults do instead of taking the runner's.
const NegotiateEnv = "MCPTRACE_CONFORMANCE_NEGOTIATE"

// logger writes to the runner's record of the client's stderr: why a
// scenario failed, and what it tolerated (a call the runner expects the
// client to refuse).
var logger = log.New(os.Stderr, "conformance client: ", 0)

// readEnv reads the runner's arguments and environment.
func readEnv(args []string) (*env, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("usage: client <server-url> (the conformance runner appends it)")
	}
	e := &env{
		name:      os.Getenv("MCP_CONFORMANCE_SCENARIO"),
		serverURL: args[len(args)-1],
		version:   os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"),
	}
	if e.name == "" {
		return nil, fmt.Errorf("MCP_CONFORMANCE_SCENARIO is not set: expected the runner to name the scenario")
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &e.context); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT is not a JSON object: %w", err)
		}
	}
	return e, nil
}

// run opens the scenario's pool, plays the scenario and closes the pool
// (which sends DELETE for the sessions it kept).
func run(ctx context.Context, e *env) error {
	sc, ok := scenarios[e.name]
	if !ok {
		return fmt.Errorf("unknown scenario; this client plays: %s", strings.Join(names(), ", "))
	}
	var opts pool.Options
	if sc.options != nil {
		var err error
		if opts, err = sc.options(e); err != nil {
			return err
		}
	}
	opts.ClientName, opts.ClientVersion = "mcptrace-conformance", "1.0.0"
	p, err := pool.New(opts)
	if err != nil {
		return err
	}
	pin := e.version
	if os.Getenv(NegotiateEnv) != "" {
		pin = "" // the pool's default: probe 2026-07-28, fall back
	}
	t, err := pool.NewTarget(pool.TargetConfig{Endpoint: e.serverURL, ProtocolVersion: pin})
	if err != nil {
		_ = p.Close()
		return err
	}
	err = sc.run(ctx, p, t, e)
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return err
}

// names lists the scenarios this client plays, sorted.
func names() []string {
	out := make([]string, 0, len(scenarios))
	for n := range scenarios {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
