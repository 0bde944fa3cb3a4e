package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"
)

// siteWalk is the typed operators' view of one file: its source, the
// package's types, each node's parent and the expressions written to
// (an assignment's left side, an operand of &, a pointer method's
// receiver), which sibling-field and invert-parsed-bool never change:
// they mutate reads only.
type siteWalk struct {
	tp      *typedPackage
	base    string
	src     []byte
	parent  map[ast.Node]ast.Node
	written map[ast.Expr]bool
	out     []mutant
}

// typedSites returns the typed operators' mutants of one file of tp, in
// no particular order (findSites sorts).
func typedSites(tp *typedPackage, f *ast.File, base string, src []byte) []mutant {
	w := &siteWalk{tp: tp, base: base, src: src, parent: map[ast.Node]ast.Node{}, written: map[ast.Expr]bool{}}
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if len(stack) > 0 {
			w.parent[n] = stack[len(stack)-1]
		}
		stack = append(stack, n)
		w.markWrites(n)
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SwitchStmt:
			w.swapClauses(x.Body)
		case *ast.TypeSwitchStmt:
			w.swapClauses(x.Body)
		case *ast.IfStmt:
			w.swapIfChain(x)
			w.dropCtxIf(x)
		case *ast.SelectStmt:
			w.dropCtxCase(x)
		case *ast.SelectorExpr:
			w.fieldRead(x)
		case *ast.CallExpr:
			w.dropCall(x)
			w.invertParseBool(x)
		case *ast.AssignStmt:
			w.dropReset(x)
		case *ast.BinaryExpr:
			w.shiftBound(x)
		}
		return true
	})
	return w.out
}

func (w *siteWalk) off(p token.Pos) int { return w.tp.fset.Position(p).Offset }

func (w *siteWalk) text(n ast.Node) string { return string(w.src[w.off(n.Pos()):w.off(n.End())]) }

// add records the mutant replacing the bytes [start, end) by repl, on the
// line of at.
func (w *siteWalk) add(at token.Pos, start, end int, op, desc, repl string) {
	pos := w.tp.fset.Position(at)
	w.out = append(w.out, mutant{File: w.base, Line: pos.Line, Col: pos.Column, Op: op, Desc: desc,
		start: start, end: end, repl: repl})
}

// addNode records the mutant replacing n by repl.
func (w *siteWalk) addNode(n ast.Node, op, desc, repl string) {
	w.add(n.Pos(), w.off(n.Pos()), w.off(n.End()), op, desc, repl)
}

// markWrites records the expressions n writes to.
func (w *siteWalk) markWrites(n ast.Node) {
	switch x := n.(type) {
	case *ast.AssignStmt:
		for _, l := range x.Lhs {
			w.markWritten(l)
		}
	case *ast.IncDecStmt:
		w.markWritten(x.X)
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			w.markWritten(x.X)
		}
	case *ast.RangeStmt:
		if x.Tok == token.ASSIGN {
			w.markWritten(x.Key)
			w.markWritten(x.Value)
		}
	case *ast.SelectorExpr:
		// A pointer method called on a value takes the value's address.
		if s := w.tp.info.Selections[x]; s != nil && s.Kind() == types.MethodVal && !isPointer(s.Recv()) {
			if sig, ok := s.Obj().Type().(*types.Signature); ok && sig.Recv() != nil && isPointer(sig.Recv().Type()) {
				w.markWritten(x.X)
			}
		}
	}
}

// markWritten marks e written and, while e is a part of a value (a field
// of a struct value, an element of an array), the value holding it.
func (w *siteWalk) markWritten(e ast.Expr) {
	for e != nil {
		w.written[e] = true
		var inner ast.Expr
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.SelectorExpr:
			inner = x.X
		case *ast.IndexExpr:
			inner = x.X
		default:
			return
		}
		t := w.tp.info.TypeOf(inner)
		if t == nil {
			return
		}
		switch t.Underlying().(type) {
		case *types.Struct, *types.Array:
			e = inner
		default:
			return
		}
	}
}

func isPointer(t types.Type) bool {
	_, ok := t.Underlying().(*types.Pointer)
	return ok
}

