package main

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"sync"
	"testing"
)

// stdImporter is one importer of the standard packages the tests' tiny
// sources import, with the file set they are parsed into.
var stdImporter = sync.OnceValues(func() (*typedPackage, error) {
	fset := token.NewFileSet()
	imp, _, err := exportImporter(context.Background(), fset, ".", "context", "strconv", "strings", "io", "html")
	return &typedPackage{fset: fset, imp: imp}, err
})

// typedSource type-checks src as the one file p.go of package p.
func typedSource(t *testing.T, src string) *typedPackage {
	t.Helper()
	std, err := stdImporter()
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(std.fset, "p.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	tp := &typedPackage{fset: std.fset, path: "example.com/p", names: []string{"p.go"}, files: []*ast.File{f}, imp: std.imp}
	tp.pkg, tp.info, err = tp.check(tp.files)
	if err != nil {
		t.Fatalf("the source does not type-check: %v", err)
	}
	return tp
}

// mutated returns src with each mutant of op applied, in source order,
// and fails the test when one does not type-check.
func mutated(t *testing.T, src, op string) []string {
	t.Helper()
	tp := typedSource(t, src)
	ms := typedSites(tp, tp.files[0], "p.go", []byte(src))
	slices.SortStableFunc(ms, func(a, b mutant) int { return a.start - b.start })
	var out []string
	for _, m := range ms {
		if m.Op != op {
			continue
		}
		if !tp.compiles(m, []byte(src)) {
			t.Errorf("%s %s does not type-check:\n%s", m.Op, m.Desc, applyMutant([]byte(src), m))
		}
		out = append(out, strings.TrimPrefix(string(applyMutant([]byte(src), m)), "package p\n"))
	}
	return out
}

// TestTypedOperatorsMakeTheirChangeAndNothingElse pins each typed
// operator: the source in, every mutant of that operator out (the file
// as go test would compile it), and the places it must leave alone.
func TestTypedOperatorsMakeTheirChangeAndNothingElse(t *testing.T) {
	for _, tc := range []struct {
		name, op, src string
		want          []string
	}{
		{"swap-branches swaps adjacent case bodies", opSwapBranches,
			"package p\nfunc f(n int) string {\n\tswitch n {\n\tcase 1:\n\t\treturn \"a\"\n\tcase 2:\n\t\treturn \"b\"\n\tdefault:\n\t\treturn \"c\"\n\t}\n}\n",
			[]string{
				"func f(n int) string {\n\tswitch n {\n\tcase 1:\n\t\treturn \"b\"\n\tcase 2:\n\t\treturn \"a\"\n\tdefault:\n\t\treturn \"c\"\n\t}\n}\n",
				"func f(n int) string {\n\tswitch n {\n\tcase 1:\n\t\treturn \"a\"\n\tcase 2:\n\t\treturn \"c\"\n\tdefault:\n\t\treturn \"b\"\n\t}\n}\n",
			}},
		{"swap-branches swaps each two adjacent branches of an if / else-if / else chain", opSwapBranches,
			"package p\nfunc f(n int) int {\n\tif n < 0 {\n\t\treturn -1\n\t} else if n > 0 {\n\t\treturn 1\n\t} else {\n\t\treturn 0\n\t}\n}\n",
			[]string{
				"func f(n int) int {\n\tif n < 0 {\n\t\treturn 1\n\t} else if n > 0 {\n\t\treturn -1\n\t} else {\n\t\treturn 0\n\t}\n}\n",
				"func f(n int) int {\n\tif n < 0 {\n\t\treturn -1\n\t} else if n > 0 {\n\t\treturn 0\n\t} else {\n\t\treturn 1\n\t}\n}\n",
			}},
		{"swap-branches leaves two identical bodies alone", opSwapBranches,
			"package p\nfunc f(n int) int {\n\tif n < 0 {\n\t\treturn 1\n\t} else {\n\t\treturn 1\n\t}\n}\n",
			nil},
		{"swap-branches swaps a case with an empty one", opSwapBranches,
			"package p\nfunc f(n int) (s string) {\n\tswitch n {\n\tcase 1:\n\tcase 2:\n\t\ts = \"b\"\n\t}\n\treturn\n}\n",
			[]string{"func f(n int) (s string) {\n\tswitch n {\n\tcase 1:s = \"b\"\n\tcase 2:\n\t\t\n\t}\n\treturn\n}\n"}},
		{"sibling-field reads the next field of the same type, never on a write", opSiblingField,
			"package p\ntype T struct {\n\tA, B string\n\tN    int\n\tC    string\n}\nfunc f(t *T) string {\n\tt.A = \"x\"\n\tt.N++\n\treturn t.C + t.A\n}\n",
			[]string{
				"type T struct {\n\tA, B string\n\tN    int\n\tC    string\n}\nfunc f(t *T) string {\n\tt.A = \"x\"\n\tt.N++\n\treturn t.A + t.A\n}\n",
				"type T struct {\n\tA, B string\n\tN    int\n\tC    string\n}\nfunc f(t *T) string {\n\tt.A = \"x\"\n\tt.N++\n\treturn t.C + t.B\n}\n",
			}},
		{"sibling-field leaves a field with no sibling of its type and a value written through", opSiblingField,
			"package p\ntype In struct{ X, Y int }\ntype T struct {\n\tIn, Alt In\n\tOut     string\n}\nfunc f(t *T) *int {\n\tt.In.X = 1\n\treturn &t.In.Y\n}\n",
			nil},
		{"sibling-field leaves the receiver of a pointer method, changes a value method's", opSiblingField,
			"package p\ntype C struct{ n int }\nfunc (c *C) inc()     { c.n++ }\nfunc (c C) get() int { return c.n }\ntype T struct{ a, b C }\nfunc f(t *T) int {\n\tt.a.inc()\n\treturn t.a.get()\n}\n",
			[]string{"type C struct{ n int }\nfunc (c *C) inc()     { c.n++ }\nfunc (c C) get() int { return c.n }\ntype T struct{ a, b C }\nfunc f(t *T) int {\n\tt.a.inc()\n\treturn t.b.get()\n}\n"}},
		{"drop-call replaces a call by its argument of the same type", opDropCall,
			"package p\nimport (\n\t\"html\"\n\t\"io\"\n\t\"strings\"\n)\nvar _, _ = strings.ToUpper, html.UnescapeString\nfunc f(w io.Writer, s string, n int) string {\n\tio.WriteString(w, strings.TrimSpace(s+\"x\"))\n\t_ = string(rune(n))\n\treturn html.EscapeString(s)\n}\n",
			[]string{
				"import (\n\t\"html\"\n\t\"io\"\n\t\"strings\"\n)\nvar _, _ = strings.ToUpper, html.UnescapeString\nfunc f(w io.Writer, s string, n int) string {\n\tio.WriteString(w, (s+\"x\"))\n\t_ = string(rune(n))\n\treturn html.EscapeString(s)\n}\n",
				"import (\n\t\"html\"\n\t\"io\"\n\t\"strings\"\n)\nvar _, _ = strings.ToUpper, html.UnescapeString\nfunc f(w io.Writer, s string, n int) string {\n\tio.WriteString(w, strings.TrimSpace(s+\"x\"))\n\t_ = string(rune(n))\n\treturn s\n}\n",
			}},
		{"drop-ctx-check removes an if on ctx.Err and a select's Done case", opDropCtx,
			"package p\nimport \"context\"\nfunc f(ctx context.Context, c chan int) error {\n\tif err := ctx.Err(); err != nil {\n\t\treturn err\n\t}\n\tselect {\n\tcase <-ctx.Done():\n\t\treturn ctx.Err()\n\tcase <-c:\n\t}\n\treturn nil\n}\n",
			[]string{
				"import \"context\"\nfunc f(ctx context.Context, c chan int) error {\n\t\n\tselect {\n\tcase <-ctx.Done():\n\t\treturn ctx.Err()\n\tcase <-c:\n\t}\n\treturn nil\n}\n",
				"import \"context\"\nfunc f(ctx context.Context, c chan int) error {\n\tif err := ctx.Err(); err != nil {\n\t\treturn err\n\t}\n\tselect {\n\t\n\tcase <-c:\n\t}\n\treturn nil\n}\n",
			}},
		{"drop-ctx-check keeps a select's only case and leaves an else in place", opDropCtx,
			"package p\nimport \"context\"\nfunc f(ctx context.Context) int {\n\tif ctx.Err() != nil {\n\t\treturn 1\n\t} else {\n\t\tselect {\n\t\tcase <-ctx.Done():\n\t\t}\n\t}\n\treturn 0\n}\n",
			[]string{"import \"context\"\nfunc f(ctx context.Context) int {\n\t{\n\t\tselect {\n\t\tcase <-ctx.Done():\n\t\t}\n\t}\n\treturn 0\n}\n"}},
		{"drop-ctx-check leaves an empty else for an else-if on ctx", opDropCtx,
			"package p\nimport \"context\"\nfunc f(ctx context.Context, n int) int {\n\tif n > 0 {\n\t\treturn 1\n\t} else if ctx.Err() != nil {\n\t\treturn 2\n\t}\n\treturn 0\n}\n",
			[]string{"import \"context\"\nfunc f(ctx context.Context, n int) int {\n\tif n > 0 {\n\t\treturn 1\n\t} else {}\n\treturn 0\n}\n"}},
		{"drop-reset removes a zero value assigned to a field, not another value", opDropReset,
			"package p\ntype T struct {\n\tb []byte\n\ts string\n\tn int\n\tok bool\n\tm map[int]int\n}\nfunc (t *T) reset() {\n\tt.b = nil\n\tt.s = \"\"\n\tt.n = 0\n\tt.ok = false\n\tt.m = map[int]int{}\n\tt.n = 1\n}\n",
			[]string{
				"type T struct {\n\tb []byte\n\ts string\n\tn int\n\tok bool\n\tm map[int]int\n}\nfunc (t *T) reset() {\n\t\n\tt.s = \"\"\n\tt.n = 0\n\tt.ok = false\n\tt.m = map[int]int{}\n\tt.n = 1\n}\n",
				"type T struct {\n\tb []byte\n\ts string\n\tn int\n\tok bool\n\tm map[int]int\n}\nfunc (t *T) reset() {\n\tt.b = nil\n\t\n\tt.n = 0\n\tt.ok = false\n\tt.m = map[int]int{}\n\tt.n = 1\n}\n",
				"type T struct {\n\tb []byte\n\ts string\n\tn int\n\tok bool\n\tm map[int]int\n}\nfunc (t *T) reset() {\n\tt.b = nil\n\tt.s = \"\"\n\t\n\tt.ok = false\n\tt.m = map[int]int{}\n\tt.n = 1\n}\n",
				"type T struct {\n\tb []byte\n\ts string\n\tn int\n\tok bool\n\tm map[int]int\n}\nfunc (t *T) reset() {\n\tt.b = nil\n\tt.s = \"\"\n\tt.n = 0\n\t\n\tt.m = map[int]int{}\n\tt.n = 1\n}\n",
				"type T struct {\n\tb []byte\n\ts string\n\tn int\n\tok bool\n\tm map[int]int\n}\nfunc (t *T) reset() {\n\tt.b = nil\n\tt.s = \"\"\n\tt.n = 0\n\tt.ok = false\n\t\n\tt.n = 1\n}\n",
			}},
		{"invert-parsed-bool negates ParseBool's kept result and a tagged bool field's read", opInvertBool,
			"package p\nimport \"strconv\"\ntype C struct {\n\tOn   bool `yaml:\"on\"`\n\tSeen bool\n\tSkip bool `json:\"-\"`\n}\nfunc f(c *C, s string) bool {\n\t_, err := strconv.ParseBool(s)\n\tv, _ := strconv.ParseBool(s)\n\tc.On = v\n\treturn err == nil && c.On && c.Seen && c.Skip\n}\n",
			[]string{
				"import \"strconv\"\ntype C struct {\n\tOn   bool `yaml:\"on\"`\n\tSeen bool\n\tSkip bool `json:\"-\"`\n}\nfunc f(c *C, s string) bool {\n\t_, err := strconv.ParseBool(s)\n\tv, _ := func(b bool, err error) (bool, error) { return !b, err }(strconv.ParseBool(s))\n\tc.On = v\n\treturn err == nil && c.On && c.Seen && c.Skip\n}\n",
				"import \"strconv\"\ntype C struct {\n\tOn   bool `yaml:\"on\"`\n\tSeen bool\n\tSkip bool `json:\"-\"`\n}\nfunc f(c *C, s string) bool {\n\t_, err := strconv.ParseBool(s)\n\tv, _ := strconv.ParseBool(s)\n\tc.On = v\n\treturn err == nil && !c.On && c.Seen && c.Skip\n}\n",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mutated(t, tc.src, tc.op)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%d mutants:\n%s\nwant %d:\n%s", len(got), strings.Join(got, "----\n"), len(tc.want), strings.Join(tc.want, "----\n"))
			}
		})
	}
}

