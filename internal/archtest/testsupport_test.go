package archtest

import (
	"fmt"
	"slices"
	"testing"
)

// testSupport are the packages that exist for tests alone (relative to the
// main module): hand-built dumps and scenario configurations
// (internal/dumptest) and the analyzer run as its tests need it
// (internal/analyzetest). They import internal/tracegen and analyze, which
// the rules above keep out of what a user's binary links, so only _test.go
// files may import them.
var testSupport = []string{"internal/analyzetest", "internal/dumptest", "internal/testbound"}

// testSupportImports returns a message for every package of g (the
// packages' own imports, not their tests') that imports a test-support
// package, other test-support packages aside, and for every test-support
// package g does not hold, so a rename cannot leave the check holding
// nothing. The messages are sorted.
func testSupportImports(g graph, support []string) []string {
	var out []string
	for _, s := range support {
		if _, ok := g[s]; !ok {
			out = append(out, fmt.Sprintf("test-support package %s not found: update testSupport", s))
		}
	}
	for p, imps := range g {
		if slices.Contains(support, p) {
			continue
		}
		for _, imp := range imps {
			if slices.Contains(support, imp) {
				out = append(out, fmt.Sprintf("%s imports %s, which only _test.go files may import (test support)", p, imp))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestTestSupportIsImportedByTestsOnly holds both modules' packages to
// testSupport: a test-support package imported by the code itself would
// link the trace generators (and, below analyze, the analyzer) into a
// binary, and analyze's own code could reach internal/tracegen through it.
func TestTestSupportIsImportedByTestsOnly(t *testing.T) {
	for _, msg := range testSupportImports(realGraph(t), testSupport) {
		t.Error(msg)
	}
}

// TestTestSupportImportsFindsEveryImporter pins the check on a made-up
// graph: an import by a package is found, one by another test-support
// package is not, and a test-support package missing from the graph is.
func TestTestSupportImportsFindsEveryImporter(t *testing.T) {
	support := []string{"internal/analyzetest", "internal/dumptest"}
	tests := []struct {
		name string
		g    graph
		want []string
	}{
		{"tests only", graph{"analyze": {"spans"}, "internal/analyzetest": {"analyze", "internal/dumptest"}, "internal/dumptest": {"spans"}}, nil},
		{"a package imports one", graph{"cmd/mcptrace": {"analyze", "internal/dumptest"}, "internal/analyzetest": {}, "internal/dumptest": {}},
			[]string{"cmd/mcptrace imports internal/dumptest, which only _test.go files may import (test support)"}},
		{"one is gone", graph{"internal/analyzetest": {}},
			[]string{"test-support package internal/dumptest not found: update testSupport"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := testSupportImports(tc.g, support); !slices.Equal(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
