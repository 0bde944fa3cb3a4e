package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the main module's path; our packages are it and everything
// under it.
const module = "github.com/mcptrace/mcptrace"

// sdkFree lists the import path prefixes the vocabulary and its readers must
// not link: the OpenTelemetry SDK, the OTLP (and Prometheus) exporters, gRPC
// and the Prometheus client.
var sdkFree = []string{
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/exporters",
	"google.golang.org/grpc",
	"github.com/prometheus/client_golang",
}

// rule is one arrow of the design: the packages matched by patterns (run
// from dir, relative to the module root) may depend, directly or not, on no
// package under a forbidden prefix, and of our own packages only on those
// an ours pattern matches.
type rule struct {
	name      string
	dir       string   // module directory, relative to the main module's root
	patterns  []string // go list patterns, relative to dir
	forbidden []string // import path prefixes that must not be linked
	ours      []string // of module's packages, those allowed, as go list patterns: "p" or "p/..." (nil: any)
}

// rules are the arrows docs/architecture.md draws.
var rules = []rule{
	{
		name:      "the vocabulary, the analyzer and the dashboards link no OpenTelemetry SDK, exporter, gRPC or Prometheus client",
		dir:       ".",
		patterns:  []string{"./spans", "./analyze/...", "./dashboards/..."},
		forbidden: sdkFree,
	},
	{
		name:     "spans imports nothing of ours",
		dir:      ".",
		patterns: []string{"./spans"},
		ours:     []string{module + "/spans"},
	},
	{
		name:     "spans/telemetry imports only spans of ours",
		dir:      ".",
		patterns: []string{"./spans/telemetry"},
		ours:     []string{module + "/spans", module + "/spans/telemetry"},
	},
	{
		name:      "analyze never imports the pool or the MCP SDK, only the pool's idle core",
		dir:       ".",
		patterns:  []string{"./analyze/..."},
		forbidden: []string{"github.com/modelcontextprotocol/go-sdk"},
		ours:      []string{module + "/analyze/...", module + "/pool/idle", module + "/spans"},
	},
	{
		name:      "the idle core is pure: spans of ours, no I/O, no SDK",
		dir:       ".",
		patterns:  []string{"./pool/idle"},
		forbidden: []string{"os", "net", "io", "github.com/modelcontextprotocol/go-sdk", "go.opentelemetry.io"},
		ours:      []string{module + "/pool/idle", module + "/spans"},
	},
	{
		name:     "the gate never links analyze: it reads the analysis value, never the engine or the index",
		dir:      ".",
		patterns: []string{"./analyze/gate"},
		ours:     []string{module + "/analyze/gate", module + "/analyze/report", module + "/analyze/report/render", module + "/analyze/rulefmt", module + "/analyze/ingest", module + "/analyze/internal/phase", module + "/analyze/internal/textfmt", module + "/spans"},
	},
	{
		name:     "rule parsing and the analysis value link no engine",
		dir:      ".",
		patterns: []string{"./analyze/rulefmt", "./analyze/report"},
		ours:     []string{module + "/analyze/report", module + "/analyze/rulefmt", module + "/analyze/internal/textfmt", module + "/spans"},
	},
	{
		name:      "the analysis value draws nothing: analyze/report never imports its renderers",
		dir:       ".",
		patterns:  []string{"./analyze/report"},
		forbidden: []string{module + "/analyze/report/render"},
	},
	{
		name:     "the renderers draw the analysis value and link no engine",
		dir:      ".",
		patterns: []string{"./analyze/report/render"},
		ours:     []string{module + "/analyze/report/render", module + "/analyze/report", module + "/analyze/rulefmt", module + "/analyze/internal/textfmt", module + "/spans"},
	},
	{
		name:     "the HTML report and the replay read the events as values, never the engine or the index",
		dir:      ".",
		patterns: []string{"./analyze/events", "./analyze/htmlreport", "./analyze/whatif"},
		ours:     []string{module + "/analyze/events", module + "/analyze/htmlreport", module + "/analyze/whatif", module + "/analyze/report", module + "/analyze/report/render", module + "/analyze/rulefmt", module + "/analyze/internal/textfmt", module + "/analyze/internal/minheap", module + "/pool/idle", module + "/spans"},
	},
	{
		name:      "fixtures never import pool and import spans at most",
		dir:       ".",
		patterns:  []string{"./fixtures/..."},
		forbidden: []string{module + "/pool"},
		ours:      []string{module + "/fixtures/...", module + "/spans"},
	},
	{
		name:     "the dashboards import only spans and the file writer of ours",
		dir:      ".",
		patterns: []string{"./dashboards/..."},
		ours:     []string{module + "/dashboards/...", module + "/spans", module + "/internal/outfile"},
	},
	{
		name:      "the Collector connector imports only analyze, the idle core and spans of ours",
		dir:       "collector",
		patterns:  []string{"./mcptraceconnector/..."},
		forbidden: []string{module + "/spans/telemetry"},
		ours:      []string{module + "/collector/...", module + "/analyze/...", module + "/pool/idle", module + "/spans"},
	},
	{
		// The end-to-end test's load generator (collector/scaleout/otlpload)
		// sends internal/tracegen's workload; it is a bench tool, never in a
		// distribution, so it may use the generators but still not the pool.
		name:      "the collector module's tools import no pool and no SDK setup",
		dir:       "collector",
		patterns:  []string{"./..."},
		forbidden: []string{module + "/spans/telemetry"},
		ours:      []string{module + "/collector/...", module + "/analyze/...", module + "/pool/idle", module + "/spans", module + "/internal/tracegen"},
	},
}

