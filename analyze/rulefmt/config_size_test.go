package rulefmt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A configuration file is bounded before it is parsed: a YAML parser
// holds every node of a file, so a 300 MB comment took 1.4 GB and
// /dev/zero never ended. Exactly MaxConfigBytes is read; one byte more is
// refused, naming the file and the bound, from a file and from bytes.
func TestAConfigFileIsBoundedBeforeItIsParsed(t *testing.T) {
	const rule = "rules:\n  - id: a\n    select: request\n    expect: {of: count, op: \">=\", than: 0}\n"
	padded := func(size int) []byte {
		return []byte(rule + "#" + strings.Repeat("x", size-len(rule)-2) + "\n")
	}
	for _, tc := range []struct {
		name string
		size int
		over bool
	}{
		{"exactly the bound", MaxConfigBytes, false},
		{"one byte over", MaxConfigBytes + 1, true},
		{"far over", 8 * MaxConfigBytes, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := padded(tc.size)
			path := filepath.Join(t.TempDir(), "big.yaml")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, perr := ParseGateConfig(path, data)
			_, lerr := LoadGateConfig(path)
			_, cerr := LoadConfigFile(path)
			for _, err := range []error{perr, lerr, cerr} {
				if got := errors.Is(err, ErrConfigTooLarge); got != tc.over {
					t.Errorf("err = %v; want too large: %v", err, tc.over)
				}
				if tc.over && !strings.Contains(errText(err), path) {
					t.Errorf("err %q does not name the file", errText(err))
				}
			}
		})
	}
}
