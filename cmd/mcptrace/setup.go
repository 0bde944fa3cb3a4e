package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// runSetup is what the flags of analyze, check and diff resolve to: how to
// read and analyze the dumps, and for the gate the configuration file's
// rules and the regression tolerances.
type runSetup struct {
	cfg   rulefmt.Config
	ropts ingest.ReadOptions
	gate  *rulefmt.GateConfig // nil without --config
	tol   rulefmt.Tolerances
	// engine shards (and, for analyze, streams) a run without rules;
	// events asks for the HTML report's events, which one index holds:
	// analyze.ChooseEngine decides from both.
	engine analyze.EngineOptions
	events bool
}

// tolFlags maps each regression tolerance flag to the field it sets.
var tolFlags = map[string]func(dst *rulefmt.Tolerances, src rulefmt.Tolerances){
	"max-hit-rate-drop":        func(d *rulefmt.Tolerances, s rulefmt.Tolerances) { d.HitRateDrop = s.HitRateDrop },
	"max-latency-ratio":        func(d *rulefmt.Tolerances, s rulefmt.Tolerances) { d.LatencyRatio = s.LatencyRatio },
	"latency-min-delta-ms":     func(d *rulefmt.Tolerances, s rulefmt.Tolerances) { d.LatencyMinDeltaMS = s.LatencyMinDeltaMS },
	"allow-excess-misses":      func(d *rulefmt.Tolerances, s rulefmt.Tolerances) { d.ExcessMisses = s.ExcessMisses },
	"allow-unexplained-misses": func(d *rulefmt.Tolerances, s rulefmt.Tolerances) { d.UnexplainedMisses = s.UnexplainedMisses },
	"allow-unexpected":         func(d *rulefmt.Tolerances, s rulefmt.Tolerances) { d.Unexpected = s.Unexpected },
}

// resolveSetup is the one way analyze, check and diff resolve their
// configuration: the dump flags (input format, profile, idle TTL, scope
// attribute, execution root, limits), then the configuration file at
// config ("" for none: its measures, rules, builtin severities and
// regressions), then the tolerance flags of tol (nil for a command without
// them) that fl says were given, which win over the file. Every mistake is
// a usage error (exit 2).
func resolveSetup(fl *pflag.FlagSet, f dumpFlags, config string, tol *rulefmt.Tolerances) (runSetup, error) {
	var s runSetup
	inFormat, err := ingest.ParseFormat(f.inputFormat)
	if err != nil {
		return s, usageErrorf("--input-format: %w", err)
	}
	profile, err := rulefmt.ParseProfile(strings.ToLower(f.profile)) // flag values are case-insensitive, as every enum flag's
	if err != nil {
		return s, usageErrorf("--profile: %w", err)
	}
	if analyze.CheckIdleTTL(f.idleTTL) != nil {
		return s, usageErrorf("--idle-ttl %v: want a positive duration such as 5m", f.idleTTL)
	}
	s.cfg = rulefmt.Config{Profile: profile, ScopeAttr: f.scopeAttr, IdleTTL: f.idleTTL}
	if f.executionRoot != "" {
		sel, err := rulefmt.ParseSelectorString(f.executionRoot)
		if err != nil {
			return s, usageErrorf("--execution-root: %w", err)
		}
		s.cfg.ExecutionRoot = &sel
	}
	s.tol = rulefmt.DefaultTolerances()
	if config != "" {
		gc, err := rulefmt.LoadGateConfig(config)
		if err != nil {
			return s, usageErrorf("--config: %w", err)
		}
		s.gate = gc
		s.cfg.Measures = gc.Measures
		s.tol = gc.Tolerances
		if gc.Vocabulary != nil {
			if fl.Changed("profile") {
				return s, usageErrorf("--profile %s and --config %s's vocabulary: %s: give one", f.profile, config, gc.Vocabulary.Name)
			}
			s.cfg.Vocabulary = gc.Vocabulary
		}
	}
	if tol != nil {
		for name, set := range tolFlags {
			if fl.Changed(name) {
				set(&s.tol, *tol)
			}
		}
		if err := s.tol.Validate(); err != nil {
			return s, usageErrorf("regression tolerances: %w", err)
		}
	}
	s.ropts = ingest.ReadOptions{Format: inFormat, Strict: f.strict}
	return s, f.limits.apply(&s.ropts)
}

