package rulefmt

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlError turns a yaml.v3 syntax error in data into a ConfigError with a
// line and a column. yaml.v3 never gives a column, and its line is often
// that of the enclosing block (0-based, or left out on the first line), so
// the place is found again (locateYAMLError): the line is the first whose
// prefix of data fails with the same problem, the column the first byte of
// that line at which it does. That is where a parser reading from the
// start first knows the file is wrong: the stray ':' or tab itself, the
// quote or bracket that is never closed.
func yamlError(file string, data []byte, err error) *ConfigError {
	msg := err.Error()
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	col := 0
	if l, c := locateYAMLError(data, msg); l > 0 {
		line, col = l, c
	}
	return &ConfigError{File: file, Line: line, Column: col, Msg: "invalid YAML: " + msg}
}

// locateBudget bounds the bytes locateYAMLError re-parses (it parses every
// prefix, so a long file would cost quadratic time): beyond it, yaml.v3's
// own line stands, without a column. Configuration files are a few
// kilobytes, far within it.
const locateBudget = 4 << 20

// maxColumnSearch bounds the line whose column locateYAMLError searches:
// it parses a prefix per character of the line, so a line of thousands of
// brackets would cost thousands of parses. A configuration line is far
// shorter; on a longer one the line stands alone.
const maxColumnSearch = 1024

// locateYAMLError returns the 1-based line and column (in characters, as
// yaml.Node counts them) where a prefix of data first fails to parse with
// problem: the first line whose prefix through its end fails, then the
// first byte of that line at which the prefix fails. It returns 0, 0 when
// no prefix fails so, or when the search would re-parse more than
// locateBudget bytes; the column 0 on a line past maxColumnSearch bytes.
func locateYAMLError(data []byte, problem string) (line, col int) {
	fails := func(end int) bool {
		var n yaml.Node
		err := yaml.Unmarshal(data[:end], &n)
		return err != nil && strings.HasSuffix(err.Error(), problem)
	}
	start, end, parsed := 0, 0, 0
	for i, l := range strings.SplitAfter(string(data), "\n") {
		start, end = end, end+len(l)
		if parsed += end; parsed > locateBudget {
			return 0, 0
		}
		if !fails(end) {
			continue
		}
		if len(l) > maxColumnSearch {
			return i + 1, 0
		}
		c := 0
		for at := start; at < end; {
			_, size := utf8.DecodeRune(data[at:])
			at += size
			c++
			if parsed += at; parsed > locateBudget {
				return i + 1, 0
			}
			if fails(at) {
				return i + 1, c
			}
		}
		return i + 1, 0
	}
	return 0, 0
}
