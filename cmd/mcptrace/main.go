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
	"io"
	"os"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/outfile"
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
		Version:       version(),
		// Every command: the old spellings of renamed flags say so, and
		// no output may be an input or another output.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			warnDeprecated(cmd)
			return checkFileClashes(cmd, args)
		},
	}
	root.SetVersionTemplate("mcptrace {{.Version}}\n")
	for _, sub := range subcommands {
		root.AddCommand(sub())
	}
	root.AddCommand(newVersionCmd())
	// A mistyped flag is a usage error (exit 2) that says where help is.
	root.SetFlagErrorFunc(flagError)
	for _, c := range root.Commands() {
		c.SetFlagErrorFunc(flagError)
		if c.Flags().Lookup("cpuprofile") != nil {
			withProfiles(c)
		}
	}
	return root
}

// flagError turns cobra's flag parsing error into a usage error pointing at
// the command's help.
func flagError(cmd *cobra.Command, err error) error {
	return usageErrorf("%w%s; see `%s --help`", err, flagSuggestion(cmd, err), cmd.CommandPath())
}

// flagSuggestion returns " (did you mean --x?)" when err is cobra's
// unknown flag and one of cmd's flags is near it (rulefmt.NearestName, the
// suggestion rules and configurations get too), "" otherwise.
func flagSuggestion(cmd *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if best := rulefmt.NearestName(name, names); best != "" {
		return " (did you mean --" + best + "?)"
	}
	return ""
}

// version is the module version and VCS revision the binary was built from,
// from its build information: "v0.3.0 (rev 16c5e36, 2026-11-30T12:00:00Z)",
// "(devel) (rev 16c5e36+dirty)" for a build from a modified work tree, or
// "(devel)" when the build recorded no VCS information (go run, go test).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	if when != "" {
		rev += ", " + when
	}
	return v + " (rev " + rev + ")"
}

// newVersionCmd is `mcptrace version`, the same as `mcptrace --version`.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the module version and VCS revision mcptrace was built from",
		Long: `version prints the module version and the VCS revision (and whether the work
tree was modified) recorded in the binary's build information, as
mcptrace --version does.`,
		Example: `  mcptrace version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "mcptrace %s\n", version())
			return err
		},
	}
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
	stdout := &checkedWriter{w: os.Stdout}
	root.SetOut(stdout)
	err := root.ExecuteContext(ctx)
	if code, ok := interruptedExit(ctx, os.Stderr); ok {
		outfile.Discard() // a write cut short leaves the old file, and no temporary one
		return code
	}
	err = stdoutFailure(err, stdout.failed())
	if err == nil {
		return 0
	}
	code := 2
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	printError(os.Stderr, code, err)
	return code
}

// printError writes err as the CLI's last word on stderr. Its text is
// made of what the user gave (paths, flags, arguments) and what inputs
// hold, so it is escaped for the terminal (render.TermSafeLines): a
// control byte, a bidi override or invalid UTF-8 shows as an escape;
// the newlines of a multi-line message stay.
func printError(w io.Writer, code int, err error) {
	fmt.Fprintln(w, paint(w, errorColour(code), "mcptrace:"), render.TermSafeLines(err.Error()))
}

// maxQuoted caps user input quoted back in an error message, so a 50 MB
// argument or rule id does not become a 50 MB error.
const maxQuoted = 80

// clipQuoted shortens s for quoting in a message, saying how much was left
// out.
func clipQuoted(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}
