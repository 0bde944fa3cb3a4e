package gate

import (
	"bufio"
	"bytes"
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

// IsBaseline reports whether the file at path starts like a baseline (an
// analysis report) rather than a trace dump. An unreadable file is not one;
// reading it as a dump then reports the problem.
func IsBaseline(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return baselineHead.Match(head[:n])
}

// ReadBaseline reads a baseline: the JSON report `mcptrace analyze --format
// json` wrote, schema mcptrace.analysis/v1.
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
// ErrNotBaseline; a syntax error names its byte offset.
func DecodeBaseline(r io.Reader, name string) (*report.Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", name, err)
	}
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
	if rep.Schema != report.Schema {
		return nil, fmt.Errorf("baseline %s: schema %q: %w", name, textfmt.ClipInput(rep.Schema), ErrNotBaseline)
	}
	if err := checkBaselineKeys(data); err != nil {
		return nil, fmt.Errorf("baseline %s: %w: %w", name, err, ErrNotBaseline)
	}
	return &rep, nil
}

// baselineRequired are the keys a baseline must hold as JSON objects or
// numbers, not null or missing: a regression check against a baseline
// whose pool figures are gone would compare with zeros and pass.
var baselineRequired = map[string][]string{
	"":           {"pool", "executions", "spans", "traces"},
	"pool":       {"acquires", "hits", "misses", "excess_misses", "miss_reasons", "latency_ms"},
	"executions": {"count", "multi_session", "max_sessions"},
}

// checkBaselineKeys reports the first key of baselineRequired that data
// lacks or holds as null.
func checkBaselineKeys(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return err
	}
	isNull := func(v json.RawMessage) bool {
		return len(bytes.TrimSpace(v)) == 0 || string(bytes.TrimSpace(v)) == "null"
	}
	for _, k := range baselineRequired[""] {
		if v, ok := top[k]; !ok || isNull(v) {
			return fmt.Errorf("key %q is missing or null", k)
		}
	}
	for _, parent := range []string{"pool", "executions"} {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(top[parent], &obj); err != nil {
			return fmt.Errorf("key %q is not an object", parent)
		}
		for _, k := range baselineRequired[parent] {
			if v, ok := obj[k]; !ok || isNull(v) {
				return fmt.Errorf("key %q is missing or null", parent+"."+k)
			}
		}
	}
	return nil
}
