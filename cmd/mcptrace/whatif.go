package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/whatif"
	"github.com/mcptrace/mcptrace/internal/demo"
)

func init() { subcommands = append(subcommands, newWhatifCmd) }

// whatifFlags are the settings lists to replay and the recorded settings,
// and the dump flags analyze and check read dumps with (dumpFlags, less
// the two that mean nothing here: --idle-ttl, which is whatif's list of
// TTLs to replay, the read's TTL being the recorded one, and
// --execution-root, since the replay reads no execution).
type whatifFlags struct {
	dumpFlags
	config                  string
	ttls, perKeys, prewarms []string
	maxIdles                []int
	recTTL                  time.Duration
	recPerKey, recPrewarm   string
	recMaxIdle              int
	format, output          string
	quiet                   bool
	allowPartial            bool
}

// whatifFormat is whatif's --format: one list validates it and completes it.
var whatifFormat = enumFlag{"format", []string{"table", "json", "markdown", formatHTML}}

func newWhatifCmd() *cobra.Command {
	var f whatifFlags
	cmd := &cobra.Command{
		Use:   "whatif [flags] DUMP...",
		Short: "Replay a dump's acquires under other pool settings and say what each would have cost",
		Long: `whatif replays every (pool scope, key) pair's acquires, in time order, through a
model of the pool (exclusive leases, per-key idle limit fixed or peak-following,
global idle cap with LRU, idle TTL, redial, failure drops) under every
combination of the settings given, and reports per row: acquires, hits, hit
rate, misses by cause, sessions opened, peak sessions, idle session-seconds held
(the servers' cost), pre-warm handshakes and how many went unused.

The row at the recorded settings is labelled "as recorded": it reproduces the
dump's own hits and misses by cause when the pool behaved as the model. Its
settings are those every pool scope recorded on its acquire spans
(plugin.mcp.pool.*), labelled recorded; where the dump records none, or its
scopes recorded different ones (said on stderr), or a --recorded-* flag is
given (it overrides), the --recorded-* values are used and labelled assumed.
The as-recorded row replays the pre-warm dials the dump holds; --recorded-prewarm assumes a policy instead. ` + whatif.OutOfScope + `.

Where the spans cannot tell the dump's keys apart (acquire spans without a
cache key; keys that may differ only in escaped lone surrogates), as
'mcptrace analyze' reads its writer, the replay merges them: every figure
but the acquires is said not measurable, with why, in every --format, and
no best setting is named.

Under the rows, the best setting per cost: for each of sessions opened, peak
sessions, idle session-seconds and unused pre-warm handshakes (waste), the
highest hit rate among the rows costing at most what the as-recorded row
costs (ties: the lower cost, then the as-recorded row, then the table's
order). --format markdown writes the table, those lines and the out-of-scope
sentence for a pull request; --format html -o FILE a self-contained page with
the table and charts of hit rate and idle session-seconds against idle TTL,
one line per idle-per-key (and pre-warm) setting.

It reads dumps as analyze does, with analyze's dump flags (--profile,
--scope-attr, --input-format, --strict, --max-memory, and --config for its
vocabulary: block); its --idle-ttl is the list of TTLs to replay (the read
attributes the dump's own causes at the recorded TTL).

The settings lists multiply: --idle-ttl, --idle-per-key, --max-idle and
--prewarm make one row per combination, each a replay of the whole dump. A
grid of more than ` + gridCap + ` combinations is refused (exit 2) before
the dump is read: narrow the longest list, or split the run. So is, once
the dump is read and before any replay, a grid whose combinations times
the dump's acquires pass ` + workCap + ` acquire replays. Ctrl-C stops a
replay within a fraction of a second (exit 130).

A damaged input (or one saying data is missing) is replayed up to the
damage with a warning, every --format marked partial; a backend's window
cut or still being written too, and exits 3 unless --allow-partial. A dump
with no acquire exits 3; bad input or usage exits 2.`,
		Example: `  mcptrace whatif --idle-ttl 30s,5m,15m --idle-per-key 1,2,peak dump.jsonl
  mcptrace whatif --idle-ttl 1m,5m --jaeger http://127.0.0.1:16686 --service gateway --since 168h
  mcptrace whatif --prewarm none,recent:1 --format json dump.jsonl
  mcptrace whatif --idle-ttl 30s,5m,15m --idle-per-key 1,2,peak --format markdown dump.jsonl
  mcptrace whatif --idle-ttl 30s,5m,15m --idle-per-key 1,2,peak --format html -o whatif.html dump.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && f.source.jaeger == "" {
				return usageErrorf("whatif needs at least one DUMP (a file, a directory, a glob or - for stdin), or --jaeger URL")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runWhatif(cmd, args, f) },
	}
	fl := cmd.Flags()
	shared := pflag.NewFlagSet("dump", pflag.ContinueOnError)
	addDumpFlags(shared, &f.dumpFlags, "replaying")
	shared.VisitAll(func(d *pflag.Flag) {
		if !whatifOwnFlags[d.Name] {
			fl.AddFlag(d)
		}
	})
	addSourceFlags(fl, &f.source)
	fl.BoolVar(&f.allowPartial, "allow-partial", false, "exit 0 when a backend's window was cut by the page size or still being written (default: exit 3, the rows written and marked partial)")
	fl.StringVar(&f.config, "config", "", "configuration file whose vocabulary: block says how to read the dumps, as for analyze (its rules are not used)")
	fl.StringSliceVar(&f.ttls, "idle-ttl", []string{"5m"}, "idle TTLs to replay")
	fl.StringSliceVar(&f.perKeys, "idle-per-key", []string{"peak"}, "idle sessions per key: N (fixed) or peak")
	fl.IntSliceVar(&f.maxIdles, "max-idle", []int{64}, "global idle caps to replay")
	fl.StringSliceVar(&f.prewarms, "prewarm", []string{"none"}, "pre-warm: none or recent:N")
	fl.DurationVar(&f.recTTL, "recorded-idle-ttl", 5*time.Minute, "the recorded run's idle TTL where the dump records none (given: overrides it, assumed)")
	fl.StringVar(&f.recPerKey, "recorded-idle-per-key", "peak", "the recorded run's idle per key where the dump records none (given: overrides it, assumed)")
	fl.IntVar(&f.recMaxIdle, "recorded-max-idle", 64, "the recorded run's global idle cap where the dump records none (given: overrides it, assumed)")
	fl.StringVar(&f.recPrewarm, "recorded-prewarm", "none", "the recorded run's pre-warm policy, replacing the pre-warm dials the dump holds (given: assumed)")
	fl.StringVar(&f.format, "format", "table", "output: "+whatifFormat.list()+" (markdown for a pull request, html a self-contained page with the charts; json: schema mcptrace.whatif/v1)")
	addOutputFlag(fl, &f.output)
	addQuietFlag(fl, &f.quiet)
	registerEnums(cmd, whatifFormat, inputFormatEnum, profileEnum)
	return cmd
}

// gridCap is whatif.MaxGrid as --help writes it.
var gridCap = strconv.Itoa(whatif.MaxGrid)

// workCap is whatif.MaxReplayedAcquires as --help writes it.
var workCap = strconv.Itoa(whatif.MaxReplayedAcquires)

// whatifOwnFlags are the dump flags whatif does not take from analyze:
// --idle-ttl is its list of TTLs to replay, and --execution-root selects
// executions, which the replay does not read.
var whatifOwnFlags = map[string]bool{"idle-ttl": true, "execution-root": true}

// parseSetting builds one Settings from the flags' words.
func parseSetting(ttl time.Duration, perKey string, maxIdle int, prewarm string) (whatif.Settings, error) {
	s := whatif.Settings{IdleTTL: ttl, MaxIdle: maxIdle}
	if analyze.CheckIdleTTL(ttl) != nil || maxIdle <= 0 {
		return s, fmt.Errorf("idle TTL %s, max idle %d: expected positive", ttl, maxIdle)
	}
	n, fixed, err := demo.ParseIdlePerKey(perKey)
	if err != nil {
		return s, fmt.Errorf("--idle-per-key %w", err)
	}
	s.IdlePerKey, s.Peak = max(n, 1), !fixed
	if s.Prewarm, err = demo.ParsePrewarm(prewarm); err != nil {
		return s, fmt.Errorf("--prewarm %w", err)
	}
	return s, nil
}

func runWhatif(cmd *cobra.Command, args []string, f whatifFlags) error {
	applyQuiet(cmd, f.quiet)
	write, err := whatifWriter(f)
	if err != nil {
		return err
	}
	flagRec, err := parseSetting(f.recTTL, f.recPerKey, f.recMaxIdle, f.recPrewarm)
	if err != nil {
		return usageErrorf("recorded settings: %v", err)
	}
	sets, err := whatifSets(f)
	if err != nil {
		return err
	}
	// The read's TTL attributes only the dump's own causes (Workload.Recorded),
	// which no row shows: the replay attributes its own.
	f.idleTTL = flagRec.IdleTTL
	s, err := resolveSetup(cmd.Flags(), f.dumpFlags, f.config, nil)
	if err != nil {
		return err
	}
	src, err := f.source.source(cmd.Flags(), args, time.Now())
	if err != nil {
		return err
	}
	lopts := analyze.LoadOptions{Read: s.ropts, Index: s.cfg.IndexOptions()}
	lopts.Read.Stdin = cmd.InOrStdin()
	c := whatif.NewCollector()
	inputs, writer, err := analyze.ReadAcquiresWriter(cmd.Context(), src, s.cfg, lopts, c.Add)
	if err != nil {
		var re *ingest.ReadError
		switch {
		case backendError(err) != nil:
			return backendError(err)
		case errors.As(err, &re):
			return &exitError{code: 2, err: err}
		case errors.Is(err, context.Canceled):
			return &exitError{code: 130, err: fmt.Errorf("interrupted: %w", err)}
		}
		return err
	}
	warnInputs(cmd.ErrOrStderr(), inputs, replayedDamaged)
	partial, backend := partialInputs(inputs)
	w := c.Workload()
	if w.Acquires() == 0 {
		return &exitError{code: 3, err: errors.New("whatif: the input holds no acquire (no pool spans and no session-bearing calls): nothing to replay")}
	}
	if err := whatif.CheckWork(len(sets), w.Acquires()); err != nil {
		return usageErrorf("whatif: %v", err)
	}
	rec, assumed := recordedSetting(cmd, w, flagRec)
	marks := whatif.Marks{Assumed: assumed, Partial: partial, KeysMerged: whatif.KeysMergedWhy(writer)}
	rows, err := replayRows(cmd.Context(), w, rec, sets, marks)
	if err != nil {
		return err
	}
	if err := writeOutput(cmd, f.output, func(w io.Writer) error { return write(w, rows, marks) }); err != nil {
		return err
	}
	if backend && !f.allowPartial {
		return &exitError{code: 3, err: errors.New("the backend's window is partial (see the warnings above): the rows replay what was fetched; --allow-partial accepts it")}
	}
	return nil
}

// replayRows replays w at rec (the as-recorded row) and at every other
// setting of sets, sorted as the outputs under m say (whatif.SortFor). A
// canceled ctx (Ctrl-C) stops the replay within a few thousand acquires:
// exit 130.
func replayRows(ctx context.Context, w *whatif.Workload, rec whatif.Settings, sets []whatif.Settings, m whatif.Marks) ([]whatif.Row, error) {
	asRec, err := w.ReplayContext(ctx, rec)
	if err != nil {
		return nil, interruptedIn("replay", err)
	}
	asRec.AsRecorded = true
	rows := []whatif.Row{asRec}
	for _, s := range sets {
		if s == rec {
			continue
		}
		row, err := w.ReplayContext(ctx, s)
		if err != nil {
			return nil, interruptedIn("replay", err)
		}
		rows = append(rows, row)
	}
	whatif.SortFor(rows, m)
	return rows, nil
}

// whatifWriter returns the writer of --format, after checking before any
// work that -o FILE (any format) can be written.
func whatifWriter(f whatifFlags) (func(io.Writer, []whatif.Row, whatif.Marks) error, error) {
	if err := whatifFormat.check(&f.format); err != nil {
		return nil, err
	}
	if err := checkOutput(f.output); err != nil {
		return nil, err
	}
	return whatifWriters[f.format], nil
}

// whatifWriters are whatif's --format values and their writers.
var whatifWriters = map[string]func(io.Writer, []whatif.Row, whatif.Marks) error{
	"table": whatif.WriteTable, "json": whatif.WriteJSON, "markdown": whatif.WriteMarkdown, formatHTML: whatif.WriteHTMLPage,
}

// whatifSets parses every combination of the settings lists, refusing
// (exit 2) a grid past whatif.MaxGrid before building any.
func whatifSets(f whatifFlags) ([]whatif.Settings, error) {
	if err := whatif.CheckGrid(whatif.GridList{Flag: "--idle-ttl", Len: len(f.ttls)}, whatif.GridList{Flag: "--idle-per-key", Len: len(f.perKeys)},
		whatif.GridList{Flag: "--max-idle", Len: len(f.maxIdles)}, whatif.GridList{Flag: "--prewarm", Len: len(f.prewarms)}); err != nil {
		return nil, usageErrorf("whatif: %v", err)
	}
	var sets []whatif.Settings
	for _, t := range f.ttls {
		ttl, err := time.ParseDuration(strings.TrimSpace(t))
		if err != nil {
			return nil, usageErrorf("--idle-ttl %q: expected a duration such as 5m", t)
		}
		for _, pk := range f.perKeys {
			for _, mi := range f.maxIdles {
				for _, pw := range f.prewarms {
					s, err := parseSetting(ttl, strings.TrimSpace(pk), mi, strings.TrimSpace(pw))
					if err != nil {
						return nil, usageErrorf("%v", err)
					}
					sets = append(sets, s)
				}
			}
		}
	}
	return sets, nil
}

// recordedSetting returns the as-recorded row's settings and whether they
// are assumed: those every pool scope of w recorded, pre-warm as the dump's
// own pre-warm dials unless --recorded-prewarm is given, each --recorded-* flag given overriding its field
// (assumed then); flagRec's (the flags' or their defaults) where w's
// scopes recorded none or different ones, said on stderr in the latter
// case.
func recordedSetting(cmd *cobra.Command, w *whatif.Workload, flagRec whatif.Settings) (whatif.Settings, bool) {
	got, note, ok := w.RecordedSettings()
	if !ok {
		if note != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "whatif: %s: the as-recorded row is at --recorded-* (assumed)\n", note)
		}
		return flagRec, true
	}
	fl := cmd.Flags()
	assumed := fl.Changed("recorded-prewarm")
	if assumed {
		got.Prewarm = flagRec.Prewarm // else the dump's own pre-warm dials
	}
	if fl.Changed("recorded-idle-ttl") {
		got.IdleTTL, assumed = flagRec.IdleTTL, true
	}
	if fl.Changed("recorded-idle-per-key") {
		got.IdlePerKey, got.Peak, assumed = flagRec.IdlePerKey, flagRec.Peak, true
	}
	if fl.Changed("recorded-max-idle") {
		got.MaxIdle, assumed = flagRec.MaxIdle, true
	}
	return got, assumed
}
