package dashboards_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"go.yaml.in/yaml/v3"

	"github.com/mcptrace/mcptrace/dashboards"
	"github.com/mcptrace/mcptrace/spans"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// generated returns the generator's files by name.
func generated(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := dashboards.Generate()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		out[f.Name] = f.Data
	}
	return out
}

// poolQueries are the queries of the generated pool dashboard.
func poolQueries(t *testing.T) []dashboards.Query {
	t.Helper()
	return queriesOf(t, dashboards.PoolFile)
}

// fleetQueries are the queries of the generated fleet dashboard.
func fleetQueries(t *testing.T) []dashboards.Query {
	t.Helper()
	return queriesOf(t, dashboards.FleetFile)
}

// queriesOf lists the queries of one generated dashboard.
func queriesOf(t *testing.T, file string) []dashboards.Query {
	t.Helper()
	data, ok := generated(t)[file]
	if !ok {
		t.Fatalf("Generate wrote no %s", file)
	}
	qs, err := dashboards.Queries(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return qs
}

// dashboardFiles are the generated dashboards with the datasource types
// each must offer a variable for.
var dashboardFiles = map[string][]string{
	dashboards.PoolFile:  {dashboards.TypePrometheus, dashboards.TypeTempo, dashboards.TypePyroscope},
	dashboards.FleetFile: {dashboards.TypePrometheus},
}

// firstDiff describes where two texts first differ, by line.
func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  committed: %s\n  generated: %s", i+1, x, y)
		}
	}
	return "no difference"
}

func TestCommittedFilesEqualTheGeneratorOutput(t *testing.T) {
	for name, want := range generated(t) {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s: %v (run go generate ./dashboards)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output at %s\nrun: go generate ./dashboards", name, firstDiff(got, want))
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := generated(t), generated(t)
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("two runs of Generate give different %s", name)
		}
	}
}

// TestPoolDashboardHasAPanelPerPoolMeasure pins the pool dashboard's
// panels: one per measure of the pool, each on its data source.
func TestPoolDashboardHasAPanelPerPoolMeasure(t *testing.T) {
	byPanel := map[string][]dashboards.Query{}
	for _, q := range poolQueries(t) {
		byPanel[q.Panel] = append(byPanel[q.Panel], q)
	}
	want := map[string]string{
		"Hit rate against its ceiling":             dashboards.TypePrometheus,
		"Acquires and handshakes per second":       dashboards.TypePrometheus,
		"Misses by reason":                         dashboards.TypePrometheus,
		"Acquire latency: hit and miss (p50, p99)": dashboards.TypePrometheus,
		"Handshake latency (p50, p99)":             dashboards.TypePrometheus,
		"Call latency by tool (p50, p99)":          dashboards.TypePrometheus,
		"Idle and in-use sessions":                 dashboards.TypePrometheus,
		"Evictions by reason":                      dashboards.TypePrometheus,
		"Redials and failures":                     dashboards.TypePrometheus,
		"Recent unexplained misses":                dashboards.TypeTempo,
		"Executions with more than one session":    dashboards.TypeTempo,
		"Flame graph: handshake":                   dashboards.TypePyroscope,
		"Flame graph: call":                        dashboards.TypePyroscope,
	}
	for title, typ := range want {
		qs := byPanel[title]
		if len(qs) == 0 {
			t.Errorf("no panel %q", title)
			continue
		}
		for _, q := range qs {
			if q.Datasource != typ {
				t.Errorf("panel %q queries %s, want %s", title, q.Datasource, typ)
			}
		}
	}
	for _, q := range byPanel["Acquire latency: hit and miss (p50, p99)"] {
		if !strings.Contains(q.Expr, "histogram_quantile(0.5,") && !strings.Contains(q.Expr, "histogram_quantile(0.99,") {
			t.Errorf("acquire latency query %s is not a p50 or p99", q.Expr)
		}
	}
	for _, q := range byPanel["Flame graph: handshake"] {
		if !strings.Contains(q.Expr, spans.PprofLabelPhase+`="`+spans.PhaseHandshake+`"`) {
			t.Errorf("handshake flame graph query %s does not select the handshake phase", q.Expr)
		}
	}
	var ceiling bool
	for _, q := range byPanel["Hit rate against its ceiling"] {
		ceiling = ceiling || strings.Contains(q.Expr, `plugin_mcp_miss_reason="cold"`) && strings.HasPrefix(q.Expr, "1 - ")
	}
	if !ceiling {
		t.Error("the hit rate panel has no 1 − cold-start floor series")
	}
}

