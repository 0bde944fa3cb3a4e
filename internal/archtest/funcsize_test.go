package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Limits of a function a reader can hold: its lines, braces
// included, and its cyclomatic complexity as gocyclo counts it.
const (
	maxFuncLines      = 60
	maxFuncComplexity = 15
)

// sizedTrees are the trees whose functions the limits hold for.
var sizedTrees = []string{"analyze", "pool"}

// funcSize is one function's name, place, lines and complexity.
type funcSize struct {
	name, at          string
	lines, complexity int
}

// complexity is gocyclo's count: 1, plus one per if, for, range, case or
// select clause other than default, and per && or ||.
func complexity(body ast.Node) int {
	n := 1
	ast.Inspect(body, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// funcSizes measures every function and method outside tests and
// generated files under root.
func funcSizes(root string) ([]funcSize, error) {
	var out []funcSize
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			out = append(out, funcSize{name: fd.Name.Name, at: fmt.Sprintf("%s:%d", path, start.Line),
				lines: end.Line - start.Line + 1, complexity: complexity(fd)})
		}
		return nil
	})
	return out, err
}

// TestFunctionsAreSmallEnoughToHold holds every function of analyze/ and
// pool/ to 60 lines and a cyclomatic complexity of 15, so a long function
// fails here when it is written, not in a review months later.
func TestFunctionsAreSmallEnoughToHold(t *testing.T) {
	for _, tree := range sizedTrees {
		sizes, err := funcSizes(filepath.Join("..", "..", tree))
		if err != nil {
			t.Fatal(err)
		}
		if len(sizes) < 100 {
			t.Fatalf("%s: %d functions measured: the walk missed the tree", tree, len(sizes))
		}
		for _, s := range sizes {
			if s.lines > maxFuncLines || s.complexity > maxFuncComplexity {
				t.Errorf("%s %s: %d lines, complexity %d; want at most %d and %d (split it into the steps it takes)",
					s.at, s.name, s.lines, s.complexity, maxFuncLines, maxFuncComplexity)
			}
		}
	}
}

// TestComplexityCountsAsGocyclo pins the count on small functions, one
// construct each, and the limits' edges.
func TestComplexityCountsAsGocyclo(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"func f() {}", 1},
		{"func f(a bool) { if a {} }", 2},
		{"func f(a, b bool) { if a && b || a {} }", 4},
		{"func f(n int) { for i := 0; i < n; i++ {}; for range n {} }", 3},
		{"func f(n int) { switch n { case 1: case 2, 3: default: } }", 3},
		{"func f(c chan int) { select { case <-c: default: } }", 2},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n"+tc.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := complexity(f.Decls[0]); got != tc.want {
			t.Errorf("%s: complexity %d, want %d", tc.src, got, tc.want)
		}
	}
}
