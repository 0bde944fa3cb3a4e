package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWhatifMarksADamagedInputPartialInEveryFormat pins whatif over a
// file read in part as analyze reads it: a Jaeger answer cut inside its
// data array, and a whole one whose "errors" say a trace was not loaded,
// are replayed (exit 0, as analyze) with the reader's warning and the
// "is partial" line on stderr, and every --format says PARTIAL; the intact
// answer says nothing of the kind.
func TestWhatifMarksADamagedInputPartialInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	whole, err := os.ReadFile(traces + "acquire-on-miss.jaeger.json")
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.TrimRight(whole, "\n")
	files := map[string][]byte{
		"intact.json": whole,
		"cut.json":    whole[:len(whole)*2/3],
		"errors.json": append(append([]byte{}, body[:len(body)-1]...), `,"errors":[{"code":500,"msg":"trace not found"}]}`...),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	marker := map[string]string{"table": "PARTIAL: ", "json": `"partial": true`, "markdown": "**PARTIAL: ", "html": `<div class="note warn"><strong>PARTIAL: `}
	for _, tc := range []struct {
		file    string
		partial bool
		warning string
	}{
		{"intact.json", false, ""},
		{"cut.json", true, "truncated"},
		{"errors.json", true, `"errors" says 1 trace(s) were not loaded`},
	} {
		for format, mark := range marker {
			t.Run(tc.file+"/"+format, func(t *testing.T) {
				code, out, stderr := runCLI(t, "", "whatif", "--format", format, filepath.Join(dir, tc.file))
				if code != 0 {
					t.Fatalf("exit %d, want 0: %s", code, stderr)
				}
				if got := strings.Contains(out, mark); got != tc.partial {
					t.Errorf("output holds %q: %v, want %v\n%s", mark, got, tc.partial, out)
				}
				if !tc.partial {
					if stderr != "" || (format == "json" && !strings.Contains(out, `"partial": false`)) {
						t.Errorf("intact input: stderr %q, want none and \"partial\": false", stderr)
					}
					return
				}
				for _, want := range []string{tc.warning, tc.file + `" is partial: replayed the acquires of the `} {
					if !strings.Contains(stderr, want) {
						t.Errorf("stderr lacks %q:\n%s", want, stderr)
					}
				}
			})
		}
	}
}