// loadDumps is the one way analyze, check and diff read dumps and analyze
// them into the analysis value (the Report, and the observations of rules
// naming up to maxExamples offenders each). analyze.AnalyzeDumps chooses
// the engine (analyze.ChooseEngine: one index for rules or the HTML
// report's events, s.events; else the incremental engine with s.engine)
// and the returned events are nil unless s.events asked; here progress shows on a
// terminal, each phase can be interrupted, each input's warnings go to
// stderr, and a partial input is reported with damaged(spans that could be
// read), which says what the command did with them. A read error is exit
// 2, an interruption exit 130.
func loadDumps(cmd *cobra.Command, s runSetup, rules []rulefmt.Rule, maxExamples int, src ingest.Source, damaged func(spans int) string) (*analyze.ReportEvents, *report.Analysis, error) {
	stderr := cmd.ErrOrStderr()
	ropts := s.ropts
	if ropts.Stdin == nil { // loadSide reads a pipe's dump through its sniff's buffer
		ropts.Stdin = cmd.InOrStdin()
	}
	progress := newProgress(stderr, src)
	ctx := cmd.Context()
	failed := "" // the phase that failed
	run, err := analyze.AnalyzeDumps(ctx, src, s.cfg, analyze.RunOptions{
		Load:    analyze.LoadOptions{Read: ropts, Progress: progress.update, Reread: progress.reread},
		Engine:  s.engine,
		Rules:   rules,
		Observe: analyze.ObserveOptions{MaxExamples: maxExamples},
		Events:  s.events,
		Phase: func(name string, fn func() error) error {
			_, _, err := inPhase(ctx, name, func() (struct{}, struct{}, error) { return struct{}{}, struct{}{}, fn() })
			if err != nil {
				failed = name
			}
			return err
		},
		AfterRead: func(inputs []ingest.Input, err error) {
			progress.done()
			if err == nil {
				warnInputs(stderr, inputs, damaged)
			}
		},
	})
	switch {
	case err == nil:
		return run.Events, run.Analysis, nil
	case failed == phaseMeasures || failed == phaseRules:
		return nil, nil, phaseError(err)
	}
	var re *ingest.ReadError
	var ee *exitError
	switch {
	case backendError(err) != nil:
		return nil, nil, backendError(err)
	case errors.As(err, &ee):
		return nil, nil, ee
	case errors.As(err, &re):
		return nil, nil, &exitError{code: 2, err: re}
	case errors.Is(err, context.Canceled):
		return nil, nil, &exitError{code: 130, err: fmt.Errorf("interrupted: %w", err)}
	}
	return nil, nil, &exitError{code: 2, err: err}
}

// loadSide returns the report of one side of a comparison: a baseline
// JSON as is, or a dump analyzed with s. path is read once: its first
// bytes, which tell a baseline from a dump, are peeked through a buffer
// that the rest is then read through, so a pipe (<(...), /dev/fd/N, - for
// stdin) loses nothing; a regular file holding a dump is left to the
// dump reader, which may read it twice.
func loadSide(cmd *cobra.Command, s runSetup, path string) (*report.Report, error) {
	type sniffed struct {
		rep  *report.Report
		pipe *sideInput // a dump that cannot be opened again: read it through its buffer
	}
	// The phase's goroutine owns what it opens, and hands a pipe over
	// through its result: an interrupted read leaves it to the exit.
	got, _, err := inPhase(cmd.Context(), phaseRead, func() (sniffed, struct{}, error) {
		in, err := openSide(cmd, path)
		if err != nil || in == nil {
			return sniffed{}, struct{}{}, err
		}
		head, _ := in.br.Peek(gate.SniffLen)
		switch {
		case gate.LooksLikeBaseline(head):
			defer in.close()
			rep, err := readBaseline(cmd.Context(), s, path, in)
			return sniffed{rep: rep}, struct{}{}, err
		case !in.regular:
			return sniffed{pipe: in}, struct{}{}, nil
		}
		in.close()
		return sniffed{}, struct{}{}, nil
	})
	switch {
	case err != nil:
		return nil, phaseError(err)
	case got.rep != nil:
		return got.rep, nil
	case got.pipe != nil:
		defer got.pipe.close()
		s.ropts.Stdin, path = got.pipe.br, "-"
	}
	_, a, err := loadDumps(cmd, s, nil, 0, ingest.Files{path}, checkedDamaged)
	if err != nil {
		return nil, err
	}
	return a.Report, nil
}

