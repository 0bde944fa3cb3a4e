package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// privateTypes are, per package directory, the types no exported signature
// may name, declared there or (as "pkg.Type") in a package it imports: the
// analyzer's span index lives in analyze/internal/index, and the engine's
// callers hold a dump as the opaque analyze.Dump, never the index.
var privateTypes = map[string][]string{
	"analyze/internal/engine": {"index.Index"},
}

// exposures returns, for one parsed package, a message for every place its
// API names one of the private types: an exported function, or an exported
// method of an exported type, whose parameters or results name it; an
// exported type that is, aliases or embeds it, or has an exported field or
// method naming it; an exported variable or constant declared with it. A
// private type the package does not declare (or, for "pkg.Type", whose
// package it does not import) is an error too, so the check cannot pass by
// a rename. Unexported fields (Dump's own) are no API.
func exposures(fset *token.FileSet, files []*ast.File, private []string) []string {
	names := map[string]bool{}
	for _, p := range private {
		names[p] = true
	}
	var out []string
	declared := map[string]bool{}
	report := func(n ast.Node, what string) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	for _, f := range files {
		for _, imp := range f.Imports {
			markImported(imp, names, declared)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
					continue
				}
				if t := namedIn(d.Type, names); t != "" {
					report(d, fmt.Sprintf("exported %s names the private type %s in its signature", funcName(d), t))
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if names[s.Name.Name] {
							declared[s.Name.Name] = true
						}
						if !s.Name.IsExported() {
							continue
						}
						if t := namedIn(s.Type, names); t != "" {
							report(s, fmt.Sprintf("exported type %s names the private type %s", s.Name.Name, t))
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Type != nil {
								if t := namedIn(s.Type, names); t != "" {
									report(n, fmt.Sprintf("exported %s is declared as the private type %s", n.Name, t))
								}
							}
						}
					}
				}
			}
		}
	}
	for _, p := range private {
		if !declared[p] {
			out = append(out, fmt.Sprintf("the package declares no type %s: the check would hold nothing (update privateTypes)", p))
		}
	}
	return out
}

// markImported marks as declared each private "pkg.Type" whose package imp
// imports (by its name, else its path's last element): the check holds
// something only while the package can name the type.
func markImported(imp *ast.ImportSpec, names, declared map[string]bool) {
	path := strings.Trim(imp.Path.Value, `"`)
	pkg := path[strings.LastIndexByte(path, '/')+1:]
	if imp.Name != nil {
		pkg = imp.Name.Name
	}
	for n := range names {
		if q, _, ok := strings.Cut(n, "."); ok && q == pkg {
			declared[n] = true
		}
	}
}

// exportedRecv reports whether a method's receiver type is exported: a
// method of an unexported type is no API, whatever its name.
func exportedRecv(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// funcName is a function's name as a reader writes it: F or T.M.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

// namedIn returns the first private type name that the type expression e
// shows a caller, "" when none: every identifier of it, except inside the
// unexported fields of a struct and the unexported methods of an
// interface. An embedded field counts whatever its name, since its
// methods are promoted.
func namedIn(e ast.Node, names map[string]bool) string {
	found := ""
	ast.Inspect(e, func(n ast.Node) bool {
		if found != "" {
			return false
		}
		switch x := n.(type) {
		case *ast.Ident:
			if names[x.Name] {
				found = x.Name
			}
		case *ast.SelectorExpr:
			if q, ok := x.X.(*ast.Ident); ok && names[q.Name+"."+x.Sel.Name] {
				found = q.Name + "." + x.Sel.Name
				return false
			}
		case *ast.StructType:
			found = namedInFields(x.Fields, names)
			return false
		case *ast.InterfaceType:
			found = namedInFields(x.Methods, names)
			return false
		}
		return true
	})
	return found
}

// namedInFields is namedIn over the exported (and embedded) fields or
// methods of a struct or an interface.
func namedInFields(fl *ast.FieldList, names map[string]bool) string {
	for _, f := range fl.List {
		shown := len(f.Names) == 0 // embedded
		for _, n := range f.Names {
			shown = shown || n.IsExported()
		}
		if !shown {
			continue
		}
		if t := namedIn(f.Type, names); t != "" {
			return t
		}
	}
	return ""
}

// parsePackageDir parses the non-test Go files of one directory.
func parsePackageDir(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("%s holds no Go file: the check holds nothing", dir)
	}
	return fset, files
}

