package main

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestFileSitesFindsEachOperatorWithItsReplacement pins what each
// operator turns a line into: the mutated source is what go test compiles.
func TestFileSitesFindsEachOperatorWithItsReplacement(t *testing.T) {
	src := []byte(`package p

import "time"

func f(a, b int, t, u time.Time) int {
	if a < b && a != 0 {
		a++
	}
	if t.After(u) {
		return max(a, 0)
	}
	if t.Before(u) {
		a--
	}
	return a
}
`)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range fileSites(fset, f, "p.go", src) {
		mutated := string(src[:m.start]) + m.repl + string(src[m.end:])
		if _, err := parser.ParseFile(token.NewFileSet(), "m.go", mutated, 0); err != nil {
			t.Errorf("%s %s does not parse: %v", m.Op, m.Desc, err)
		}
		got = append(got, m.Op+" "+m.repl)
	}
	want := []string{
		"drop-condition (a < b)", "drop-condition (a != 0)", "boundary <=", "negate ==",
		"remove-incdec _ = a", "time-boundary !t.Before(u)", "remove-clamp (a)",
		"time-boundary !t.After(u)", "remove-incdec _ = a",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("mutants\n%q\nwant\n%q", got, want)
	}
}

// TestCoveredLinesReadsOnlyBlocksThatRan pins the coverage filter: a
// block with count 0 adds no line, a block spanning lines adds each.
func TestCoveredLinesReadsOnlyBlocksThatRan(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.out")
	prof := "mode: set\nexample.com/p/a.go:3.10,5.2 2 1\nexample.com/p/a.go:7.1,8.2 1 0\n"
	if err := os.WriteFile(p, []byte(prof), 0o644); err != nil {
		t.Fatal(err)
	}
	cov, err := coveredLines(p)
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[int]bool{2: false, 3: true, 4: true, 5: true, 7: false, 8: false} {
		if cov["a.go"][line] != want {
			t.Errorf("line %d covered = %v, want %v", line, cov["a.go"][line], want)
		}
	}
	if err := os.WriteFile(p, []byte("mode: set\ngarbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := coveredLines(p); err == nil {
		t.Error("a bad profile line is not an error")
	}
}

// TestSampleIsDeterministicAndInSourceOrder pins --budget and --seed: the
// same seed and package give the same sample, another seed or another
// package another one.
func TestSampleIsDeterministicAndInSourceOrder(t *testing.T) {
	ms := make([]mutant, 100)
	for i := range ms {
		ms[i] = mutant{File: "a.go", Line: i, start: i}
	}
	a, b, c := sample(ms, 10, 1, "pkg"), sample(ms, 10, 1, "pkg"), sample(ms, 10, 2, "pkg")
	if len(a) != 10 || !slices.Equal(a, b) || slices.Equal(a, c) || slices.Equal(a, sample(ms, 10, 1, "other")) {
		t.Errorf("sample not deterministic per seed: %v %v %v", a, b, c)
	}
	if !slices.IsSortedFunc(a, func(x, y mutant) int { return x.start - y.start }) {
		t.Errorf("sample out of source order: %v", a)
	}
	if all := sample(ms, 0, 1, "pkg"); len(all) != 100 {
		t.Errorf("budget 0 took %d, want all", len(all))
	}
}

// TestFindSitesKeepsOnlyTheFilteredFiles pins -files and -exclude: a file
// is mutated when -files matches it (or is unset) and -exclude does not,
// and test files never are.
func TestFindSitesKeepsOnlyTheFilteredFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"engine.go", "render_html.go", "render_html_page.go", "engine_test.go"} {
		src := fmt.Sprintf("package p\n\nfunc f%d(a int) bool { return a < 1 }\n", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name       string
		only, skip string
		want       []string
	}{
		{"no filter", "", "", []string{"engine.go", "render_html.go", "render_html_page.go"}},
		{"exclude", "", "^render_html", []string{"engine.go"}},
		{"files", "^render_", "", []string{"render_html.go", "render_html_page.go"}},
		{"files and exclude", "^render_", "_page", []string{"render_html.go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ff fileFilter
			if tc.only != "" {
				ff.only = regexp.MustCompile(tc.only)
			}
			if tc.skip != "" {
				ff.skip = regexp.MustCompile(tc.skip)
			}
			ms, srcs, _, err := findSites(context.Background(), dir, ff)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				got = append(got, m.File)
			}
			got = slices.Compact(got) // each file has a mutant of more than one operator
			if !slices.Equal(got, tc.want) || len(srcs) != len(tc.want) {
				t.Errorf("mutated files %v (sources %d), want %v", got, len(srcs), tc.want)
			}
		})
	}
}