// TestPackageArrows runs `go list -deps` over each rule's packages and fails
// on every dependency a rule forbids, naming the import chain that pulls it
// in so the offending import is found at once.
func TestPackageArrows(t *testing.T) {
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			pkgs, roots := goListDeps(t, r.dir, r.patterns)
			if len(roots) == 0 {
				t.Fatalf("go list %s in %s matched no package: the rule checks nothing", strings.Join(r.patterns, " "), r.dir)
			}
			for _, v := range violations(r, pkgs, roots) {
				t.Error(v)
			}
		})
	}
}

// TestViolationsNamesTheChain pins the checker itself on a made-up graph: a
// forbidden package two hops away and a package of ours outside the allowed
// set are both reported with the chain that reaches them, and a clean graph
// reports nothing.
func TestViolationsNamesTheChain(t *testing.T) {
	pkgs := map[string]listedPackage{
		module + "/spans":              {ImportPath: module + "/spans", Imports: []string{"strings"}},
		module + "/analyze":            {ImportPath: module + "/analyze", Imports: []string{module + "/spans", "example.com/mid"}},
		"example.com/mid":              {ImportPath: "example.com/mid", Imports: []string{"google.golang.org/grpc/codes"}},
		"google.golang.org/grpc/codes": {ImportPath: "google.golang.org/grpc/codes"},
		module + "/pool":               {ImportPath: module + "/pool", Imports: []string{module + "/spans"}},
		module + "/fixtures":           {ImportPath: module + "/fixtures", Imports: []string{module + "/pool"}},
		"strings":                      {ImportPath: "strings", Standard: true},
		module + "/dashboards":         {ImportPath: module + "/dashboards", Imports: []string{module + "/spans", module + "/spans/telemetry"}},
		module + "/spans/telemetry":    {ImportPath: module + "/spans/telemetry", Imports: []string{module + "/spans"}},
	}
	tests := []struct {
		name  string
		r     rule
		roots []string
		want  []string
	}{
		{
			name:  "a forbidden prefix two hops away is reported with its chain",
			r:     rule{forbidden: sdkFree},
			roots: []string{module + "/analyze"},
			want: []string{module + "/analyze -> example.com/mid -> google.golang.org/grpc/codes: " +
				"google.golang.org/grpc/codes is forbidden (prefix google.golang.org/grpc)"},
		},
		{
			name:  "a package of ours outside the allowed set is reported",
			r:     rule{ours: []string{module + "/fixtures/...", module + "/spans"}},
			roots: []string{module + "/fixtures"},
			want: []string{module + "/fixtures -> " + module + "/pool: " +
				module + "/pool is ours but not allowed here (allowed: " + module + "/fixtures/..., " + module + "/spans)"},
		},
		{
			name:  "an exact pattern does not admit the packages under it",
			r:     rule{ours: []string{module + "/dashboards/...", module + "/spans"}},
			roots: []string{module + "/dashboards"},
			want: []string{module + "/dashboards -> " + module + "/spans/telemetry: " +
				module + "/spans/telemetry is ours but not allowed here (allowed: " + module + "/dashboards/..., " + module + "/spans)"},
		},
		{
			name:  "a clean graph reports nothing",
			r:     rule{forbidden: sdkFree, ours: []string{module + "/spans"}},
			roots: []string{module + "/spans"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := violations(tt.r, pkgs, tt.roots)
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// listedPackage is the part of `go list -json` output the rules need.
type listedPackage struct {
	ImportPath string
	Imports    []string
	Dir        string
	Standard   bool
	DepOnly    bool
	Error      *struct{ Err string }
}

// goListDeps runs `go list -deps -json` on patterns in dir and returns every
// listed package by import path, and the import paths the patterns matched
// (the roots), in list order. It uses the go command of the toolchain
// running the test (go test puts its GOROOT/bin first on PATH).
func goListDeps(t *testing.T, dir string, patterns []string) (map[string]listedPackage, []string) {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("find the go command: %v", err)
	}
	// -pgo=off: with cmd/mcptrace's default.pgo, a listing of ./... names
	// every package that command imports twice, once as its profiled
	// variant ("spans [github.com/mcptrace/mcptrace/cmd/mcptrace]"); the
	// arrows are the same either way.
	args := append([]string{"list", "-pgo=off", "-deps", "-json=ImportPath,Imports,Dir,Standard,DepOnly,Error"}, patterns...)
	cmd := exec.Command(gotool, args...)
	cmd.Dir = filepath.Join("..", "..", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), cmd.Dir, err, stderr.String())
	}
	pkgs := make(map[string]listedPackage)
	var roots []string
	dec := json.NewDecoder(&stdout)
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output (in %s): %v", cmd.Dir, err)
		}
		if p.Error != nil {
			t.Fatalf("go list (in %s): package %s: %s", cmd.Dir, p.ImportPath, p.Error.Err)
		}
		pkgs[p.ImportPath] = p
		if !p.DepOnly {
			roots = append(roots, p.ImportPath)
		}
	}
	recordInputs(t, filepath.Join(cmd.Dir, "go.mod"), filepath.Join(cmd.Dir, "go.sum"), pkgs)
	return pkgs, roots
}

