package rulefmt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlError turns a yaml.v3 syntax error in data into a ConfigError with a
// line and a column. yaml.v3 never gives a column, and its line is often
// that of the enclosing block (0-based, or left out on the first line), so
// the place is found again (locateYAMLError): the line is the one whose
// prefix of data fails with the same problem while the prefix before it
// does not, the column the first byte of that line at which it fails. That is where a parser reading from the
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

// maxLocateBytes bounds the file locateYAMLError searches: the search
// re-parses prefixes of it, about 27 times at most (a bisection over the
// lines, then over the characters of one), so it costs a bounded multiple
// of the parse that failed. Configuration files are a few kilobytes; in a
// longer file yaml.v3's own line stands, without a column.
const maxLocateBytes = 64 << 10

// maxColumnSearch bounds the line whose column locateYAMLError searches: a
// prefix parse ending inside a line of thousands of brackets costs that
// depth squared in yaml.v3. A configuration line is far shorter; on a
// longer one the line stands alone.
const maxColumnSearch = 1024

// locateYAMLError returns the 1-based line and column (in characters, as
// yaml.Node counts them) where a prefix of data first fails to parse with
// problem, found by bisection: the line whose prefix through its end fails
// while the prefix before it does not, then the character of that line
// through which the prefix first fails. It returns 0, 0 when data itself
// does not fail so or is longer than maxLocateBytes; the column 0 on a line
// past maxColumnSearch bytes.
func locateYAMLError(data []byte, problem string) (line, col int) {
	if len(data) > maxLocateBytes || !yamlFails(data, problem) {
		return 0, 0
	}
	// ends[i] is the end of line i+1.
	var ends []int
	for at := 0; at < len(data); {
		next := len(data)
		if nl := bytes.IndexByte(data[at:], '\n'); nl >= 0 {
			next = at + nl + 1
		}
		ends = append(ends, next)
		at = next
	}
	// The prefix of no line does not fail, the prefix of them all does.
	i, _ := slices.BinarySearchFunc(ends, true, func(end int, _ bool) int {
		if yamlFails(data[:end], problem) {
			return 0
		}
		return -1
	})
	start := 0
	if i > 0 {
		start = ends[i-1]
	}
	if ends[i]-start > maxColumnSearch {
		return i + 1, 0
	}
	// The ends of the line's characters; the prefix through the last fails.
	var chars []int
	for at := start; at < ends[i]; {
		_, size := utf8.DecodeRune(data[at:])
		at += size
		chars = append(chars, at)
	}
	c, _ := slices.BinarySearchFunc(chars, true, func(end int, _ bool) int {
		if yamlFails(data[:end], problem) {
			return 0
		}
		return -1
	})
	return i + 1, c + 1
}

// yamlFails reports whether data fails to parse with problem.
func yamlFails(data []byte, problem string) bool {
	var n yaml.Node
	err := yaml.Unmarshal(data, &n)
	return err != nil && strings.HasSuffix(err.Error(), problem)
}

// MaxConfigBytes bounds a configuration file (256 KiB): a YAML parser holds
// a node for every value, so a file of hundreds of megabytes (or
// /dev/zero) would take gigabytes, or never end, before a mistake could
// be named. A real configuration is a few kilobytes; the worst 256 KiB
// (a list of 130,000 mistakes) parses in under 100 MiB.
const MaxConfigBytes = 256 << 10

// ErrConfigTooLarge is wrapped by the error for a configuration file
// over MaxConfigBytes, refused before it is parsed.
var ErrConfigTooLarge = errors.New("configuration file too large")

// readConfig reads the configuration file at path, at most MaxConfigBytes
// of it: a longer one (a pipe or a device included) is ErrConfigTooLarge
// once one byte past the bound is read.
func readConfig(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if err := checkConfigSize(path, data); err != nil {
		return nil, err
	}
	return data, nil
}

// checkConfigSize refuses data over MaxConfigBytes, naming path.
func checkConfigSize(path string, data []byte) error {
	if len(data) <= MaxConfigBytes {
		return nil
	}
	return ConfigErrors{{File: path, Err: ErrConfigTooLarge,
		Msg: fmt.Sprintf("%s: over %d bytes (MaxConfigBytes); a configuration is a few kilobytes", ErrConfigTooLarge, MaxConfigBytes)}}
}

// ErrSeveralDocuments is wrapped by the error for a configuration file
// holding a second YAML document (after a --- line): a reader of one
// document would drop the rest silently, and a gate would then pass on
// rules it never read. An empty document after the first (a trailing
// ---) drops nothing and is accepted.
var ErrSeveralDocuments = errors.New("several YAML documents in one configuration file")

// decodeOne parses data as one YAML document and returns it (a zero node
// for an empty file), refusing a syntax error anywhere in data and a
// second document that holds anything (ErrSeveralDocuments, placed at the
// --- line that starts it), each as ConfigErrors naming path.
func decodeOne(path string, data []byte) (*yaml.Node, error) {
	if err := checkConfigSize(path, data); err != nil {
		return nil, err
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, ConfigErrors{yamlError(path, data, err)}
	}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		switch {
		case errors.Is(err, io.EOF):
			return &doc, nil
		case err != nil:
			return nil, ConfigErrors{yamlError(path, data, err)}
		case len(next.Content) > 0 && !isEmptyNode(next.Content[0]):
			return nil, ConfigErrors{{File: path, Line: next.Line, Column: next.Column, Err: ErrSeveralDocuments,
				Msg: ErrSeveralDocuments.Error() + ": a second document starts here, and only the first would be read; put everything in one document"}}
		}
	}
}
