package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcptrace/mcptrace/analyze/gate"
)

// The output convention of every command that writes a report (analyze,
// check, diff, whatif): the report goes to standard output, or with
// -o/--output FILE to FILE, in any --format; -q/--quiet prints nothing but
// errors, the exit status being the outcome. Files other than the report
// have flags of their own named for what they hold (check's --html, --junit,
// --summary; demo's --dump and --dir; dashboards' --dir).
//
// Every file is the user's (files.go): an output that is an input, or
// another output, is refused before any work; each is written whole or
// not at all; a failed write, standard output's included (a full disk, a
// closed pipe), is exit 2, and the files asked for are written before the
// report goes to standard output.

// addOutputFlag registers -o/--output FILE.
func addOutputFlag(fl *pflag.FlagSet, path *string) {
	fl.StringVarP(path, "output", "o", "", "write the report to `FILE` instead of standard output (any --format; - for standard output); FILE is replaced whole or not at all")
}

// addQuietFlag registers -q/--quiet.
func addQuietFlag(fl *pflag.FlagSet, quiet *bool) {
	fl.BoolVarP(quiet, "quiet", "q", false, "print nothing but errors: no report on standard output, no warnings or progress (files asked for are still written; the exit status is the outcome)")
}

// applyQuiet silences cmd when quiet: its standard output and standard
// error are discarded from here on (progress, being drawn only on a
// terminal, goes with them). It returns the standard error as it was, for
// the outputs asked for by name rather than chatter (GitHub annotations).
// Errors are printed by run, on the process's standard error, whatever
// quiet says.
func applyQuiet(cmd *cobra.Command, quiet bool) io.Writer {
	stderr := cmd.ErrOrStderr()
	if quiet {
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
	}
	return stderr
}

// checkOutput fails before any work when -o FILE cannot be written ("" and
// "-" are standard output).
func checkOutput(path string) error {
	if path == "-" {
		return nil
	}
	if err := checkWritable(path); err != nil {
		return usageErrorf("-o/--output: %w", err)
	}
	return nil
}

// writeOutput writes the report with render to path, or to the command's
// standard output for "" and "-". A failed write is exit 2: nothing was
// judged wrong, the report could not be delivered.
func writeOutput(cmd *cobra.Command, path string, render func(io.Writer) error) error {
	if path == "" || path == "-" {
		if err := render(cmd.OutOrStdout()); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("write report: %w", err)}
		}
		return nil
	}
	if err := writeFile(path, render); err != nil {
		return &exitError{code: 2, err: fmt.Errorf("-o/--output: %w", err)}
	}
	return nil
}

// deprecatedUse is the flag annotation that marks a deprecated alias and
// says what to use instead (see addDeprecatedAlias).
const deprecatedUse = "mcptrace-deprecated-use"

// addDeprecatedAlias registers --name (and -shorthand, "" for none) as a
// hidden alias of a string flag already bound to p: the old spelling
// keeps working, and warnDeprecated says on stderr what to use instead.
// (pflag's own MarkDeprecated prints through cobra onto standard output
// when one is set, where it would corrupt a JSON report.)
func addDeprecatedAlias(fl *pflag.FlagSet, p *string, name, shorthand, use string) {
	fl.StringVarP(p, name, shorthand, "", "deprecated: "+use)
	fl.Lookup(name).Hidden = true
	if err := fl.SetAnnotation(name, deprecatedUse, []string{use}); err != nil {
		panic(err) // the flag is registered just above
	}
}

// warnDeprecated warns on cmd's standard error for each deprecated alias
// given on its command line. The root runs it before every command.
func warnDeprecated(cmd *cobra.Command) {
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if use := fl.Annotations[deprecatedUse]; len(use) == 1 {
			spelling := "--" + fl.Name
			if fl.Shorthand != "" {
				spelling = "-" + fl.Shorthand + "/" + spelling
			}
			warnf(cmd.ErrOrStderr(), "%s is deprecated and will be removed: %s", spelling, use[0])
		}
	})
}

// warnf writes a warning on w ("mcptrace: warning: ..."), yellow on a
// terminal unless NO_COLOR is set.
func warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "%s %s\n", paint(w, colourYellow, "mcptrace: warning:"), fmt.Sprintf(format, args...))
}

// ANSI colours of the CLI's diagnostics: red for a failure or an error,
// yellow for an incomplete verdict or a warning.
const (
	colourRed    = "31"
	colourYellow = "33"
)

// colourOn reports whether text written to w may be coloured: w is a
// terminal, NO_COLOR is unset or empty (https://no-color.org) and TERM is
// not "dumb".
func colourOn(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// paint wraps s in the ANSI colour code when w may be coloured, else
// returns it unchanged.
func paint(w io.Writer, code, s string) string {
	if !colourOn(w) {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}

// errorColour is the colour of the final error line for exit code code:
// yellow for an incomplete verdict (3), red for anything else.
func errorColour(code int) string {
	if code == gate.ExitIncomplete {
		return colourYellow
	}
	return colourRed
}
