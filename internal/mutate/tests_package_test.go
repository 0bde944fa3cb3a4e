package main

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestAnotherPackagesTestsCoverTheMutatedPackage pins where the mutants'
// tests come from: the mutated package's own by default, and with -tests
// the named package's, whose coverage is read for the mutated package
// through -coverpkg (without it the profile would cover the test package
// and no mutant would be on a covered line).
func TestAnotherPackagesTestsCoverTheMutatedPackage(t *testing.T) {
	abs, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir, args, err := testPackage(context.Background(), abs, "")
	if err != nil || dir != abs || args != nil {
		t.Errorf("own tests: got %q %q %v, want %q and no flag", dir, args, err, abs)
	}
	dir, args, err = testPackage(context.Background(), abs, "../archtest")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(abs), "archtest"); dir != want {
		t.Errorf("tests dir = %q, want %q", dir, want)
	}
	if want := []string{"-coverpkg=github.com/mcptrace/mcptrace/internal/mutate"}; !slices.Equal(args, want) {
		t.Errorf("coverage flags = %q, want %q", args, want)
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
