package archtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// architectureDoc is the page whose Arrows block draws the package graph.
const architectureDoc = "docs/architecture.md"

// arrowSign separates a package from what it imports in the Arrows block.
const arrowSign = "──▶"

// drawnArrows is the Arrows block of docs/architecture.md as data: for each
// package drawn on the left of an arrow (a path relative to the main
// module, the collector module's under collector/), the packages of ours it
// may import directly. Words on the right that name no package of ours
// ("MCP Go SDK", "OpenTelemetry API") and anything in parentheses are prose
// for the reader; "nothing" draws no arrow.
type drawnArrows map[string][]string

// parseArrows reads the first ```text block after the "## Arrows" heading
// of the Markdown at path. Every line of it must be "PACKAGE ──▶ LIST": a
// line of another shape is an error naming its line, so a typo cannot
// silently drop an arrow. ours reports whether a word names a package of
// ours (the packages go list found).
func parseArrows(path string, ours func(string) bool) (drawnArrows, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	arrows := drawnArrows{}
	sc := bufio.NewScanner(f)
	state := 0 // 0 before the heading, 1 before the block, 2 in it
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case state == 0 && strings.TrimSpace(text) == "## Arrows":
			state = 1
		case state == 1 && strings.HasPrefix(text, "```text"):
			state = 2
		case state == 2 && strings.HasPrefix(text, "```"):
			if len(arrows) == 0 {
				return nil, fmt.Errorf("%s:%d: the Arrows block draws no arrow", path, line)
			}
			return arrows, nil
		case state == 2:
			left, right, ok := strings.Cut(text, arrowSign)
			left = strings.TrimSpace(left)
			if !ok || left == "" || strings.ContainsAny(left, " ,()") {
				return nil, fmt.Errorf("%s:%d: %q: want \"PACKAGE %s IMPORTS, ...\"", path, line, text, arrowSign)
			}
			if !ours(left) {
				return nil, fmt.Errorf("%s:%d: %s is drawn but is no package of ours", path, line, left)
			}
			if _, dup := arrows[left]; dup {
				return nil, fmt.Errorf("%s:%d: %s is drawn twice", path, line, left)
			}
			arrows[left] = drawnImports(right, ours)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s: no ```text block under a \"## Arrows\" heading", path)
}

// drawnImports returns the packages of ours a right-hand side names: its
// comma-separated items, parentheses removed, whose first word is ours.
func drawnImports(right string, ours func(string) bool) []string {
	var b strings.Builder
	depth := 0
	for _, r := range right {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth = max(depth-1, 0)
		case depth == 0:
			b.WriteRune(r)
		}
	}
	out := []string{}
	for _, item := range strings.Split(b.String(), ",") {
		if words := strings.Fields(item); len(words) > 0 && ours(words[0]) {
			out = append(out, words[0])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// graph is the real import graph of our packages: package → the packages
// of ours it imports directly, both relative to the main module.
type graph map[string][]string

// governor returns the drawn package that speaks for p: p itself, else its
// nearest drawn ancestor ("" when none is drawn).
func (a drawnArrows) governor(p string) string {
	for q := p; ; {
		if _, ok := a[q]; ok {
			return q
		}
		i := strings.LastIndexByte(q, '/')
		if i < 0 {
			return ""
		}
		q = q[:i]
	}
}

// needsNoArrow reports whether an import of imp by a package that gov
// speaks for is drawn by no arrow: imp is spoken for by gov too (a package
// of gov's tree without a line of its own), or it is an internal package
// of gov's parent tree (the go tool already confines internal packages to
// that tree). The module's own internal/ packages are drawn.
func (a drawnArrows) needsNoArrow(gov, imp string) bool {
	if a.governor(imp) == gov {
		return true
	}
	parent, _, found := strings.Cut(imp, "/internal/")
	return found && underPrefix(gov, parent)
}

// compare holds the real graph against the drawn arrows both ways and
// returns one message per difference: a package no line speaks for, an
// import of ours that is not drawn, and a drawn arrow that no package of
// the drawn one's tree has. The messages are sorted.
func compare(a drawnArrows, g graph) []string {
	var out []string
	used := map[string]map[string]bool{}
	for p, imps := range g {
		gov := a.governor(p)
		if gov == "" {
			out = append(out, fmt.Sprintf("%s is not drawn in %s: add a line for it (or an ancestor) to the Arrows block", p, architectureDoc))
			continue
		}
		for _, imp := range imps {
			if a.needsNoArrow(gov, imp) {
				continue
			}
			if !slices.Contains(a[gov], imp) {
				out = append(out, fmt.Sprintf("%s imports %s, which %s does not draw (%s %s %s)", p, imp, architectureDoc, gov, arrowSign, strings.Join(a[gov], ", ")))
				continue
			}
			if used[gov] == nil {
				used[gov] = map[string]bool{}
			}
			used[gov][imp] = true
		}
	}
	for gov, imps := range a {
		for _, imp := range imps {
			if !used[gov][imp] {
				out = append(out, fmt.Sprintf("%s draws %s %s %s, but no package of %s imports it: the doc has drifted from the code", architectureDoc, gov, arrowSign, imp, gov))
			}
		}
	}
	slices.Sort(out)
	return out
}

// realGraph lists the packages of both modules (go list, their own
// imports, not their tests') as a graph relative to the main module.
func realGraph(t *testing.T) graph {
	t.Helper()
	g := graph{}
	for _, dir := range []string{".", "collector"} {
		pkgs, roots := goListDeps(t, dir, []string{"./..."})
		for _, root := range roots {
			rel, ok := relOurs(root)
			if !ok {
				continue
			}
			imps := []string{}
			for _, imp := range pkgs[root].Imports {
				if r, ok := relOurs(imp); ok {
					imps = append(imps, r)
				}
			}
			g[rel] = imps
		}
	}
	return g
}

// relOurs returns path relative to the main module, false when it is not
// one of ours (or is the module root itself).
func relOurs(path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

// TestArchitectureDocDrawsThePackageGraph parses the Arrows block of
// docs/architecture.md and holds every package of both modules against it:
// each import of ours must be drawn from the package's line (or its
// nearest drawn ancestor's), and each drawn arrow must exist, so the page
// and the code cannot drift apart. The compiler's own rules (an import
// cycle, an internal package outside its tree) are not repeated here.
func TestArchitectureDocDrawsThePackageGraph(t *testing.T) {
	g := realGraph(t)
	ours := func(w string) bool { _, ok := g[w]; return ok }
	a, err := parseArrows(filepath.Join("..", "..", architectureDoc), ours)
	if err != nil {
		t.Fatal(err)
	}
	if len(g) < 20 {
		t.Fatalf("go list found %d packages of ours: the test checks too little", len(g))
	}
	for _, msg := range compare(a, g) {
		t.Error(msg)
	}
}

// TestCompareFindsEveryDrift pins the comparison on a made-up graph: an
// undrawn import, an undrawn package, a drawn arrow nobody has, and the
// imports that need no arrow (a package's own tree, its parent's internal
// packages) each come out as they should.
func TestCompareFindsEveryDrift(t *testing.T) {
	a := drawnArrows{
		"analyze":      {"spans"},
		"analyze/gate": {"analyze/report", "spans"},
		"spans":        {},
		"cmd/mcptrace": {"analyze", "internal/demo"},
	}
	tests := []struct {
		name string
		g    graph
		want []string
	}{
		{
			name: "the drawn graph exactly, with own-tree and internal imports, is clean",
			g: graph{
				"analyze":        {"spans", "analyze/internal/textfmt", "analyze/ingest"},
				"analyze/ingest": {"spans"},
				"analyze/report": {},
				"analyze/gate":   {"analyze/report", "spans", "analyze/internal/textfmt"},
				"spans":          {},
				"cmd/mcptrace":   {"analyze", "internal/demo"},
				"internal/demo":  {},
			},
			want: []string{"internal/demo is not drawn in docs/architecture.md: add a line for it (or an ancestor) to the Arrows block"},
		},
		{
			name: "an undrawn import is named with the line it breaks",
			g: graph{
				"analyze":      {"spans"},
				"analyze/gate": {"analyze/report", "spans", "analyze"},
				"spans":        {},
				"cmd/mcptrace": {"analyze", "internal/demo"},
			},
			want: []string{"analyze/gate imports analyze, which docs/architecture.md does not draw (analyze/gate ──▶ analyze/report, spans)"},
		},
		{
			name: "a drawn arrow no package has is drift",
			g: graph{
				"analyze":      {"spans"},
				"analyze/gate": {"analyze/report"},
				"spans":        {},
				"cmd/mcptrace": {"analyze", "internal/demo"},
			},
			want: []string{"docs/architecture.md draws analyze/gate ──▶ spans, but no package of analyze/gate imports it: the doc has drifted from the code"},
		},
		{
			name: "the module's own internal packages are drawn, not implied",
			g: graph{
				"analyze":      {"spans", "internal/tracegen"},
				"analyze/gate": {"analyze/report", "spans"},
				"spans":        {},
				"cmd/mcptrace": {"analyze", "internal/demo"},
			},
			want: []string{"analyze imports internal/tracegen, which docs/architecture.md does not draw (analyze ──▶ spans)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compare(a, tt.g); !slices.Equal(got, tt.want) {
				t.Errorf("compare:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestParseArrowsReadsTheBlockAndRefusesMalformedLines pins the parser:
// prose and parentheses on the right are dropped, and a line that is not
// "PACKAGE ──▶ LIST", or draws an unknown package, is an error naming its
// line.
func TestParseArrowsReadsTheBlockAndRefusesMalformedLines(t *testing.T) {
	ours := func(w string) bool { return slices.Contains([]string{"analyze", "spans", "pool", "analyze/ingest"}, w) }
	write := func(t *testing.T, block string) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "a.md")
		doc := "# x\n\n```text\nignored ──▶ before the heading\n```\n\n## Arrows\n\n```text\n" + block + "```\n"
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, err := parseArrows(write(t, "analyze ──▶ analyze/ingest, spans (and the MCP Go SDK, pool), OpenTelemetry API\npool ──▶ spans\nspans ──▶ nothing\n"), ours)
	if err != nil {
		t.Fatal(err)
	}
	want := drawnArrows{"analyze": {"analyze/ingest", "spans"}, "pool": {"spans"}, "spans": {}}
	if fmt.Sprint(a) != fmt.Sprint(want) {
		t.Errorf("parsed %v, want %v", a, want)
	}
	for _, bad := range []struct{ block, want string }{
		{"analyze -> spans\n", ":10: "},
		{"analyze ──▶ spans\nanalyze ──▶ pool\n", ":11: analyze is drawn twice"},
		{"nosuch ──▶ spans\n", ":10: nosuch is drawn but is no package of ours"},
		{"", "draws no arrow"},
	} {
		if _, err := parseArrows(write(t, bad.block), ours); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("block %q: error %v, want one containing %q", bad.block, err, bad.want)
		}
	}
}
