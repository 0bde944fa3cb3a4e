package main

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestAnotherPackagesTestsCoverTheMutatedPackage pins which tests run
// against the mutants: the mutated package's own by default; with -tests
// the named package's, whose coverage is read for the mutated package
// through -coverpkg (without it the profile would cover the test package
// and no mutant would be on a covered line), and the mutated package's
// own as well when it has any, so that a mutant either kills counts.
func TestAnotherPackagesTestsCoverTheMutatedPackage(t *testing.T) {
	abs, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	runs, err := testRuns(ctx, abs, "")
	if err != nil || len(runs) != 1 || runs[0].dir != abs || runs[0].coverArgs != nil {
		t.Errorf("own tests: got %+v %v, want %q alone and no flag", runs, err, abs)
	}
	runs, err = testRuns(ctx, abs, "../archtest")
	if err != nil {
		t.Fatal(err)
	}
	want := []testRun{
		{dir: filepath.Join(filepath.Dir(abs), "archtest"), coverArgs: []string{"-coverpkg=github.com/mcptrace/mcptrace/internal/mutate"}},
		{dir: abs}, // this package has tests of its own
	}
	if len(runs) != len(want) {
		t.Fatalf("runs = %+v, want %+v", runs, want)
	}
	for i := range want {
		if runs[i].dir != want[i].dir || !slices.Equal(runs[i].coverArgs, want[i].coverArgs) {
			t.Errorf("run %d = %+v, want %+v", i, runs[i], want[i])
		}
	}
	// A package without tests of its own is run by the other's alone.
	runs, err = testRuns(ctx, filepath.Join(filepath.Dir(abs), "..", "analyze", "internal", "selector"), "../archtest")
	if err != nil || len(runs) != 1 {
		t.Errorf("a package without tests: runs %+v, %v; want the other package's alone", runs, err)
	}
}

// TestTestsForReadsPairsAndRefusesHalfOnes pins -tests-for's syntax.
func TestTestsForReadsPairsAndRefusesHalfOnes(t *testing.T) {
	m, err := parseTestsFor("analyze/internal/vocab=analyze/internal/engine,./x/=y")
	if err != nil || m["analyze/internal/vocab"] != "analyze/internal/engine" || m["x"] != "y" || len(m) != 2 {
		t.Errorf("parse = %v, %v", m, err)
	}
	for _, bad := range []string{"a", "=b", "a="} {
		if _, err := parseTestsFor(bad); err == nil {
			t.Errorf("-tests-for %q accepted", bad)
		}
	}
}
