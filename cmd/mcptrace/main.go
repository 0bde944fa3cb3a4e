// Command mcptrace analyzes MCP connection-pool traces, gates CI on their
// invariants, runs a pooled demo against an embedded MCP fixture and serves
// fixtures for tests in any language.
//
// The command only wires packages together: the logic lives in spans, pool,
// fixtures and analyze.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// subcommands holds the constructors of the subcommands; each command's file
// registers its own in an init function so commands stay independent.
var subcommands []func() *cobra.Command

// exitError carries a specific exit code out of a command (2 for bad input or
// usage; later commands use 1 and 3 for verdicts).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf returns an error that exits with code 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcptrace",
		Short: "Prove that an MCP connection pool works, from its traces",
		Long: `mcptrace is a toolkit for MCP connection pooling.

It runs an instrumented pool of downstream MCP client sessions, serves
session-stateful MCP fixtures, and reads exported OpenTelemetry traces to tell
whether the pool hits, whether its misses are only the unavoidable cold starts,
and whether every execution stayed on one downstream session.`,
		Example: `  # Run the pooled and per-call workloads against an embedded fixture
  mcptrace demo

  # Serve a session-stateful fixture for tests in another language
  mcptrace fixture serve --scenario stateful`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, sub := range subcommands {
		root.AddCommand(sub())
	}
	return root
}

func main() {
	ctx, stop := signalContext()
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

// run executes the CLI with args and returns the process exit code.
func run(ctx context.Context, args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if code, ok := interruptedExit(ctx, os.Stderr); ok {
		return code
	}
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "mcptrace:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 2
}