// sideInput is one side of a comparison, open: buffered for the sniff,
// and whether it is a regular file (which can be opened again).
type sideInput struct {
	br      *bufio.Reader
	size    int64 // a regular file's size
	regular bool
	file    *os.File // nil for standard input
}

// openSide opens path ("-": the command's standard input); nil, nil for a
// path that is not one file (a directory, a glob, a missing file), which
// the dump reader expands or reports.
func openSide(cmd *cobra.Command, path string) (*sideInput, error) {
	if path == "-" {
		return &sideInput{br: bufio.NewReader(cmd.InOrStdin())}, nil
	}
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	return &sideInput{br: bufio.NewReader(f), size: fi.Size(), regular: fi.Mode().IsRegular(), file: f}, nil
}

func (in *sideInput) close() {
	if in != nil && in.file != nil {
		in.file.Close()
	}
}

// baselineShare is the part of --max-memory a baseline's text may take:
// it is held once while decoded into a report of a few times less.
const baselineShare = 4

// readBaseline decodes the baseline in, at most a quarter of the memory
// budget long: a larger one is refused (exit 2, naming the file and the
// limit) before it is read, or as soon as a pipe passes the limit.
func readBaseline(ctx context.Context, s runSetup, path string, in *sideInput) (*report.Report, error) {
	limit := s.ropts.MaxMemory / baselineShare
	tooLarge := func(size string) error {
		return usageErrorf("baseline %s (%s) is larger than %s, a quarter of --max-memory %s, which a baseline may take: give a larger --max-memory",
			path, size, humanBytes(limit), humanBytes(s.ropts.MaxMemory))
	}
	if limit > 0 && in.regular && in.size > limit {
		return nil, tooLarge(humanBytes(in.size))
	}
	r, err := gate.ReadBaselineFrom(ctx, in.br, path, limit)
	switch {
	case errors.Is(err, gate.ErrBaselineTooLarge):
		return nil, tooLarge("read through a pipe")
	case err != nil:
		return nil, &exitError{code: 2, err: err}
	}
	return r, nil
}

// warnInputs writes each input's warnings on stderr and, for an input read
// in part (ingest's Input.Partial), that it is partial with damaged(spans
// that could be read): what the command did with it. Every command that
// reads dumps warns through it.
func warnInputs(stderr io.Writer, inputs []ingest.Input, damaged func(spans int) string) {
	for _, in := range inputs {
		for _, w := range in.Warnings {
			warnf(stderr, "%s", w)
		}
		// An input skipped whole was warned of above: saying it is
		// partial with 0 spans read would warn twice.
		if in.Partial && (in.Spans > 0 || len(in.Warnings) == 0) {
			warnf(stderr, "%s is partial: %s", ingest.QuoteText(in.Path), damaged(in.Spans))
		}
	}
}

// partialInputs says why the inputs were read in part ("" when none was),
// in the words of the analysis report's marker, and whether a backend's
// window is among them (exit 3 unless --allow-partial, as analyze).
func partialInputs(inputs []ingest.Input) (why string, backend bool) {
	for _, in := range inputs {
		if in.Partial && in.Backend != nil {
			return "the backend's window was cut or still being written; rows replay the acquires fetched", true
		}
		if in.Partial {
			why = "an input was damaged or says data is missing; rows replay the acquires that could be read"
		}
	}
	return why, false
}

// checkedDamaged and analyzedDamaged say what check (and diff) and analyze
// did with a damaged input.
func checkedDamaged(n int) string {
	return fmt.Sprintf("checked the %d spans that could be read", n)
}

func analyzedDamaged(n int) string {
	return fmt.Sprintf("analyzed the %d spans that could be read (report marked partial)", n)
}

// replayedDamaged says what whatif did with a damaged input.
func replayedDamaged(n int) string {
	return fmt.Sprintf("replayed the acquires of the %d spans that could be read (output marked partial)", n)
}
