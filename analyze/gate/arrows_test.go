package gate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestGateReadsTheAnalysisValueNotTheIndex keeps the package's arrows: of
// ours it imports analyze, analyze/rulefmt, analyze/report, spans and analyze's internal text helpers only,
// and it names none of analyze's index or loading API, so it can only judge
// what the Report and the rule observations hold.
func TestGateReadsTheAnalysisValueNotTheIndex(t *testing.T) {
	allowed := []string{"github.com/mcptrace/mcptrace/analyze", "github.com/mcptrace/mcptrace/analyze/rulefmt", "github.com/mcptrace/mcptrace/analyze/report", "github.com/mcptrace/mcptrace/spans", "github.com/mcptrace/mcptrace/analyze/internal/textfmt"}
	forbidden := []string{"Index", "NewIndex", "IndexOptions", "Load", "LoadOptions", "Read", "ReadOptions", "AnalyzeFiles", "ObserveRules", "Analyze", "AnalyzeRules", "MergeIndexOptions", "RulesIndexOptions"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/mcptrace/mcptrace") && !slices.Contains(allowed, path) {
				t.Errorf("%s imports %s: the gate may import only %v of ours", name, path, allowed)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "analyze" && slices.Contains(forbidden, sel.Sel.Name) {
				t.Errorf("%s names analyze.%s: the gate reads the analysis value, never the index", name, sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 5 {
		t.Fatalf("checked %d files, want the package's sources", checked)
	}
}