// recordInputs reads the module files and the directory and Go files of
// every package of ours in pkgs. The go command's test cache keys a result
// on the files the test process itself opened, not on what a child go list
// read: without this, a new import would leave a cached pass in place.
func recordInputs(t *testing.T, gomod, gosum string, pkgs map[string]listedPackage) {
	t.Helper()
	for _, f := range []string{gomod, gosum} {
		if _, err := os.ReadFile(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("read %s: %v", f, err)
		}
	}
	for _, p := range pkgs {
		if p.Standard || !underPrefix(p.ImportPath, module) {
			continue
		}
		entries, err := os.ReadDir(p.Dir)
		if err != nil {
			t.Fatalf("read package %s directory: %v", p.ImportPath, err)
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
				if _, err := os.ReadFile(filepath.Join(p.Dir, e.Name())); err != nil {
					t.Fatalf("read %s: %v", filepath.Join(p.Dir, e.Name()), err)
				}
			}
		}
	}
}

// violations walks the import graph pkgs breadth-first from roots and
// returns one message per package r forbids, with the shortest import chain
// from a root that reaches it; the walk does not go on below a forbidden
// package, so one bad import is one message. Standard-library packages are never
// forbidden. The walk is sorted, so the messages are stable.
func violations(r rule, pkgs map[string]listedPackage, roots []string) []string {
	via := make(map[string]string) // package → the package that first imported it ("" for a root)
	queue := slices.Clone(roots)
	slices.Sort(queue)
	for _, root := range queue {
		via[root] = ""
	}
	var out []string
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		p := pkgs[path]
		if msg := r.check(path, p.Standard); msg != "" {
			out = append(out, chain(via, path)+": "+msg)
			continue // what it drags in is its own fault, not another finding
		}
		imports := slices.Clone(p.Imports)
		slices.Sort(imports)
		for _, imp := range imports {
			if _, seen := via[imp]; !seen {
				via[imp] = path
				queue = append(queue, imp)
			}
		}
	}
	return out
}

// check says why r forbids the package at path, or "" when it may be linked.
func (r rule) check(path string, standard bool) string {
	if standard {
		return ""
	}
	for _, prefix := range r.forbidden {
		if underPrefix(path, prefix) {
			return fmt.Sprintf("%s is forbidden (prefix %s)", path, prefix)
		}
	}
	if r.ours != nil && underPrefix(path, module) && !slices.ContainsFunc(r.ours, func(p string) bool { return matchPattern(path, p) }) {
		return fmt.Sprintf("%s is ours but not allowed here (allowed: %s)", path, strings.Join(r.ours, ", "))
	}
	return ""
}

// underPrefix reports whether path is prefix or a package under it, so
// ".../spans" covers ".../spans/x" but not ".../spansx".
func underPrefix(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// matchPattern reports whether path matches a go list style pattern: "p"
// matches p only, "p/..." matches p and every package under it.
func matchPattern(path, pattern string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return underPrefix(path, base)
	}
	return path == pattern
}

// chain renders the import chain from a root to path recorded in via.
func chain(via map[string]string, path string) string {
	hops := []string{path}
	for p := via[path]; p != ""; p = via[p] {
		hops = append(hops, p)
	}
	slices.Reverse(hops)
	return strings.Join(hops, " -> ")
}