// TestAMutantThatDoesNotTypeCheckIsSkippedNotCounted pins the viability
// filter: a dropped operand that leaves a variable unused, or a swapped
// case body using another case's variable, is refused before any build,
// and the sample draws the next mutant in its place.
func TestAMutantThatDoesNotTypeCheckIsSkippedNotCounted(t *testing.T) {
	src := "package p\nfunc f(a, b int, x any) int {\n\tc := b\n\tif a < 1 && c > 0 {\n\t\treturn 1\n\t}\n\tswitch v := x.(type) {\n\tcase int:\n\t\treturn v\n\tcase string:\n\t\treturn len(v)\n\t}\n\treturn 0\n}\n"
	tp := typedSource(t, src)
	ms := append(fileSites(tp.fset, tp.files[0], "p.go", []byte(src)), typedSites(tp, tp.files[0], "p.go", []byte(src))...)
	var refused []string
	for _, m := range ms {
		if !tp.compiles(m, []byte(src)) {
			refused = append(refused, m.Op+" "+m.Desc)
		}
	}
	slices.Sort(refused)
	want := []string{"drop-condition keep left of &&", "swap-branches bodies of lines 8 and 10 swapped"}
	if !slices.Equal(refused, want) {
		t.Errorf("refused %q, want %q", refused, want)
	}
	ok := func(m mutant) bool { return tp.compiles(m, []byte(src)) }
	got, skipped := sampleViable(ms, len(ms)-1, 1, "p", ok)
	if len(got) != len(ms)-2 || skipped != 2 {
		t.Errorf("sampled %d of %d with %d skipped, want every viable one (%d) and 2 skipped", len(got), len(ms), skipped, len(ms)-2)
	}
	for _, m := range got {
		if !ok(m) {
			t.Errorf("sampled a mutant that does not type-check: %s %s", m.Op, m.Desc)
		}
	}
}

