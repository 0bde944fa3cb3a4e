package main

import (
	"bufio"
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// mutant is one small change to one source file: the bytes [start, end)
// of file replaced by repl. It never touches the file on disk: the runner
// hands the changed copy to go test through -overlay.
type mutant struct {
	File  string `json:"file"` // base name, in the package directory
	Line  int    `json:"line"`
	Col   int    `json:"col"` // two mutants of one operator on a line differ here
	Op    string `json:"op"`
	Desc  string `json:"desc"` // e.g. "< → <="
	start int
	end   int
	repl  string
}

// Operators. Each is a change a test that pins a boundary must notice.
const (
	opBoundary = "boundary"       // < ↔ <=, > ↔ >=
	opNegate   = "negate"         // == ↔ !=
	opDropCond = "drop-condition" // a && b → a, a && b → b (|| likewise)
	opIncDec   = "remove-incdec"  // x++ → _ = x
	opTimeBnd  = "time-boundary"  // t.After(u) → !t.Before(u), Before likewise
	opClamp    = "remove-clamp"   // max(a, b) → a or b (min likewise)
)

// Typed operators (ops.go): each needs the package's types to stay
// compilable, and each is a kind of fault the boundary operators above
// never make: a branch taken for another, the wrong field read, an
// escaping or normalising step skipped, a cancellation ignored, a state
// never reset, a flag read backwards.
const (
	opSwapBranches = "swap-branches"      // the bodies of two adjacent switch cases, or if / else-if branches, swapped
	opSiblingField = "sibling-field"      // x.a → x.b, b the next field of a's struct with a's type (reads only)
	opDropCall     = "drop-call"          // f(x) → x when f(x) has x's type
	opDropCtx      = "drop-ctx-check"     // an if testing ctx.Err() / ctx.Done() removed; a select's case <-ctx.Done() removed
	opDropReset    = "drop-reset"         // x.f = nil / "" / 0 / false / T{} removed
	opInvertBool   = "invert-parsed-bool" // strconv.ParseBool's result, a json/yaml-tagged bool field read → !
	opShiftBound   = "shift-bound"        // an integer comparison's right operand ±1, where boundary's flip does not reach
)

var swap = map[token.Token]struct {
	to token.Token
	op string
}{
	token.LSS: {token.LEQ, opBoundary}, token.LEQ: {token.LSS, opBoundary},
	token.GTR: {token.GEQ, opBoundary}, token.GEQ: {token.GTR, opBoundary},
	token.EQL: {token.NEQ, opNegate}, token.NEQ: {token.EQL, opNegate},
}

// fileFilter chooses the files mutated by their base name: those only
// matches (nil: all) that skip does not (nil: none).
type fileFilter struct{ only, skip *regexp.Regexp }

// keep reports whether the file named base is mutated.
func (f fileFilter) keep(base string) bool {
	return (f.only == nil || f.only.MatchString(base)) && (f.skip == nil || !f.skip.MatchString(base))
}

// findSites type-checks the package in dir and returns every mutant of its
// non-test Go files that files keeps, in file and offset order, with the
// files' sources and the typed package (to type-check a mutant before it
// is built).
func findSites(ctx context.Context, dir string, files fileFilter) ([]mutant, map[string][]byte, *typedPackage, error) {
	tp, err := loadPackage(ctx, dir)
	if err != nil {
		return nil, nil, nil, err
	}
	srcs := map[string][]byte{}
	var out []mutant
	for i, base := range tp.names {
		f := tp.files[i]
		if !files.keep(base) || ast.IsGenerated(f) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, base))
		if err != nil {
			return nil, nil, nil, err
		}
		srcs[base] = src
		out = append(out, fileSites(tp.fset, f, base, src)...)
		out = append(out, typedSites(tp, f, base, src)...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].start < out[j].start
	})
	return out, srcs, tp, nil
}

// fileSites walks one file's syntax tree for the operators' sites.
func fileSites(fset *token.FileSet, f *ast.File, base string, src []byte) []mutant {
	var out []mutant
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }
	add := func(at token.Pos, n ast.Node, op, desc, repl string) {
		start, end := off(n.Pos()), off(n.End())
		pos := fset.Position(at)
		out = append(out, mutant{File: base, Line: pos.Line, Col: pos.Column, Op: op, Desc: desc, start: start, end: end, repl: repl})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BinaryExpr:
			if s, ok := swap[x.Op]; ok {
				p := off(x.OpPos)
				pos := fset.Position(x.OpPos)
				out = append(out, mutant{File: base, Line: pos.Line, Col: pos.Column, Op: s.op,
					Desc: x.Op.String() + " → " + s.to.String(), start: p, end: p + len(x.Op.String()), repl: s.to.String()})
			}
			if x.Op == token.LAND || x.Op == token.LOR {
				add(x.OpPos, x, opDropCond, "keep left of "+x.Op.String(), "("+text(x.X)+")")
				add(x.OpPos, x, opDropCond, "keep right of "+x.Op.String(), "("+text(x.Y)+")")
			}
		case *ast.IncDecStmt:
			add(x.TokPos, x, opIncDec, "drop "+x.Tok.String(), "_ = "+text(x.X))
		case *ast.CallExpr:
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok && len(x.Args) == 1 && (sel.Sel.Name == "After" || sel.Sel.Name == "Before") {
				other := map[string]string{"After": "Before", "Before": "After"}[sel.Sel.Name]
				add(sel.Sel.Pos(), x, opTimeBnd, sel.Sel.Name+" → !"+other, "!"+text(sel.X)+"."+other+"("+text(x.Args[0])+")")
			}
			if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "max" || id.Name == "min") && len(x.Args) == 2 {
				for i, a := range x.Args {
					if _, lit := a.(*ast.BasicLit); lit {
						continue
					}
					add(x.Lparen, x, opClamp, id.Name+" → arg "+strconv.Itoa(i+1), "("+text(a)+")")
				}
			}
		}
		return true
	})
	return out
}

// coveredLines reads a Go cover profile and returns, per file base name,
// the lines of the blocks the tests ran.
func coveredLines(profile string) (map[string]map[int]bool, error) {
	f, err := os.Open(profile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cov := map[string]map[int]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		// name.go:12.3,15.4 2 1
		colon := strings.LastIndex(line, ":")
		fields := strings.Fields(line[colon+1:])
		if colon < 0 || len(fields) != 3 {
			return nil, fmt.Errorf("%s: bad line %q", profile, line)
		}
		if fields[2] == "0" {
			continue
		}
		var l0, c0, l1, c1 int
		if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &l0, &c0, &l1, &c1); err != nil {
			return nil, fmt.Errorf("%s: bad block %q: %w", profile, fields[0], err)
		}
		base := filepath.Base(line[:colon])
		if cov[base] == nil {
			cov[base] = map[int]bool{}
		}
		for l := l0; l <= l1; l++ {
			cov[base][l] = true
		}
	}
	return cov, sc.Err()
}
