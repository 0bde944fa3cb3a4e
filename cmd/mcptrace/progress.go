package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/mcptrace/mcptrace/analyze/ingest"
)

// statusLine is the CLI's one progress display: a single line on a
// terminal's standard error, redrawn in place at most every
// statusInterval and cleared when the work is done, so it never mixes with
// the report. Off a terminal (a CI log, a pipe, a file, /dev/null) and
// under --quiet it is off and every method does nothing, so a log never
// fills with carriage returns. Reading dumps (progress), the demo's
// workloads and its read-back, and the live demo all draw through it.
type statusLine struct {
	w     io.Writer
	on    bool
	last  time.Time
	shown bool
}

// statusInterval is how often a status line may be redrawn: often enough
// to look alive, rarely enough to cost nothing.
const statusInterval = 200 * time.Millisecond

// newStatusLine returns the status line for w, on when w is a terminal.
func newStatusLine(w io.Writer) *statusLine {
	return &statusLine{w: w, on: isTerminal(w)}
}

// show redraws the line with text, unless it was redrawn less than
// statusInterval ago and force is false (force is for a change a person
// should see at once: a new phase, a second read).
func (s *statusLine) show(force bool, text string) {
	if !s.on {
		return
	}
	if now := time.Now(); force || now.Sub(s.last) >= statusInterval {
		s.last = now
		s.shown = true
		fmt.Fprintf(s.w, "\r\033[K%s", text)
	}
}

// clear erases the line, if one was drawn; the next show draws at once.
func (s *statusLine) clear() {
	if s.on && s.shown {
		fmt.Fprint(s.w, "\r\033[K")
	}
	s.shown = false
	s.last = time.Time{}
}

// isTerminal reports whether w is a terminal (a TTY, or a Cygwin/MSYS
// pseudo-terminal), where progress and colour belong. A character device
// is not enough: /dev/null is one.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// largeInput is the total size from which reading shows progress: below
// it, reading is over before a person would look.
const largeInput = 64 << 20

// progress shows on a terminal's stderr how far reading has got: the spans
// read and, for a file, the percentage of its bytes; for standard input,
// whose size is unknown, the bytes read. It shows for large inputs and for
// stdin only, and never when stderr is not a terminal (a CI log, a pipe).
type progress struct {
	line *statusLine
	on   bool
	// again marks a second read (analyze.LoadOptions.Reread): the counts
	// start from zero again, and the line says why.
	again bool
}

// reread notes that the inputs are being read again from the start.
func (p *progress) reread(error) {
	p.again = true
	p.line.last = time.Time{}
}

// newProgress returns the progress display for src on w.
func newProgress(w io.Writer, src ingest.Source) *progress {
	return newProgressIf(w, src, isTerminal(w))
}

// newProgressIf is newProgress with the terminal test given: on for a
// source of unknown size (stdin, a backend) or a large one.
func newProgressIf(w io.Writer, src ingest.Source, terminal bool) *progress {
	p := &progress{line: &statusLine{w: w, on: terminal}}
	if terminal {
		n := src.Bytes()
		p.on = n == 0 || n >= largeInput
	}
	p.line.on = p.on
	return p
}

// update redraws the progress line at most a few times a second.
func (p *progress) update(in *ingest.Input, spansRead int) {
	if !p.on {
		return
	}
	line := progressLine(in, spansRead)
	if p.again {
		line = "second read, holding every trace (a span came after its trace's root): " + line
	}
	p.line.show(false, line)
}

// done clears the progress line.
func (p *progress) done() { p.line.clear() }

// progressLine is one progress report: "reading dump.jsonl: 1.2M spans
// (43%)", for stdin "reading -: 1.2M spans, 310.5 MB read", for a backend
// "reading jaeger http://host:16686: 1.2M spans, 340 traces, 12 pages".
func progressLine(in *ingest.Input, spansRead int) string {
	if b := in.Backend; b != nil {
		return fmt.Sprintf("reading %s %s: %s spans, %s traces, %d pages", b.Backend, b.URL, humanCount(spansRead), humanCount(b.Traces), b.Pages)
	}
	line := fmt.Sprintf("reading %s: %s spans", filepath.Base(in.Path), humanCount(spansRead))
	switch read := in.BytesRead(); {
	case in.Size > 0:
		line += fmt.Sprintf(" (%d%%)", min(100, read*100/in.Size))
	case read > 0:
		line += ", " + humanBytes(read) + " read"
	}
	return line
}

// humanBytes renders n bytes as 512 B, 12.3 KiB, 45 MiB or 7.8 GiB: the
// units are powers of 1024, as --max-memory's are, and named so; a tenth
// is shown only where it is not zero.
func humanBytes(n int64) string {
	unit := func(div float64, name string) string {
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/div), ".0") + " " + name
	}
	switch {
	case n >= 1<<30:
		return unit(1<<30, "GiB")
	case n >= 1<<20:
		return unit(1<<20, "MiB")
	case n >= 1<<10:
		return unit(1<<10, "KiB")
	}
	return fmt.Sprintf("%d B", n)
}

// humanCount renders n as 1234, 12.3k or 1.2M.
func humanCount(n int) string {
	switch {
	case n >= 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 10_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "k"
	}
	return fmt.Sprint(n)
}