// swapClauses swaps the bodies of each two adjacent case clauses.
func (w *siteWalk) swapClauses(body *ast.BlockStmt) {
	span := func(c *ast.CaseClause) (int, int) {
		if len(c.Body) == 0 {
			p := w.off(c.Colon) + 1
			return p, p
		}
		return w.off(c.Body[0].Pos()), w.off(c.Body[len(c.Body)-1].End())
	}
	for i := 0; i+1 < len(body.List); i++ {
		a, b := body.List[i].(*ast.CaseClause), body.List[i+1].(*ast.CaseClause)
		as, ae := span(a)
		bs, be := span(b)
		w.swapSpans(a.Case, b.Case, as, ae, bs, be)
	}
}

// swapIfChain swaps the bodies of each two adjacent branches of an if /
// else if / else chain, from its head.
func (w *siteWalk) swapIfChain(x *ast.IfStmt) {
	if p, ok := w.parent[x].(*ast.IfStmt); ok && p.Else == x {
		return
	}
	var bodies []*ast.BlockStmt
	for s := ast.Stmt(x); s != nil; {
		switch y := s.(type) {
		case *ast.IfStmt:
			bodies = append(bodies, y.Body)
			s = y.Else
		case *ast.BlockStmt:
			bodies = append(bodies, y)
			s = nil
		}
	}
	for i := 0; i+1 < len(bodies); i++ {
		a, b := bodies[i], bodies[i+1]
		w.swapSpans(a.Lbrace, b.Lbrace, w.off(a.Pos()), w.off(a.End()), w.off(b.Pos()), w.off(b.End()))
	}
}

// swapSpans records the mutant exchanging the bytes [as, ae) and [bs, be)
// (as ≤ ae ≤ bs ≤ be), unless they are the same text.
func (w *siteWalk) swapSpans(at, other token.Pos, as, ae, bs, be int) {
	a, b := w.src[as:ae], w.src[bs:be]
	if bytes.Equal(a, b) {
		return
	}
	desc := fmt.Sprintf("bodies of lines %d and %d swapped", w.tp.fset.Position(at).Line, w.tp.fset.Position(other).Line)
	w.add(at, as, be, opSwapBranches, desc, string(b)+string(w.src[ae:bs])+string(a))
}

// fieldRead makes the mutants of a read of a struct's own field.
func (w *siteWalk) fieldRead(x *ast.SelectorExpr) {
	s := w.tp.info.Selections[x]
	if s == nil || s.Kind() != types.FieldVal || w.written[x] || len(s.Index()) != 1 {
		return
	}
	t := s.Recv()
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return
	}
	i := s.Index()[0]
	w.siblingField(x, st, i)
	w.invertTaggedBool(x, st, i)
}

// siblingField reads, instead of field i of st, the next field (in
// declaration order, wrapping) of the same type: one mutant per read.
func (w *siteWalk) siblingField(x *ast.SelectorExpr, st *types.Struct, i int) {
	f := st.Field(i)
	for k := 1; k < st.NumFields(); k++ {
		g := st.Field((i + k) % st.NumFields())
		if g.Embedded() || g.Name() == "_" || !types.Identical(g.Type(), f.Type()) || (!g.Exported() && g.Pkg() != w.tp.pkg) {
			continue
		}
		w.addNode(x.Sel, opSiblingField, "."+f.Name()+" → ."+g.Name(), g.Name())
		return
	}
}

// invertTaggedBool negates a read of a bool field a json or yaml tag
// names: a flag decoded from input.
func (w *siteWalk) invertTaggedBool(x *ast.SelectorExpr, st *types.Struct, i int) {
	if b, ok := st.Field(i).Type().Underlying().(*types.Basic); !ok || b.Kind() != types.Bool {
		return
	}
	tag := reflect.StructTag(st.Tag(i))
	for _, key := range []string{"json", "yaml"} {
		if v, ok := tag.Lookup(key); ok && v != "-" {
			w.addNode(x, opInvertBool, "."+st.Field(i).Name()+" → !", "!"+w.text(x))
			return
		}
	}
}

