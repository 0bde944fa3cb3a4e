package gate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
)

// ErrNotBaseline is returned when a file meant as a baseline is not the
// JSON of `mcptrace analyze --format json` (schema mcptrace.analysis/v1).
var ErrNotBaseline = errors.New("not an mcptrace analysis (want the JSON of mcptrace analyze --format json)")

// baselineHead matches the start of an analysis report: report.Report's first key
// is its schema, so a baseline is told from a JSON trace dump by its first
// bytes without reading the whole file.
var baselineHead = regexp.MustCompile(`^\s*\{\s*"schema"\s*:\s*"mcptrace\.analysis/`)

// SniffLen is how many of a file's first bytes LooksLikeBaseline needs:
// a caller reading a pipe peeks them through a buffer (bufio.Reader.Peek)
// rather than reading the input twice.
const SniffLen = 512

// LooksLikeBaseline reports whether head, the first bytes of an input (up
// to SniffLen), start like a baseline (an analysis report) rather than a
// trace dump.
func LooksLikeBaseline(head []byte) bool {
	return baselineHead.Match(head[:min(len(head), SniffLen)])
}

// IsBaseline reports whether the file at path starts like a baseline (an
// analysis report) rather than a trace dump. An unreadable file is not one;
// reading it as a dump then reports the problem. It reads path's first
// bytes: for a pipe, peek through a buffer and call LooksLikeBaseline.
func IsBaseline(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, SniffLen)
	n, _ := io.ReadFull(f, head)
	return LooksLikeBaseline(head[:n])
}

// ErrBaselineTooLarge is returned for a baseline longer than the limit it
// was read under (ReadBaselineFrom): it is refused, not read whole.
var ErrBaselineTooLarge = errors.New("baseline larger than its limit")

// ReadBaseline reads a baseline: the JSON report `mcptrace analyze --format
// json` wrote, schema mcptrace.analysis/v1, whatever its size (the CLI
// bounds it: ReadBaselineFrom).
func ReadBaseline(path string) (*report.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	defer f.Close()
	return DecodeBaseline(bufio.NewReader(f), path)
}

// DecodeBaseline decodes a baseline from r; name labels errors. A report of
// another schema major version, or anything that is not a report, is
// ErrNotBaseline; a syntax error names its line.
func DecodeBaseline(r io.Reader, name string) (*report.Report, error) {
	return ReadBaselineFrom(context.Background(), r, name, 0)
}

// ReadBaselineFrom is DecodeBaseline bounded and cancelable: past limit
// bytes (0 for no bound) it stops reading and returns ErrBaselineTooLarge
// naming name and the limit, and it stops with ctx's error once ctx is
// done. The text is held once and decoded once into the report (the
// required keys are checked by a second pass that keeps nothing), so a
// baseline under the limit costs about the limit and its report.
func ReadBaselineFrom(ctx context.Context, r io.Reader, name string, limit int64) (*report.Report, error) {
	src := io.Reader(ctxReader{ctx, r})
	if limit > 0 {
		src = io.LimitReader(src, limit+1)
	}
	data, err := io.ReadAll(src)
	if err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", name, err)
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, fmt.Errorf("baseline %s: more than %d bytes: %w", name, limit, ErrBaselineTooLarge)
	}
	return decodeBaseline(data, name)
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// decodeBaseline decodes data, a baseline's text; name labels errors.
func decodeBaseline(data []byte, name string) (*report.Report, error) {
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
			return nil, fmt.Errorf("baseline %s:%d: invalid JSON: %w", name, line, err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("baseline %s: field %s holds a %s, want %s: %w", name, te.Field, te.Value, te.Type, ErrNotBaseline)
		}
		return nil, fmt.Errorf("baseline %s: %w", name, err)
	}
	if !report.ReadableSchema(rep.Schema) {
		return nil, fmt.Errorf("baseline %s: schema %q: %w", name, textfmt.ClipInput(rep.Schema), ErrNotBaseline)
	}
	if err := checkBaselineKeys(data); err != nil {
		return nil, fmt.Errorf("baseline %s: %w: %w", name, err, ErrNotBaseline)
	}
	if err := checkBaselineFigures(&rep); err != nil {
		return nil, fmt.Errorf("baseline %s: %w (%w): write it again with mcptrace analyze --format json", name, err, ErrBaselineFigures)
	}
	return &rep, nil
}

// present records whether a key held a value other than null, keeping
// nothing of it.
type present bool

func (p *present) UnmarshalJSON(b []byte) error {
	*p = present(string(bytes.TrimSpace(b)) != "null")
	return nil
}

// baselineShape holds the keys a baseline must hold as JSON objects or
// numbers, not null or missing: a regression check against a baseline
// whose pool figures are gone would compare with zeros and pass.
type baselineShape struct {
	Pool *struct {
		Acquires     present `json:"acquires"`
		Hits         present `json:"hits"`
		Misses       present `json:"misses"`
		ExcessMisses present `json:"excess_misses"`
		MissReasons  present `json:"miss_reasons"`
		LatencyMS    present `json:"latency_ms"`
	} `json:"pool"`
	Executions *struct {
		Count        present `json:"count"`
		MultiSession present `json:"multi_session"`
		MaxSessions  present `json:"max_sessions"`
	} `json:"executions"`
	Spans  present `json:"spans"`
	Traces present `json:"traces"`
	// Figures says which figures the spans could not show: null there is
	// the truth, not a damaged baseline.
	Figures map[string]report.FigureState `json:"figures"`
}

// checkBaselineKeys reports the first key of baselineShape that data
// lacks or holds as null.
func checkBaselineKeys(data []byte) error {
	var sh baselineShape
	if err := json.Unmarshal(data, &sh); err != nil {
		return err
	}
	type key struct {
		name string
		ok   bool
	}
	keys := []key{{"pool", sh.Pool != nil}, {"executions", sh.Executions != nil}, {"spans", bool(sh.Spans)}, {"traces", bool(sh.Traces)}}
	or := func(ok bool, measure string) bool { return ok || sh.Figures[measure].State == report.NotMeasurable }
	if p := sh.Pool; p != nil {
		keys = append(keys, key{"pool.acquires", or(bool(p.Acquires), "acquires")}, key{"pool.hits", or(bool(p.Hits), "hits")}, key{"pool.misses", or(bool(p.Misses), "misses")},
			key{"pool.excess_misses", or(bool(p.ExcessMisses), "excess_misses")}, key{"pool.miss_reasons", bool(p.MissReasons)}, key{"pool.latency_ms", bool(p.LatencyMS)})
	}
	if e := sh.Executions; e != nil {
		keys = append(keys, key{"executions.count", or(bool(e.Count), "executions")}, key{"executions.multi_session", or(bool(e.MultiSession), "multi_session_executions")},
			key{"executions.max_sessions", or(bool(e.MaxSessions), "max_sessions_per_execution")})
	}
	for _, k := range keys {
		if !k.ok {
			return fmt.Errorf("key %q is missing or null", k.name)
		}
	}
	return nil
}