// TestPanelsReachDatasourcesOnlyThroughVariables pins the rule that a
// dashboard never hard-codes a datasource uid: every uid in the JSON is
// ${variable} for a datasource variable of the same plugin type.
func TestPanelsReachDatasourcesOnlyThroughVariables(t *testing.T) {
	for file, types := range dashboardFiles {
		t.Run(file, func(t *testing.T) {
			checkDatasourcesThroughVariables(t, generated(t)[file], types)
		})
	}
}

func checkDatasourcesThroughVariables(t *testing.T, data []byte, types []string) {
	var d map[string]any
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	dsVars := map[string]string{} // variable name → plugin type
	for _, v := range d["templating"].(map[string]any)["list"].([]any) {
		v := v.(map[string]any)
		if v["type"] == "datasource" {
			dsVars[v["name"].(string)] = v["query"].(string)
		}
	}
	for _, typ := range types {
		if !slices.Contains(slices.Collect(mapValues(dsVars)), typ) {
			t.Errorf("no datasource variable of type %s", typ)
		}
	}
	refs := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if uid, ok := v["uid"].(string); ok && strings.HasSuffix(path, ".datasource") {
				refs++
				name := strings.TrimSuffix(strings.TrimPrefix(uid, "${"), "}")
				if typ, ok := dsVars[name]; !ok || !strings.HasPrefix(uid, "${") {
					t.Errorf("%s: datasource uid %q is not a datasource variable", path, uid)
				} else if v["type"] != typ {
					t.Errorf("%s: datasource type %v through variable %s of type %s", path, v["type"], name, typ)
				}
			}
			for k, x := range v {
				walk(path+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path+"[]", x)
			}
		}
	}
	walk("", d)
	if refs == 0 {
		t.Fatal("no datasource reference found: the walk is broken")
	}
}

func mapValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// TestQueriesUseOnlyTheVocabulary checks the names in every query against
// the spans package: Prometheus metric and label names as the exporter
// translates them, TraceQL span names and attributes.
func TestQueriesUseOnlyTheVocabulary(t *testing.T) {
	prom := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
	metrics := map[string]bool{}
	for _, m := range []string{spans.MetricAcquires, spans.MetricEvictions, spans.MetricRedials, spans.MetricFailures} {
		metrics[prom(m)+"_total"] = true
	}
	for _, m := range []string{spans.MetricConnectionWaitTime, spans.MetricConnectionCreateTime, spans.MetricConnectionUseTime, spans.MetricOperationDuration} {
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			metrics[prom(m)+"_seconds"+suffix] = true
		}
	}
	metrics[prom(spans.MetricConnectionCount)] = true
	// The mcptrace Collector connector's counters (the fleet dashboard).
	for _, m := range []string{spans.ConnectorMetricAcquires, spans.ConnectorMetricHandshakes, spans.ConnectorMetricExecutions, spans.ConnectorMetricRuleViolations, spans.ConnectorMetricTracesFinalized, spans.ConnectorMetricTracesCut, spans.ConnectorMetricTracesLateSpans} {
		metrics[prom(m)+"_total"] = true
	}
	attrs := []string{spans.AttrPoolID, spans.AttrCacheKey, spans.AttrCacheHit, spans.AttrMissReason, spans.AttrConnectionState, spans.AttrEvictionReason, spans.AttrErrorType, spans.AttrGenAIToolName, spans.AttrMethodName}
	labels := map[string]bool{"le": true}
	for _, a := range append(slices.Clone(attrs), spans.AttrMissCause, spans.AttrMultiSession, spans.AttrRuleID, spans.AttrRuleSeverity) {
		labels[prom(a)] = true
	}
	metricRE := regexp.MustCompile(`([a-z_]+)\{`)
	labelRE := regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)\s*"`)
	byRE := regexp.MustCompile(`by \(([a-z_, ]+)\)`)
	spanRE := regexp.MustCompile(`name = "([^"]+)"`)
	attrRE := regexp.MustCompile(`span\.([a-z_.]+)`)
	spanNames := map[string]bool{spans.SpanInvoke: true, spans.SpanAcquire: true, spans.SpanHandshake: true, spans.SpanCallTool: true}
	for _, q := range append(poolQueries(t), fleetQueries(t)...) {
		switch q.Datasource {
		case dashboards.TypePrometheus:
			for _, m := range metricRE.FindAllStringSubmatch(q.Expr, -1) {
				if !metrics[m[1]] {
					t.Errorf("%s: unknown metric %s in %s", q.Panel, m[1], q.Expr)
				}
			}
			for _, m := range labelRE.FindAllStringSubmatch(q.Expr, -1) {
				if !labels[m[1]] {
					t.Errorf("%s: unknown label %s in %s", q.Panel, m[1], q.Expr)
				}
			}
			for _, m := range byRE.FindAllStringSubmatch(q.Expr, -1) {
				for l := range strings.SplitSeq(m[1], ",") {
					if !labels[strings.TrimSpace(l)] {
						t.Errorf("%s: grouped by unknown label %s", q.Panel, l)
					}
				}
			}
		case dashboards.TypeTempo:
			for _, m := range spanRE.FindAllStringSubmatch(q.Expr, -1) {
				if !spanNames[m[1]] {
					t.Errorf("%s: unknown span %s", q.Panel, m[1])
				}
			}
			for _, m := range attrRE.FindAllStringSubmatch(q.Expr, -1) {
				if !slices.Contains(attrs, m[1]) {
					t.Errorf("%s: unknown attribute %s", q.Panel, m[1])
				}
			}
			if strings.Count(q.Expr, "{") != strings.Count(q.Expr, "}") {
				t.Errorf("%s: unbalanced braces in %s", q.Panel, q.Expr)
			}
		}
	}
}