// calledFunc returns the package function or method c calls, if any.
func (w *siteWalk) calledFunc(c *ast.CallExpr) *types.Func {
	var id *ast.Ident
	switch f := ast.Unparen(c.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return nil
	}
	fn, _ := w.tp.info.Uses[id].(*types.Func)
	return fn
}

// isFunc reports whether fn is the function or method pkg.name of one of names.
func isFunc(fn *types.Func, pkg string, names ...string) bool {
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != pkg {
		return false
	}
	for _, n := range names {
		if fn.Name() == n {
			return true
		}
	}
	return false
}

// mentionsCtx reports whether n calls a context's Err or Done (or
// context.Cause).
func (w *siteWalk) mentionsCtx(n ast.Node) bool {
	if n == nil || reflect.ValueOf(n).IsNil() {
		return false
	}
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && isFunc(w.calledFunc(c), "context", "Err", "Done", "Cause") {
			found = true
		}
		return !found
	})
	return found
}

// dropCtxIf removes an if whose init or condition tests a context (its
// else, if any, left in its place).
func (w *siteWalk) dropCtxIf(x *ast.IfStmt) {
	if !w.mentionsCtx(x.Init) && !w.mentionsCtx(x.Cond) {
		return
	}
	repl := ""
	switch w.parent[x].(type) {
	case *ast.IfStmt:
		repl = "{}"
	case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
	default:
		return
	}
	if x.Else != nil {
		repl = w.text(x.Else)
	}
	w.addNode(x, opDropCtx, "if on ctx dropped", repl)
}

// dropCtxCase removes a select's case receiving from a context's Done
// when the select has another case.
func (w *siteWalk) dropCtxCase(x *ast.SelectStmt) {
	if len(x.Body.List) < 2 {
		return
	}
	for _, s := range x.Body.List {
		cc := s.(*ast.CommClause)
		var e ast.Expr
		switch c := cc.Comm.(type) {
		case *ast.ExprStmt:
			e = c.X
		case *ast.AssignStmt:
			e = c.Rhs[0]
		}
		u, ok := ast.Unparen(e).(*ast.UnaryExpr)
		if !ok || u.Op != token.ARROW {
			continue
		}
		if c, ok := ast.Unparen(u.X).(*ast.CallExpr); ok && isFunc(w.calledFunc(c), "context", "Done") {
			w.addNode(cc, opDropCtx, "case <-ctx.Done() dropped", "")
		}
	}
}

// dropCall replaces a call f(x) by x when the call has x's type: an
// escaping, clipping or normalising step skipped.
func (w *siteWalk) dropCall(c *ast.CallExpr) {
	if len(c.Args) != 1 || c.Ellipsis.IsValid() {
		return
	}
	if ft := w.tp.info.Types[c.Fun]; ft.IsType() || ft.IsBuiltin() {
		return
	}
	rt, at := w.tp.info.TypeOf(c), w.tp.info.TypeOf(c.Args[0])
	if rt == nil || at == nil || !types.Identical(rt, at) {
		return
	}
	if _, tuple := rt.(*types.Tuple); tuple {
		return
	}
	repl := w.text(c.Args[0])
	switch c.Args[0].(type) {
	case *ast.Ident, *ast.SelectorExpr, *ast.CallExpr, *ast.IndexExpr, *ast.BasicLit, *ast.ParenExpr, *ast.CompositeLit, *ast.SliceExpr:
	default:
		repl = "(" + repl + ")"
	}
	w.add(c.Lparen, w.off(c.Pos()), w.off(c.End()), opDropCall, w.text(c.Fun)+"(x) → x", repl)
}

// dropReset removes an assignment of a zero value to a field: a state
// never reset.
func (w *siteWalk) dropReset(a *ast.AssignStmt) {
	if a.Tok != token.ASSIGN || len(a.Lhs) != 1 || len(a.Rhs) != 1 {
		return
	}
	sel, ok := ast.Unparen(a.Lhs[0]).(*ast.SelectorExpr)
	if !ok || w.tp.info.Selections[sel] == nil || w.tp.info.Selections[sel].Kind() != types.FieldVal || !w.isZero(a.Rhs[0]) {
		return
	}
	switch w.parent[a].(type) {
	case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
		w.addNode(a, opDropReset, "drop "+w.text(a), "")
	}
}

