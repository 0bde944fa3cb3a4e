package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcptrace/mcptrace/fixtures"
)

func init() { subcommands = append(subcommands, newFixtureCmd) }

// newFixtureCmd is `mcptrace fixture`: MCP fixture servers for tests and
// demos written in any language.
func newFixtureCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fixture",
		Short: "Serve session-stateful MCP fixture servers for tests in any language",
		Long: `fixture serves real MCP servers (the official Go SDK over streamable HTTP,
on 127.0.0.1 only) with a request ledger and fault injection, so a client or
gateway written in any language can be tested against known behaviour: per-
session state, a side-effect counter, a slow tool, forgotten and expired
sessions, 400 instead of 404 for unknown sessions, injected 429/503 answers
and added latency.

Each scenario is a preset; "fixture list" names them. The fixture's control
API (ledger, counters and faults over HTTP) lives on the same listener under
/_fixture/; see "fixture serve --help".`,
		Example: `  # List the scenarios
  mcptrace fixture list

  # Serve the default stateful fixture in the background, read its URL
  mcptrace fixture serve --url-file fixture.url & pid=$!
  until [ -s fixture.url ]; do sleep 0.1; done; url=$(cat fixture.url)
  # ... run the tests against "$url", then stop it
  kill $pid`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown fixture command %q: want serve or list", args[0])
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newFixtureServeCmd(), newFixtureListCmd())
	return cmd
}

// fixtureServeFlags are the flags of `fixture serve`.
type fixtureServeFlags struct {
	scenario string
	addr     string
	latency  time.Duration
	urlFile  string
}

func newFixtureServeCmd() *cobra.Command {
	var f fixtureServeFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve one fixture scenario until interrupted",
		Long: `serve starts the named fixture scenario on a loopback address, prints its MCP
URL as the first line of standard output, and serves until SIGINT or SIGTERM.

A script that starts it in the background reads the URL from --url-file FILE,
written (whole, by a rename) once the server listens. Do not read the URL
with $(mcptrace fixture serve | head -n1): the command substitution waits for
the server, which never exits on its own.

Tools: select_workspace {workspace?}, get_workspace, side_effect,
slow {ms}, echo {text}, fail.

The control API on the same host and port:
  GET  /_fixture/requests                        the request ledger (JSON)
  GET  /_fixture/stats                           side_effects, initializes, peak_in_flight, session_ids
  POST /_fixture/reset                           empty the ledger
  POST /_fixture/forget                          forget every session (as after a restart)
  POST /_fixture/expire?session=ID               expire one session
  POST /_fixture/reject?status=N&retry_after=2s  answer the next session request with N
  POST /_fixture/latency?d=20ms                  change the added latency`,
		Example: `  # A stateful fixture on a random port
  mcptrace fixture serve

  # In the background from a script: wait for the URL file, stop it with kill
  mcptrace fixture serve --url-file fixture.url & pid=$!
  until [ -s fixture.url ]; do sleep 0.1; done; url=$(cat fixture.url)
  kill $pid

  # A server that answers 400 to unknown sessions, on a fixed port
  mcptrace fixture serve --scenario bad-request --addr 127.0.0.1:8931

  # Expire a session from a shell
  curl -X POST "http://127.0.0.1:8931/_fixture/expire?session=$SID"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runFixtureServe(cmd, f)
		},
	}
	cmd.Flags().StringVar(&f.scenario, "scenario", fixtures.DefaultScenario,
		"scenario to serve: "+strings.Join(fixtures.ScenarioNames(), ", "))
	cmd.Flags().StringVar(&f.addr, "addr", fixtures.DefaultAddr, "listen address; must be loopback")
	cmd.Flags().StringVar(&f.urlFile, "url-file", "", "also write the MCP URL to FILE once listening (for scripts that run serve in the background)")
	cmd.Flags().DurationVar(&f.latency, "latency", 0,
		fmt.Sprintf("delay added before every MCP request (default: the scenario's, %v for slow-network)", fixtures.SlowNetworkLatency))
	registerEnums(cmd, enumFlag{"scenario", fixtures.ScenarioNames()}) // validated by fixtures.LookupScenario, from the same list
	return cmd
}

// runFixtureServe starts the fixture, prints its URL and serves until the
// command's context is done.
func runFixtureServe(cmd *cobra.Command, f fixtureServeFlags) error {
	sc, err := fixtures.LookupScenario(f.scenario)
	if err != nil {
		return usageErrorf("--scenario: %v", err)
	}
	opts := sc.Options
	opts.Addr = f.addr
	opts.Control = true
	if cmd.Flags().Changed("latency") {
		if f.latency < 0 {
			return usageErrorf("--latency %v: want a duration >= 0 such as 20ms", f.latency)
		}
		opts.Latency = f.latency
	}
	if err := checkLoopbackAddr(f.addr); err != nil {
		return usageErrorf("--addr %q: %v", f.addr, err)
	}
	if err := checkWritable(f.urlFile); err != nil {
		return usageErrorf("--url-file: %w", err)
	}
	srv, err := fixtures.Start(opts)
	if errors.Is(err, fixtures.ErrNonLoopback) || errors.Is(err, fixtures.ErrInvalidOptions) {
		// The latency was checked above, so a bad option is the address.
		return usageErrorf("--addr %q: %v", f.addr, err)
	}
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("start fixture %s: %w", sc.Name, err)}
	}
	if _, err := fmt.Fprintln(cmd.OutOrStdout(), srv.URL()); err != nil {
		_ = srv.Close()
		return &exitError{code: 2, err: fmt.Errorf("print fixture URL: %w", err)}
	}
	if f.urlFile != "" {
		if err := writeFile(f.urlFile, func(w io.Writer) error { _, err := io.WriteString(w, srv.URL()+"\n"); return err }); err != nil {
			_ = srv.Close()
			return &exitError{code: 2, err: fmt.Errorf("--url-file: %w", err)}
		}
		defer removeWritten(f.urlFile)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "mcptrace: serving fixture %q at %s (control API under %s); interrupt to stop\n",
		sc.Name, srv.URL(), strings.TrimSuffix(srv.URL(), fixtures.MCPPath)+fixtures.ControlPath)

	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("stop fixture: %w", err)}
	}
	return nil
}

// checkLoopbackAddr checks a listen address before anything starts: a
// host:port with a port in 0..65535 (0 picks a free one) and a loopback or
// empty host; the fixture refuses anything else anyway, but a usage error is
// exit 2, not a failed start.
func checkLoopbackAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port such as 127.0.0.1:8931: %w", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q: want a number from 0 to 65535", clipQuoted(port))
	}
	if host == "" || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("host %q: want a loopback address such as 127.0.0.1", clipQuoted(host))
	}
	return nil
}

func newFixtureListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the fixture scenarios",
		Long: `list prints every scenario "fixture serve --scenario" accepts, with a
one-line description; the first is the default.`,
		Example: `  mcptrace fixture list`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SCENARIO\tDESCRIPTION")
			for _, sc := range fixtures.Scenarios() {
				name := sc.Name
				if name == fixtures.DefaultScenario {
					name += " (default)"
				}
				fmt.Fprintf(tw, "%s\t%s\n", name, sc.Description)
			}
			if err := tw.Flush(); err != nil {
				return &exitError{code: 2, err: fmt.Errorf("write scenario list: %w", err)}
			}
			return nil
		},
	}
}

// removeWritten removes the regular file at path, written by this run;
// anything else there (a device or a FIFO written through, /dev/stdout's
// link) is the user's and stays.
func removeWritten(path string) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		_ = os.Remove(path)
	}
}
