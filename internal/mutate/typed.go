package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// listedPackage is one package as `go list -export -json` describes it.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	ImportMap  map[string]string
	Error      *struct{ Err string }
}

// typedPackage is a package's non-test files parsed and type-checked
// against its dependencies' export data. The typed operators read its
// types (a sibling field of the same type, a call returning its
// argument's type), and every mutant is type-checked through it before
// it is built: a mutant that does not compile is skipped, not counted.
type typedPackage struct {
	fset  *token.FileSet
	path  string
	names []string    // base names, in the order of files
	files []*ast.File // every non-test file go build would compile
	imp   types.Importer
	pkg   *types.Package
	info  *types.Info
}

// errNoExportData is returned for an import go list gave no export data
// for: the package does not build.
var errNoExportData = errors.New("no export data")

// exportImporter runs go list -export on patterns in dir and returns an
// importer reading the export data it names, with the last package listed
// (the root, when one pattern names one package). The go command's build
// cache makes this cheap after the first run, and no dependency beyond
// the standard library is needed.
func exportImporter(ctx context.Context, fset *token.FileSet, dir string, patterns ...string) (types.Importer, listedPackage, error) {
	// -pgo=off: a main package's default.pgo would list its imports as
	// profiled variants ("p [main]"), whose paths no import names.
	args := append([]string{"list", "-pgo=off", "-export", "-deps", "-json=ImportPath,Dir,GoFiles,Export,ImportMap,Error", "--"}, patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, listedPackage{}, fmt.Errorf("go list -export: %w\n%s", err, tail(stderr.Bytes()))
	}
	exports := map[string]string{}
	var root listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var l listedPackage
		if err := dec.Decode(&l); err != nil {
			return nil, root, fmt.Errorf("go list -export output: %w", err)
		}
		if l.Error != nil {
			return nil, root, fmt.Errorf("go list %s: %s", l.ImportPath, l.Error.Err)
		}
		exports[l.ImportPath] = l.Export
		root = l
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if p, ok := root.ImportMap[path]; ok {
			path = p
		}
		if exports[path] == "" {
			return nil, fmt.Errorf("%w for %q", errNoExportData, path)
		}
		return os.Open(exports[path])
	})
	return imp, root, nil
}

// loadPackage parses and type-checks the package in dir.
func loadPackage(ctx context.Context, dir string) (*typedPackage, error) {
	fset := token.NewFileSet()
	imp, root, err := exportImporter(ctx, fset, dir, ".")
	if err != nil {
		return nil, err
	}
	tp := &typedPackage{fset: fset, path: root.ImportPath, imp: imp}
	for _, name := range root.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(root.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		tp.names = append(tp.names, name)
		tp.files = append(tp.files, f)
	}
	tp.pkg, tp.info, err = tp.check(tp.files)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %w", tp.path, err)
	}
	return tp, nil
}

// check type-checks files as the package and returns the first error.
func (tp *typedPackage) check(files []*ast.File) (*types.Package, *types.Info, error) {
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	var first error
	conf := types.Config{Importer: tp.imp, Error: func(err error) {
		if first == nil {
			first = err
		}
	}}
	pkg, _ := conf.Check(tp.path, tp.fset, files, info)
	return pkg, info, first
}

// compiles reports whether the package type-checks with m applied to src,
// the source of m.File: a mutant that does not (a dropped operand leaving
// a variable unused, a swapped branch using another's variable) is never
// built nor counted.
func (tp *typedPackage) compiles(m mutant, src []byte) bool {
	i := slices.Index(tp.names, m.File)
	if i < 0 {
		return false
	}
	f, err := parser.ParseFile(tp.fset, m.File, applyMutant(src, m), parser.SkipObjectResolution)
	if err != nil {
		return false
	}
	files := slices.Clone(tp.files)
	files[i] = f
	_, _, err = tp.check(files)
	return err == nil
}

// applyMutant returns src with m's change made.
func applyMutant(src []byte, m mutant) []byte {
	return append(append(append([]byte{}, src[:m.start]...), m.repl...), src[m.end:]...)
}