// TestProvisioningDeclaresEveryDatasourceType reads the example provisioning
// files: they must be valid YAML, declare one datasource of each type the
// dashboards' variables select, and load dashboards from a file provider.
func TestProvisioningDeclaresEveryDatasourceType(t *testing.T) {
	files, err := dashboards.Provisioning()
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	providers := 0
	for _, f := range files {
		onDisk, err := os.ReadFile(f.Name)
		if err != nil || !bytes.Equal(onDisk, f.Data) {
			t.Errorf("embedded %s differs from the file on disk (%v)", f.Name, err)
		}
		var doc struct {
			APIVersion  int `yaml:"apiVersion"`
			Datasources []struct {
				Type string `yaml:"type"`
				URL  string `yaml:"url"`
			} `yaml:"datasources"`
			Providers []struct {
				Type    string `yaml:"type"`
				Options struct {
					Path string `yaml:"path"`
				} `yaml:"options"`
			} `yaml:"providers"`
		}
		if err := yaml.Unmarshal(f.Data, &doc); err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		if doc.APIVersion != 1 {
			t.Errorf("%s: apiVersion %d, want 1", f.Name, doc.APIVersion)
		}
		for _, d := range doc.Datasources {
			types[d.Type] = true
			if d.URL == "" {
				t.Errorf("%s: datasource %s has no url", f.Name, d.Type)
			}
		}
		for _, p := range doc.Providers {
			providers++
			if p.Type != "file" || p.Options.Path == "" {
				t.Errorf("%s: provider %+v, want a file provider with a path", f.Name, p)
			}
		}
	}
	for _, typ := range []string{dashboards.TypePrometheus, dashboards.TypeTempo, dashboards.TypePyroscope} {
		if !types[typ] {
			t.Errorf("provisioning declares no %s datasource", typ)
		}
	}
	if providers == 0 {
		t.Error("provisioning declares no dashboard provider")
	}
}

func TestWriteCreatesTheDirectoryAndReplacesGeneratedFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	marked := func(s string) []byte { return []byte(dashboards.GeneratedMarker + " " + s) }
	files := []dashboards.File{{Name: "x.json", Data: marked("1")}, {Name: filepath.Join("p", "y.yaml"), Data: marked("2")}}
	if _, err := dashboards.Write(dir, files, false); err != nil {
		t.Fatal(err)
	}
	files[0].Data = marked("3")
	written, err := dashboards.Write(dir, files, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []dashboards.Written{{Path: filepath.Join(dir, "x.json"), Status: dashboards.Replaced}, {Path: filepath.Join(dir, "p", "y.yaml"), Status: dashboards.Unchanged}}
	if !slices.Equal(written, want) {
		t.Fatalf("written = %v, want %v", written, want)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "x.json")); !bytes.Equal(got, marked("3")) {
		t.Errorf("x.json = %q, want the replaced content", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "p", "y.yaml")); !bytes.Equal(got, marked("2")) {
		t.Errorf("p/y.yaml = %q", got)
	}
}