// TestShiftBoundStepsEachIntegerLimitOneStep pins shift-bound: each
// comparison of integers gets its right operand one step the way the
// boundary flip does not reach (< and >= down, <= and > up, == and !=
// both), a literal, a call and a named constant alike; comparisons of
// floats, strings or two constants get none, and an unsigned one is not
// stepped below a constant 0.
func TestShiftBoundStepsEachIntegerLimitOneStep(t *testing.T) {
	const src = "package p\nfunc f(n int, u uint, b byte, s string, x float64) int {\n\tconst k = 3\n" +
		"\tif n < 0x20 || n <= 7 || n > len(s) || n >= k || u == 0 || b != 'a' {\n\t\treturn 1\n\t}\n" +
		"\tif x < 2 || s == \"a\" || k > 2 || u >= 0 {\n\t\treturn 2\n\t}\n\treturn 0\n}\n"
	var want []string
	for _, c := range [][2]string{
		{"n < 0x20", "n < 0x20-1"},
		{"n <= 7", "n <= 7+1"},
		{"n > len(s)", "n > len(s)+1"},
		{"n >= k", "n >= k-1"},
		{"u == 0", "u == 0+1"},
		{"b != 'a'", "b != 'a'-1"},
		{"b != 'a'", "b != 'a'+1"},
	} {
		if strings.Count(src, c[0]) != 1 {
			t.Fatalf("%q is not once in the source", c[0])
		}
		want = append(want, strings.TrimPrefix(strings.Replace(src, c[0], c[1], 1), "package p\n"))
	}
	if got := mutated(t, src, opShiftBound); !slices.Equal(got, want) {
		t.Errorf("%d mutants:\n%s\nwant %d:\n%s", len(got), strings.Join(got, "----\n"), len(want), strings.Join(want, "----\n"))
	}
}
