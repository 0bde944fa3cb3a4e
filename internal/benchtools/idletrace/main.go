// Command idletrace reads an execution trace of an mcptrace run (its
// --exectrace) and says how long the cores idled and in what situation:
// which of the analyzer's phases ran meanwhile, and where the others
// waited. A CPU profile shows where the cores worked; this shows where
// the pipeline stalled, which no profile of the work can.
//
// It lives in a module of its own, so the trace parser
// (golang.org/x/exp/trace, the Go team's reader of the runtime's format)
// stays out of mcptrace's dependencies.
//
// Usage:
//
//	mcptrace analyze --format json --exectrace run.trace DUMP >/dev/null
//	go run ./internal/benchtools/idletrace run.trace   (from this module's directory: go run . ../../../run.trace)
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

func main() {
	top := flag.Int("top", 12, "situations to list, largest first")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: idletrace [-top N] TRACE\n\nSplits the idle core time of an execution trace (mcptrace --exectrace) by\nthe analyzer's phases that ran and those that waited.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "idletrace:", err)
		os.Exit(1)
	}
	defer f.Close()
	rep, err := Analyze(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "idletrace: %s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
	if err := write(os.Stdout, rep, *top); err != nil {
		fmt.Fprintln(os.Stderr, "idletrace:", err)
		os.Exit(1)
	}
}

// write prints rep's summary line and its top rows as a table.
func write(w io.Writer, rep *Report, top int) error {
	share := 0.0
	if rep.Wall > 0 && rep.Procs > 0 {
		share = 100 * rep.Idle / (rep.Wall * float64(rep.Procs))
	}
	fmt.Fprintf(w, "%.1f ms on %d procs: %.1f core-ms idle (%.1f%% of the cores)\n\n", rep.Wall, rep.Procs, rep.Idle, share)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "idle core-ms\tof idle\tran\twaiting")
	for i, row := range rep.Rows {
		if i == top {
			break
		}
		fmt.Fprintf(tw, "%12.1f\t%6.1f%%\t%s\t%s\n", row.Idle, 100*row.Idle/rep.Idle, list(row.Ran), list(row.Waiting))
	}
	return tw.Flush()
}

// list joins names, "none" for no name.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