func TestQueriesRejectsJSONThatIsNotADashboard(t *testing.T) {
	for name, in := range map[string]string{
		"not json":           `{"panels": [`,
		"unknown datasource": `{"panels": [{"title": "p", "targets": [{"refId": "A", "datasource": {"type": "loki"}}]}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := dashboards.Queries([]byte(in)); err == nil {
				t.Error("Queries succeeded, want an error")
			}
		})
	}
}

// TestFleetDashboardHasAPanelPerConnectorMeasure pins the "MCP pool
// fleet" dashboard: over the connector's metrics only (never the
// pool's own), ratios of per-pool sums of counters (never averages of
// ratios), and a panel for each measure of the connector.
func TestFleetDashboardHasAPanelPerConnectorMeasure(t *testing.T) {
	prom := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
	acquires := prom(spans.ConnectorMetricAcquires) + "_total"
	byPanel := map[string][]dashboards.Query{}
	for _, q := range fleetQueries(t) {
		byPanel[q.Panel] = append(byPanel[q.Panel], q)
		if q.Datasource != dashboards.TypePrometheus {
			t.Errorf("panel %q queries %s, want Prometheus", q.Panel, q.Datasource)
		}
		for _, m := range regexp.MustCompile(`([a-z_]+)\{`).FindAllStringSubmatch(q.Expr, -1) {
			if !strings.HasPrefix(m[1], "mcptrace_") {
				t.Errorf("panel %q %s reads %s, not one of the connector's metrics", q.Panel, q.RefID, m[1])
			}
		}
		if strings.Contains(q.Expr, "avg") {
			t.Errorf("panel %q %s averages: ratios must be ratios of sums\n%s", q.Panel, q.RefID, q.Expr)
		}
	}
	perPool := "sum by (" + prom(spans.AttrPoolID) + ") (rate(" + acquires + "{"
	want := []struct {
		panel    string
		contains []string
	}{
		{dashboards.FleetPanelHitRate, []string{perPool, prom(spans.AttrCacheHit) + `="true"`, "1 - (" + perPool, prom(spans.AttrMissCause) + `="` + spans.MissCold + `"`}},
		{dashboards.FleetPanelHitRateSince, []string{prom(spans.AttrCacheHit) + `="true"`, prom(spans.AttrMissCause) + `="` + spans.MissCold + `"`}},
		{dashboards.FleetPanelMissesByCause, []string{"by (" + prom(spans.AttrPoolID) + ", " + prom(spans.AttrMissCause) + ")", prom(spans.AttrCacheHit) + `="false"`}},
		{dashboards.FleetPanelMissesSince, []string{"by (" + prom(spans.AttrPoolID) + ", " + prom(spans.AttrMissCause) + ")"}},
		{dashboards.FleetPanelUnexplained, []string{perPool, prom(spans.AttrCacheHit) + `="false"`, prom(spans.AttrMissCause) + `!~"`}},
		{dashboards.FleetPanelMultiSession, []string{prom(spans.ConnectorMetricExecutions), prom(spans.AttrMultiSession) + `="true"`}},
		{dashboards.FleetPanelViolations, []string{prom(spans.ConnectorMetricRuleViolations), "by (" + prom(spans.AttrRuleID)}},
		{dashboards.FleetPanelViolationsSince, []string{prom(spans.ConnectorMetricRuleViolations), "by (" + prom(spans.AttrRuleID)}},
		{dashboards.FleetPanelConnectorTraces, []string{prom(spans.ConnectorMetricTracesFinalized), prom(spans.ConnectorMetricTracesCut), prom(spans.ConnectorMetricTracesLateSpans)}},
		{dashboards.FleetPanelConnectorSummary, []string{prom(spans.ConnectorMetricTracesFinalized), prom(spans.ConnectorMetricTracesCut), prom(spans.ConnectorMetricTracesLateSpans)}},
	}
	for _, w := range want {
		qs := byPanel[w.panel]
		if len(qs) == 0 {
			t.Errorf("no panel %q", w.panel)
			continue
		}
		var all []string
		for _, q := range qs {
			all = append(all, q.Expr)
		}
		joined := strings.Join(all, "\n")
		for _, c := range w.contains {
			if !strings.Contains(joined, c) {
				t.Errorf("panel %q has no query with %s:\n%s", w.panel, c, joined)
			}
		}
	}

	var d struct {
		Templating struct {
			List []struct {
				Name     string `json:"name"`
				Type     string `json:"type"`
				Query    any    `json:"query"`
				AllValue string `json:"allValue"`
				Multi    bool   `json:"multi"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(generated(t)[dashboards.FleetFile], &d); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			vars[v.Name] = fmt.Sprint(v.Query)
			if v.AllValue != dashboards.AllValue || !v.Multi {
				t.Errorf("variable %s: allValue %q multi %v, want %q and multi", v.Name, v.AllValue, v.Multi, dashboards.AllValue)
			}
		}
	}
	for name, want := range map[string]string{
		dashboards.VarPool: "label_values(" + acquires + ", " + prom(spans.AttrPoolID) + ")",
		dashboards.VarRule: "label_values(" + prom(spans.ConnectorMetricRuleViolations) + "_total, " + prom(spans.AttrRuleID) + ")",
	} {
		if vars[name] != want {
			t.Errorf("variable %s queries %q, want %q", name, vars[name], want)
		}
	}
}