// isZero reports whether e is nil, a zero constant or an empty composite
// literal.
func (w *siteWalk) isZero(e ast.Expr) bool {
	if cl, ok := ast.Unparen(e).(*ast.CompositeLit); ok {
		return len(cl.Elts) == 0
	}
	tv := w.tp.info.Types[e]
	if tv.IsNil() {
		return true
	}
	if tv.Value == nil {
		return false
	}
	switch tv.Value.Kind() {
	case constant.Bool:
		return !constant.BoolVal(tv.Value)
	case constant.String:
		return constant.StringVal(tv.Value) == ""
	case constant.Int, constant.Float, constant.Complex:
		return constant.Sign(tv.Value) == 0
	}
	return false
}

// invertParseBool negates strconv.ParseBool's result where it is kept.
func (w *siteWalk) invertParseBool(c *ast.CallExpr) {
	if !isFunc(w.calledFunc(c), "strconv", "ParseBool") {
		return
	}
	if a, ok := w.parent[c].(*ast.AssignStmt); ok {
		if id, ok := a.Lhs[0].(*ast.Ident); ok && id.Name == "_" {
			return
		}
	}
	if s, ok := w.parent[c].(*ast.ValueSpec); ok && s.Names[0].Name == "_" {
		return
	}
	repl := "func(b bool, err error) (bool, error) { return !b, err }(" + w.text(c) + ")"
	w.addNode(c, opInvertBool, "ParseBool → !", repl)
}

// shiftSteps are shift-bound's steps for each comparison: the right
// operand moved by each. Moving it the other way would repeat a boundary
// mutant (a < b+1 is a <= b for integers), so < and >= step down, <= and
// > step up, and == and != both ways.
var shiftSteps = map[token.Token][]int{
	token.LSS: {-1}, token.GEQ: {-1},
	token.LEQ: {+1}, token.GTR: {+1},
	token.EQL: {-1, +1}, token.NEQ: {-1, +1},
}

// shiftBound makes shift-bound's mutants of a comparison of two integers,
// not both constant: its right operand one more or one less (a < 0x20 →
// a < 0x20-1, len(s) != 1 → len(s) != 1+1). It is the off-by-one in the
// limit itself (a length, a digit's range, a field's end) where boundary
// only moves the comparison: a test that pins each limit by its own
// values kills both. An unsigned comparison with a constant 0 is not
// stepped down (0-1 does not compile).
func (w *siteWalk) shiftBound(x *ast.BinaryExpr) {
	steps := shiftSteps[x.Op]
	if len(steps) == 0 || !w.isInteger(x.X) || !w.isInteger(x.Y) || w.isConst(x.X) && w.isConst(x.Y) {
		return
	}
	right := w.text(x.Y)
	for _, d := range steps {
		if d < 0 && w.isZero(x.Y) && w.isUnsigned(x.X) {
			continue
		}
		repl := fmt.Sprintf("%s%+d", right, d)
		w.add(x.OpPos, w.off(x.Y.Pos()), w.off(x.Y.End()), opShiftBound, right+" → "+repl, repl)
	}
}

// isInteger reports whether e has an integer type (typed or untyped).
func (w *siteWalk) isInteger(e ast.Expr) bool {
	b, ok := w.basic(e)
	return ok && b.Info()&types.IsInteger != 0
}

// isUnsigned reports whether e has an unsigned integer type.
func (w *siteWalk) isUnsigned(e ast.Expr) bool {
	b, ok := w.basic(e)
	return ok && b.Info()&types.IsUnsigned != 0
}

// basic returns e's underlying basic type, if it has one.
func (w *siteWalk) basic(e ast.Expr) (*types.Basic, bool) {
	t := w.tp.info.TypeOf(e)
	if t == nil {
		return nil, false
	}
	b, ok := t.Underlying().(*types.Basic)
	return b, ok
}

// isConst reports whether e is a constant.
func (w *siteWalk) isConst(e ast.Expr) bool { return w.tp.info.Types[e].Value != nil }
