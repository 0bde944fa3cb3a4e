package dashboards_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/dashboards"
	"github.com/mcptrace/mcptrace/spans"
)

// metricLabels reads the main README's table of Prometheus metrics (pinned
// against a live scrape by spans' tests): metric name → the labels it
// carries. Histograms get their _bucket, _count and _sum series, _bucket
// with le.
func metricLabels(t *testing.T) map[string]map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (counter|histogram|gauge) \\| ([^|]+) \\|")
	paren := regexp.MustCompile(`\([^)]*\)`)
	tick := regexp.MustCompile("`([a-z_]+)`")
	out := map[string]map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		labels := map[string]bool{}
		for _, l := range tick.FindAllStringSubmatch(paren.ReplaceAllString(m[3], ""), -1) {
			labels[l[1]] = true
		}
		if m[2] != "histogram" {
			out[m[1]] = labels
			continue
		}
		for _, suffix := range []string{"_count", "_sum", "_bucket"} {
			l := map[string]bool{}
			for k := range labels {
				l[k] = true
			}
			if suffix == "_bucket" {
				l["le"] = true
			}
			out[m[1]+suffix] = l
		}
	}
	if len(out) < 9 {
		t.Fatalf("found %d metrics in README.md's table: the table or this parser changed", len(out))
	}
	return out
}

// connectorMetricLabels reads the metric contract table of
// docs/collector.md (the mcptrace connector's counters): Prometheus name →
// the labels it carries. A row reads
// | `otel.name` (`prom_name_total`) | `attr.one`, `attr.two` (values) | status |,
// or "none; what it counts" in the attribute cell.
func connectorMetricLabels(t *testing.T) map[string]map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "collector.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_.]+)` \\(`([a-z_]+)`\\) \\| ([^|]+) \\|")
	paren := regexp.MustCompile(`\([^)]*\)`)
	tick := regexp.MustCompile("`([a-z_.]+)`")
	out := map[string]map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		if strings.ReplaceAll(m[1], ".", "_")+"_total" != m[2] {
			t.Errorf("docs/collector.md: %s is exported as %s, want the _total counter name", m[1], m[2])
		}
		// "none; what it counts": the attributes are before the first ";".
		cell, _, _ := strings.Cut(m[3], ";")
		labels := map[string]bool{}
		for _, l := range tick.FindAllStringSubmatch(paren.ReplaceAllString(cell, ""), -1) {
			labels[strings.ReplaceAll(l[1], ".", "_")] = true
		}
		out[m[2]] = labels
	}
	if len(out) < 7 {
		t.Fatalf("found %d metrics in docs/collector.md's contract table: the table or this parser changed", len(out))
	}
	return out
}