// TestNoExportedSignatureNamesTheIndex holds analyze's API to its promise
// that the index is private: no exported function, method, type, field,
// variable or constant of the package names the index type, so a caller
// can reach it only through analyze.Dump's own methods and the functions
// that read a Dump.
func TestNoExportedSignatureNamesTheIndex(t *testing.T) {
	for dir, private := range privateTypes {
		fset, files := parsePackageDir(t, filepath.Join("..", "..", dir))
		for _, msg := range exposures(fset, files, private) {
			t.Error(msg)
		}
	}
}

// position is the place a message of exposures starts with.
var position = regexp.MustCompile(`^p\.go:\d+:\d+: `)

// TestExposuresFindsEveryWayToNameAType pins the checker on made-up
// source: each way an API can hand out a private type is found, and the
// ways that hand out nothing (an unexported field, a method of the private
// type itself, an unexported function) are not.
func TestExposuresFindsEveryWayToNameAType(t *testing.T) {
	const clean = `package p
type index struct{ n int }
type Dump struct{ x *index }
func NewDump() *Dump { return &Dump{x: &index{}} }
func (d *Dump) Add(n int) { d.x.n += n }
func (x *index) Spans() *index { return x }
func newIndex() *index { return nil }
type Opaque interface{ private() *index }
`
	tests := []struct {
		name, src string
		want      []string
	}{
		{"an opaque handle is clean", clean, nil},
		{"a parameter", clean + "func Analyze(x *index) {}\n", []string{"exported Analyze names the private type index in its signature"}},
		{"a result of a method", clean + "func (d *Dump) Raw() map[string][]*index { return nil }\n", []string{"exported Dump.Raw names the private type index in its signature"}},
		{"a func-typed parameter", clean + "func Each(fn func(*index)) {}\n", []string{"exported Each names the private type index in its signature"}},
		{"an alias", clean + "type Index = index\n", []string{"exported type Index names the private type index"}},
		{"an embedded field", clean + "type Wrap struct{ *index }\n", []string{"exported type Wrap names the private type index"}},
		{"an exported field", clean + "type Run struct{ Index *index }\n", []string{"exported type Run names the private type index"}},
		{"an exported interface method", clean + "type Source interface{ Index() *index }\n", []string{"exported type Source names the private type index"}},
		{"a variable", clean + "var Default *index\n", []string{"exported Default is declared as the private type index"}},
		{"the private type gone", "package p\ntype Index struct{}\n", []string{"the package declares no type index: the check would hold nothing (update privateTypes)"}},
	}
	const held = `package p
import "example.com/internal/index"
type Dump struct{ x *index.Index }
func NewDump() *Dump { return &Dump{x: index.New()} }
func load() *index.Index { return nil }
`
	tests = append(tests, []struct {
		name, src string
		want      []string
	}{
		{"an opaque handle of an imported type is clean", held, nil},
		{"an imported type in a result", held + "func Raw(d *Dump) *index.Index { return d.x }\n", []string{"exported Raw names the private type index.Index in its signature"}},
		{"an imported type aliased", held + "type Index = index.Index\n", []string{"exported type Index names the private type index.Index"}},
		{"an imported type in an exported field", held + "type Run struct{ X []*index.Index }\n", []string{"exported type Run names the private type index.Index"}},
		{"another type of the same package", held + "func Tree() *index.Tree { return nil }\n", nil},
		{"the imported package gone", "package p\ntype Dump struct{}\n", []string{"the package declares no type index.Index: the check would hold nothing (update privateTypes)"}},
	}...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", tc.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			private := []string{"index"}
			if strings.Contains(tc.src, "/internal/index") || strings.HasPrefix(tc.name, "the imported") {
				private = []string{"index.Index"}
			}
			for _, msg := range exposures(fset, []*ast.File{f}, private) {
				got = append(got, position.ReplaceAllString(msg, "")) // drop the position
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
