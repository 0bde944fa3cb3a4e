package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// readmePackageRow matches a row of the README's package table: its first
// cell links a package directory, as | [`analyze/gate/`](...) |.
var readmePackageRow = regexp.MustCompile("(?m)^\\| \\[`([a-z0-9_/.-]+)/`\\]")

// readmePackages returns the package directories the README's table names.
func readmePackages(readme string) map[string]bool {
	out := map[string]bool{}
	for _, m := range readmePackageRow.FindAllStringSubmatch(readme, -1) {
		out[m[1]] = true
	}
	return out
}

// missingFromReadme returns the packages of g a newcomer would look for in
// the README's table and not find: every package but an internal one (the
// architecture page has those) and the Collector's generated metadata,
// sorted. A row for a package directory covers only that directory.
func missingFromReadme(g graph, listed map[string]bool) []string {
	var out []string
	for p := range g {
		if strings.Contains("/"+p+"/", "/internal/") || listed[p] {
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestTheReadmeTableListsEveryPackage holds the README's package table
// against both modules: a newcomer reads it first, and a package it leaves
// out (rulefmt, report, htmlreport and whatif once were) is one they do
// not know exists.
func TestTheReadmeTableListsEveryPackage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := readmePackages(string(data))
	if len(listed) < 5 {
		t.Fatalf("found %d package rows in README.md: the table's shape changed", len(listed))
	}
	for _, p := range missingFromReadme(realGraph(t), listed) {
		t.Errorf("README.md's package table has no row for %s/", p)
	}
}

// TestMissingFromReadmeSkipsOnlyInternalPackages pins the comparison on a
// made-up graph.
func TestMissingFromReadmeSkipsOnlyInternalPackages(t *testing.T) {
	g := graph{"pool": nil, "pool/idle": nil, "internal/x": nil, "analyze/internal/y": nil, "collector/c/internal/metadata": nil, "analyze": nil}
	got := missingFromReadme(g, map[string]bool{"pool": true, "analyze": true})
	if want := []string{"pool/idle"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("missing = %v, want %v", got, want)
	}
	if got := readmePackages("| [`pool/`](pool/doc.go) | x |\n| [`analyze/gate/`](a) | y |\n"); !got["pool"] || !got["analyze/gate"] || len(got) != 2 {
		t.Errorf("readmePackages = %v", got)
	}
}