// TestPrometheusQueriesFilterOnlyOnLabelsTheirMetricCarries pins that a
// panel never filters a metric on a label it does not carry: such a
// selector matches nothing as soon as a concrete value is selected (the
// cache key on the handshake, call, eviction and redial metrics).
func TestPrometheusQueriesFilterOnlyOnLabelsTheirMetricCarries(t *testing.T) {
	labels := metricLabels(t)
	for m, l := range connectorMetricLabels(t) {
		labels[m] = l
	}
	selector := regexp.MustCompile(`([a-z_]+)\{([^}]*)\}`)
	matcher := regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)\s*"`)
	grouping := regexp.MustCompile(`by \(([a-z_, ]+)\)`)
	checked := 0
	for _, q := range append(poolQueries(t), fleetQueries(t)...) {
		if q.Datasource != dashboards.TypePrometheus {
			continue
		}
		used := map[string]bool{}
		expr := strings.NewReplacer("${"+dashboards.VarPool+"}", "p", "${"+dashboards.VarKey+"}", "k", "${"+dashboards.VarRule+"}", "r").Replace(q.Expr)
		for _, s := range selector.FindAllStringSubmatch(expr, -1) {
			carried, ok := labels[s[1]]
			if !ok {
				t.Errorf("panel %q %s: metric %s is not in README.md's table", q.Panel, q.RefID, s[1])
				continue
			}
			for k := range carried {
				used[k] = true
			}
			for _, m := range matcher.FindAllStringSubmatch(s[2], -1) {
				checked++
				if !carried[m[1]] {
					t.Errorf("panel %q %s filters %s on %s, a label it does not carry:\n%s", q.Panel, q.RefID, s[1], m[1], q.Expr)
				}
			}
		}
		for _, g := range grouping.FindAllStringSubmatch(q.Expr, -1) {
			for l := range strings.SplitSeq(g[1], ",") {
				if l = strings.TrimSpace(l); !used[l] {
					t.Errorf("panel %q %s groups by %s, which none of its metrics carries", q.Panel, q.RefID, l)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no label matcher checked: the query parser is broken")
	}
}

// TestReadmeSaysWhichPanelsTheKeyNarrows pins dashboards/README.md to the
// labels: it must not claim that metrics without the key label carry it.
func TestReadmeSaysWhichPanelsTheKeyNarrows(t *testing.T) {
	doc := string(generated(t)[dashboards.ReadmeFile])
	if strings.Contains(doc, "Every pool metric but the idle/in-use gauge") {
		t.Error("README still claims every metric but the gauge carries the key")
	}
	labels := metricLabels(t)
	key := strings.ReplaceAll(spans.AttrCacheKey, ".", "_")
	for metric, l := range labels {
		if strings.HasSuffix(metric, "_sum") || strings.HasSuffix(metric, "_bucket") || metric == "target_info" {
			continue
		}
		name := strings.TrimSuffix(metric, "_count")
		if l[key] != strings.Contains(readmeKeySection(doc), "`"+name+"`") {
			t.Errorf("README's key variable section and the metrics table disagree on whether %s carries %s", name, key)
		}
	}
}

// readmeKeySection is the README's description of the key variable.
func readmeKeySection(doc string) string {
	start := strings.Index(doc, "- `"+dashboards.VarKey+"`")
	if start < 0 {
		return ""
	}
	end := strings.Index(doc[start+1:], "\n- ")
	if end < 0 {
		return doc[start:]
	}
	return doc[start : start+1+end]
}

// TestUnexplainedMissesPanelUsesTheSharedDefinition pins the trace panel to
// spans.TraceQLUnexplainedMiss, the definition the analyzer uses.
func TestUnexplainedMissesPanelUsesTheSharedDefinition(t *testing.T) {
	found := false
	for _, q := range poolQueries(t) {
		if q.Panel != "Recent unexplained misses" {
			continue
		}
		found = true
		if !strings.HasPrefix(q.Expr, spans.TraceQLUnexplainedMiss) {
			t.Errorf("panel query %s does not start with spans.TraceQLUnexplainedMiss %s", q.Expr, spans.TraceQLUnexplainedMiss)
		}
		if strings.Contains(q.Expr, spans.MissEvicted) {
			t.Errorf("panel query %s still counts %q as explained", q.Expr, spans.MissEvicted)
		}
	}
	if !found {
		t.Fatal("no panel \"Recent unexplained misses\"")
	}
}

// TestFleetUnexplainedPanelCountsWhatTheAnalyzerCallsUnexplained pins
// the fleet panel's first query to the analyzer's one definition
// (spans.IsExplainedMiss, report.Unexplained): among misses, every cause
// the connector can count (spans.MissReasons, a reason from outside the
// vocabulary) is selected exactly when it is not explained; cause
// unknown, which the second query shows beside it, is not.
func TestFleetUnexplainedPanelCountsWhatTheAnalyzerCallsUnexplained(t *testing.T) {
	prom := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
	matcher := regexp.MustCompile(prom(spans.AttrMissCause) + `!~"([^"]*)"`)
	for _, q := range fleetQueries(t) {
		if q.Panel != dashboards.FleetPanelUnexplained || q.RefID != "A" {
			continue
		}
		if !strings.Contains(q.Expr, prom(spans.AttrCacheHit)+`="false"`) {
			t.Errorf("query %s counts hits too", q.Expr)
		}
		m := matcher.FindStringSubmatch(q.Expr)
		if m == nil {
			t.Fatalf("query %s selects no causes by a negative matcher", q.Expr)
		}
		excluded := regexp.MustCompile("^(?:" + m[1] + ")$") // PromQL anchors matchers
		for _, cause := range append(slices.Clone(spans.MissReasons), spans.MissCauseUnknown, "somebody_elses") {
			want := !spans.IsExplainedMiss(cause) && cause != spans.MissCauseUnknown
			if got := !excluded.MatchString(cause); got != want {
				t.Errorf("cause %q: the panel counts it %v, want %v (%s)", cause, got, want, q.Expr)
			}
		}
		return
	}
	t.Fatalf("no query A in panel %q", dashboards.FleetPanelUnexplained)
}

// TestReadmeLinksOnlyToFilesWrittenBesideIt pins that the README the
// command writes links to nothing it does not write: links resolve inside
// the generated set (the dashboards without provisioning).
func TestReadmeLinksOnlyToFilesWrittenBesideIt(t *testing.T) {
	gen := generated(t)
	link := regexp.MustCompile(`\]\(([^)#]+)\)`)
	for _, m := range link.FindAllStringSubmatch(string(gen[dashboards.ReadmeFile]), -1) {
		if strings.Contains(m[1], "://") {
			continue
		}
		if _, ok := gen[filepath.FromSlash(m[1])]; !ok {
			t.Errorf("README links to %s, which `mcptrace dashboards --dir DIR` does not write", m[1])
		}
	}
	for _, file := range []string{dashboards.PoolFile, dashboards.FleetFile} {
		if !strings.Contains(string(gen[dashboards.ReadmeFile]), "]("+file+")") {
			t.Errorf("README does not link to %s", file)
		}
	}
}
