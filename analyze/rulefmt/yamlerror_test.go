package rulefmt

import (
	"errors"
	"strings"
	"testing"
)

// TestAYAMLErrorIsPlacedWhereItsOwnProblemBegins pins locateYAMLError's
// test of a prefix: it fails with the same problem as the file, not merely
// fails. Every prefix cut inside the open flow list fails too (did not
// find expected node content, at its end); the file's own mistake is the
// ':' after the list is closed, on line 4.
func TestAYAMLErrorIsPlacedWhereItsOwnProblemBegins(t *testing.T) {
	doc := "rules: [a,\n  b,\n  c,\n  d]: x\n"
	_, err := ParseGateConfig("f.yaml", []byte(doc))
	const want = "f.yaml:4:5: invalid YAML: mapping values are not allowed in this context"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestAYAMLErrorAfterBlankLinesIsPlacedOnItsLine pins the line ends
// locateYAMLError splits at: a blank line is a line of its own (a newline
// at the very start of what is left), so the mistake after two of them is
// on line 3.
func TestAYAMLErrorAfterBlankLinesIsPlacedOnItsLine(t *testing.T) {
	_, err := ParseGateConfig("f.yaml", []byte("\n\nregressions: hit_rate_drop: 1\n"))
	const want = "f.yaml:3:27: invalid YAML: mapping values are not allowed in this context"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestAYAMLErrorIsPlacedInAFileOfExactlyTheSearchBound pins
// maxLocateBytes' edge: a file of exactly that size still has its mistake
// placed at a line and column; one byte more keeps yaml.v3's own line,
// without a column.
func TestAYAMLErrorIsPlacedInAFileOfExactlyTheSearchBound(t *testing.T) {
	const bad = "regressions: hit_rate_drop: 1\n"
	for _, tc := range []struct {
		size int
		col  int
	}{
		{maxLocateBytes, 27},
		{maxLocateBytes + 1, 0},
	} {
		pad := tc.size - len(bad)
		line := "# " + strings.Repeat("x", 61) + "\n" // 64 bytes
		doc := strings.Repeat(line, pad/len(line)) + "#" + strings.Repeat("y", pad%len(line)-2) + "\n" + bad
		if len(doc) != tc.size {
			t.Fatalf("built %d bytes, want %d", len(doc), tc.size)
		}
		_, err := ParseGateConfig("f.yaml", []byte(doc))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Column != tc.col || ce.Line != strings.Count(doc, "\n") {
			t.Errorf("%d bytes: error %v, want line %d column %d", tc.size, err, strings.Count(doc, "\n"), tc.col)
		}
	}
}
