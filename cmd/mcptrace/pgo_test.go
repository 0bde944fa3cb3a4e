package main

import (
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// modulePath is the import path every package of this module starts with.
const modulePath = "github.com/mcptrace/mcptrace/"

// TestDefaultPGOProfilesTheReader pins default.pgo, the profile the go
// command builds mcptrace with (scripts/pgo-profile.sh writes it): a CPU
// profile of both readers, and not a stale one. The functions of this
// module that hold half of its own samples must all still be declared:
// a profile whose hot functions were renamed or removed optimises nothing
// they became, and the fix is to rerun the script.
func TestDefaultPGOProfilesTheReader(t *testing.T) {
	p := readProfile(t, "default.pgo")
	cpu := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			cpu = i
		}
	}
	if cpu < 0 {
		t.Fatalf("default.pgo: sample types %v, want a CPU profile", p.SampleType)
	}
	flat := map[string]int64{}
	seen := map[string]bool{}
	for _, s := range p.Sample {
		for k, loc := range s.Location {
			for j, ln := range loc.Line {
				if ln.Function == nil {
					continue
				}
				seen[ln.Function.Name] = true
				if k == 0 && j == 0 && strings.HasPrefix(ln.Function.Name, modulePath) {
					flat[ln.Function.Name] += s.Value[cpu]
				}
			}
		}
	}
	for _, reader := range []string{"analyze/ingest.(*fastDec).spanByShape", "analyze/ingest.(*protoDec).span"} {
		if !seen[modulePath+reader] {
			t.Errorf("default.pgo has no sample in %s: not a profile of both readers; rerun scripts/pgo-profile.sh", reader)
		}
	}
	decls := declarations{}
	for _, fn := range hottest(flat, 0.5) {
		if !decls.declared(t, fn) {
			t.Errorf("default.pgo's hot function %s is declared nowhere: a stale profile; rerun scripts/pgo-profile.sh", fn)
		}
	}
}

// hottest returns the functions of flat (samples per function) that hold
// share of its samples, the most sampled first.
func hottest(flat map[string]int64, share float64) []string {
	var total int64
	names := make([]string, 0, len(flat))
	for fn, v := range flat {
		names = append(names, fn)
		total += v
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(flat[b], flat[a]), strings.Compare(a, b))
	})
	var got int64
	for i, fn := range names {
		if float64(got) >= share*float64(total) {
			return names[:i]
		}
		got += flat[fn]
	}
	return names
}

// splitProfiled splits a profile's function name of this module, its
// type arguments left out, into its package's directory, its receiver's
// type ("*T" for a pointer; none for a function) and its name, closures
// left out: Go names a method on a pointer "pkg.(*T).m", on a value
// "pkg.T.m", and a closure
// "pkg.F.func1" (nested: "pkg.F.func1.2").
func splitProfiled(fn string) (dir, recv, name string, ok bool) {
	dot := strings.Index(fn, ".")
	if dot <= 0 {
		return "", "", "", false
	}
	dir, segs := fn[:dot], strings.Split(fn[dot+1:], ".")
	switch {
	case strings.HasPrefix(segs[0], "("):
		if len(segs) < 2 {
			return "", "", "", false
		}
		return dir, strings.Trim(segs[0], "()"), segs[1], true
	case len(segs) > 1 && !closureName.MatchString(segs[1]):
		return dir, segs[0], segs[1], true
	}
	return dir, "", segs[0], true
}

// closureName matches the name Go gives a closure or a go statement's
// wrapper within the function named before it.
var closureName = regexp.MustCompile(`^(func|gowrap|deferwrap)?[0-9]+$`)

// withoutTypeArgs returns fn without its bracketed type arguments, which
// may nest ("(*Heap[go.shape.[]T]).Pop").
func withoutTypeArgs(fn string) string {
	var b strings.Builder
	depth := 0
	for _, c := range fn {
		switch {
		case c == '[':
			depth++
		case c == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// declarations holds, per package directory of the module, the functions
// its non-test files declare, as "receiver.name" (receiverName), read
// once per directory however many of its functions are asked about.
type declarations map[string]map[string]bool

// declared reports whether fn, a profile's function name of this module,
// is declared in the module's source.
func (d declarations) declared(t *testing.T, fn string) bool {
	t.Helper()
	pkg, recv, name, ok := splitProfiled(withoutTypeArgs(strings.TrimPrefix(fn, modulePath)))
	if !ok {
		t.Fatalf("cannot read the profile's function name %q", fn)
	}
	if d[pkg] == nil {
		d[pkg] = declaredIn(t, filepath.Join("..", "..", filepath.FromSlash(pkg)))
	}
	return d[pkg][recv+"."+name]
}

// declaredIn returns the functions the non-test files of dir declare, as
// "receiver.name"; none when dir holds no Go file.
func declaredIn(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	decls := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok {
				decls[receiverName(fd)+"."+fd.Name.Name] = true
			}
		}
	}
	return decls
}

// receiverName is the type name of fd's receiver as a profile names it
// ("*T" for a pointer), "" for a function.
func receiverName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	typ, star := fd.Recv.List[0].Type, ""
	if p, ok := typ.(*ast.StarExpr); ok {
		typ, star = p.X, "*"
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return star + id.Name
	}
	return ""
}

// TestDeclaredReadsProfileNames pins how the staleness check reads a
// profile's function names: functions, methods on pointers and values,
// generic types whose arguments nest, closures.
func TestDeclaredReadsProfileNames(t *testing.T) {
	decls := declarations{}
	for _, c := range []struct {
		fn   string
		want bool
	}{
		{"analyze/ingest.stringStop", true},
		{"analyze/ingest.(*fastDec).spanByShape", true},
		{"analyze/ingest.(*fastDec).spanByShape.func2", true},
		{"analyze/internal/minheap.(*Heap[go.shape.[]github.com/mcptrace/mcptrace/analyze/internal/record.Acquire]).Pop", true},
		{"pool/idle.(*Core[go.shape.int32,go.shape.struct {},go.shape.struct {}]).TakeIdle", true},
		{"analyze/internal/vocab.signature.outranks", true},
		{"analyze/internal/vocab.signature.noSuchMethod", false},
		{"analyze/internal/vocab.Detect.func1", true},
		{"analyze/internal/vocab.Detect.func1.2", true},
		{"analyze/internal/phase.Go.gowrap1", true},
		{"analyze/internal/vocab.newSpanMarks", true},
		{"analyze/internal/vocab.spanMarks.observe", false}, // a method on *spanMarks, not on spanMarks: Go names it (*spanMarks)
		{"analyze/ingest.(*fastDec).noSuchMethod", false},
		{"analyze/ingest.(*protoDec).spanByShape", false},
		{"analyze/ingest.(fastDec).spanByShape", false}, // on *fastDec, not on fastDec
		{"analyze/nosuchpackage.Read", false},
	} {
		if got := decls.declared(t, modulePath+c.fn); got != c.want {
			t.Errorf("declared(%s) = %v, want %v", c.fn, got, c.want)
		}
	}
}
