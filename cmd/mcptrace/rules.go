package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

func init() { subcommands = append(subcommands, newRulesCmd) }

// rulesFlags are the flags of `mcptrace rules`.
type rulesFlags struct {
	explain       string
	builtin       bool
	executionRoot string
}

// newRulesCmd is `mcptrace rules`: validate and explain rule files.
func newRulesCmd() *cobra.Command {
	var f rulesFlags
	cmd := &cobra.Command{
		Use:   "rules [--explain FILE | --builtin | FILE]",
		Short: "Validate a rule file, explain its rules in words, or list the built-ins",
		Long: `rules reads the rules: list of a configuration file (the same mcptrace.yaml
as analyze's measures: and vocabulary:) and reports every mistake of it in one
run, each with its line and column (exit 2): YAML syntax, unknown keys,
measures and operators (with every valid name and the nearest one), bad
selectors, repeated ids, and a vocabulary: block that cannot be read. The
first 20 are printed, then how many more. An empty file is a mistake here as
in analyze, check and the Collector connector: for the built-in rules, give
no configuration file.

  mcptrace rules FILE            validates FILE and lists its rule ids
  mcptrace rules --explain FILE  prints each rule in words
  mcptrace rules --builtin       prints the built-in rules check applies
                                 when no --config is given

The file format is documented in docs/ci.md; docs/mcptrace-rules.schema.json
is a JSON Schema editors can use to complete and check it.`,
		Example: `  # What does this file check?
  mcptrace rules --explain mcptrace.yaml

  # The built-in invariants, with executions rooted at a span
  mcptrace rules --builtin --execution-root executor.execute`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRules(cmd, f, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.explain, "explain", "", "print each rule of FILE in words")
	fl.BoolVar(&f.builtin, "builtin", false, "print the built-in rules")
	fl.StringVar(&f.executionRoot, "execution-root", "", "with --builtin: selector of an execution's root span")
	return cmd
}

func runRules(cmd *cobra.Command, f rulesFlags, args []string) error {
	file := f.explain
	switch {
	case f.builtin && (file != "" || len(args) > 0):
		return usageErrorf("give --builtin or a FILE, not both")
	case file != "" && len(args) > 0:
		return usageErrorf("give the file once: --explain FILE")
	case !f.builtin && file == "" && len(args) == 0:
		return usageErrorf("rules needs a FILE, --explain FILE or --builtin")
	case file == "" && len(args) == 1:
		file = args[0]
	}
	out := cmd.OutOrStdout()
	if f.builtin {
		var cfg rulefmt.Config
		if f.executionRoot != "" {
			sel, err := rulefmt.ParseSelectorString(f.executionRoot)
			if err != nil {
				return usageErrorf("--execution-root: %w", err)
			}
			cfg.ExecutionRoot = &sel
		}
		for i, r := range rulefmt.BuiltinRules(cfg) {
			if i > 0 {
				fmt.Fprintln(out)
			}
			fmt.Fprint(out, gate.ExplainRule(&r))
		}
		return nil
	}
	gc, err := rulefmt.LoadGateConfig(file)
	if err != nil {
		return usageErrorf("%w", err)
	}
	warnRules(cmd.ErrOrStderr(), gc)
	if gc.Vocabulary != nil && f.explain == "" {
		fmt.Fprintf(out, "%s: vocabulary %s OK\n", file, gc.Vocabulary.Name)
	}
	if len(gc.Rules) == 0 {
		if gc.Vocabulary != nil && f.explain == "" {
			return nil // a file that only describes a writer
		}
		return usageErrorf("%s: no rules: list (check would apply the built-in rules)", file)
	}
	if f.explain == "" {
		fmt.Fprintf(out, "%s: %d rule(s) OK\n", file, len(gc.Rules))
		for _, r := range gc.Rules {
			fmt.Fprintf(out, "  %s (%s): %s\n", r.ID, r.Severity, gate.ExpectedText(&r))
		}
		return nil
	}
	for i, r := range gc.Rules {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprint(out, gate.ExplainRule(&r))
	}
	return nil
}

// warnRules prints a configuration file's warnings (rulefmt.LintRules: a
// rule that runs but does not mean what it reads) on w, escaped for the
// terminal; nothing for no file.
func warnRules(w io.Writer, gc *rulefmt.GateConfig) {
	if gc == nil {
		return
	}
	for _, x := range gc.Warnings {
		warnf(w, "%s", render.TermSafeLines(x.String()))
	}
}
