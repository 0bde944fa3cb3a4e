package analyze

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
)

// ErrNotBaseline is returned when a file meant as a baseline is not the
// JSON of `mcptrace analyze --format json` (schema mcptrace.analysis/v1).
var ErrNotBaseline = errors.New("not an mcptrace analysis (want the JSON of mcptrace analyze --format json)")

// baselineHead matches the start of an analysis report: Report's first key
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
func ReadBaseline(path string) (*Report, error) {
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
func DecodeBaseline(r io.Reader, name string) (*Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", name, err)
	}
	var rep Report
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
	if rep.Schema != Schema {
		return nil, fmt.Errorf("baseline %s: schema %q: %w", name, rep.Schema, ErrNotBaseline)
	}
	return &rep, nil
}
