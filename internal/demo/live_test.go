package demo_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/internal/testbound"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// family is what the README promises about one Prometheus metric family.
type family struct {
	typ    string
	labels []string
}

// readmeMetrics parses the table of the README's "### Metrics" section: one
// row per family, `name` | type | `label`, `label` ... | instrument.
func readmeMetrics(t *testing.T) map[string]family {
	t.Helper()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| ([a-z]+) \\| ([^|]*) \\|")
	label := regexp.MustCompile("`([a-z_]+)`")
	notes := regexp.MustCompile(`\([^)]*\)`)
	out := map[string]family{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = line == "### Metrics"
			continue
		}
		if !in {
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var labels []string
		// Parenthesized notes list label values, not labels.
		names := notes.ReplaceAllString(m[3], "")
		for _, l := range label.FindAllStringSubmatch(names, -1) {
			labels = append(labels, l[1])
		}
		sort.Strings(labels)
		out[m[1]] = family{typ: m[2], labels: labels}
	}
	if len(out) == 0 {
		t.Fatal("README.md has no metric table under ### Metrics")
	}
	return out
}

// scrapeFamilies GETs a Prometheus text exposition and parses it.
func scrapeFamilies(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	return p.TextToMetricFamilies(strings.NewReader(string(body)))
}

// scraped is one family as exposed: its type and the union of its labels,
// without le (histogram buckets) and the otel_scope_* labels every pool
// metric carries.
func scraped(mf *dto.MetricFamily) family {
	set := map[string]bool{}
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			n := lp.GetName()
			if n == "le" || strings.HasPrefix(n, "otel_scope_") {
				continue
			}
			set[n] = true
		}
	}
	labels := make([]string, 0, len(set))
	for n := range set {
		labels = append(labels, n)
	}
	sort.Strings(labels)
	return family{typ: strings.ToLower(mf.GetType().String()), labels: labels}
}

// labelValues returns the distinct values of label in a family.
func labelValues(mf *dto.MetricFamily, label string) map[string]bool {
	out := map[string]bool{}
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label {
				out[lp.GetValue()] = true
			}
		}
	}
	return out
}

// wantLabelValues are the label values the live workload must produce, so
// every panel of the dashboards has data.
var wantLabelValues = map[string]map[string][]string{
	"mcp_pool_acquires_total": {
		"plugin_mcp_miss_reason": {spans.MissCold, spans.MissConcurrent, spans.MissTTL, spans.MissRedial, spans.MissAfterFailure, spans.MissHealthCheck, spans.MissEvicted},
		"plugin_mcp_cache_hit":   {"true", "false"},
		"plugin_mcp_pool_id":     {demo.LivePoolSteady, demo.LivePoolTTL, demo.LivePoolFaults, demo.LivePoolLRU},
	},
	"mcp_pool_evictions_total": {
		"mcp_pool_eviction_reason": {spans.EvictTTL, spans.EvictIdleLimit, spans.EvictLRU, spans.EvictHealthCheck},
	},
	"mcp_pool_failures_total": {
		"error_type": {spans.ErrTypeHTTPStatus, spans.ErrTypeTransport, spans.ErrTypeSessionExpired},
	},
	"mcp_pool_connection_count": {
		"mcp_pool_connection_state": {spans.StateIdle, spans.StateUsed},
	},
	"mcp_client_operation_duration_seconds": {
		"error_type": {spans.ErrTypeToolError},
	},
}

// missing lists what the scrape lacks of wantLabelValues and of the README.
func missing(fams map[string]*dto.MetricFamily, readme map[string]family) []string {
	var out []string
	for name := range readme {
		if _, ok := fams[name]; !ok {
			out = append(out, "family "+name)
		}
	}
	for name, labels := range wantLabelValues {
		mf, ok := fams[name]
		if !ok {
			continue
		}
		for label, values := range labels {
			have := labelValues(mf, label)
			for _, v := range values {
				if !have[v] {
					out = append(out, fmt.Sprintf("%s{%s=%q}", name, label, v))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestLiveWorkloadExportsTheREADMEMetricsWithEveryMissReason(t *testing.T) {
	readme := readmeMetrics(t)
	exp, err := telemetry.NewPrometheusExporter()
	if err != nil {
		t.Fatal(err)
	}
	tel, err := telemetry.Setup(context.Background(), telemetry.Config{ServiceName: "mcptrace-demo-test", MetricReaders: []sdkmetric.Reader{exp.Reader}})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	srv, err := telemetry.ServeMetrics("127.0.0.1:0", exp.Handler)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())

	ctx, stop := context.WithCancel(context.Background())
	type outcome struct {
		res demo.LiveResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := demo.RunLive(ctx, demo.LiveConfig{MeterProvider: tel.MeterProvider, Pause: 20 * time.Millisecond})
		done <- outcome{res, err}
	}()

	// Poll the endpoint until the workload has produced every family and
	// label value, with a bound: a first round of every scenario is enough.
	deadline, cancel := testbound.Context(t)
	defer cancel()
	var fams map[string]*dto.MetricFamily
	var lack []string
	for {
		fams, err = scrapeFamilies(deadline, srv.URL())
		if err == nil {
			lack = missing(fams, readme)
			if len(lack) == 0 {
				break
			}
		}
		if deadline.Err() != nil {
			stop()
			<-done
			t.Fatalf("after 45s the scrape still lacks %v (last error %v)", lack, err)
		}
		select {
		case <-deadline.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	stop()
	out := <-done
	if out.err != nil {
		t.Fatalf("RunLive: %v", out.err)
	}

	// The README pins the exposition: the same families, types and labels.
	var got []string
	for name, mf := range fams {
		if name == "target_info" {
			continue
		}
		got = append(got, name)
		want, ok := readme[name]
		if !ok {
			t.Errorf("exported family %s is not listed in the README's metrics table", name)
			continue
		}
		if s := scraped(mf); s.typ != want.typ || !slices.Equal(s.labels, want.labels) {
			t.Errorf("%s exported as %s with labels %v; the README says %s with %v", name, s.typ, s.labels, want.typ, want.labels)
		}
		if len(labelValues(mf, "otel_scope_name")) == 0 {
			t.Errorf("%s has no otel_scope_name label", name)
		}
	}
	if _, ok := readme["target_info"]; !ok {
		t.Error("README does not list target_info")
	} else if ti, ok := fams["target_info"]; !ok || !labelValues(ti, "service_name")["mcptrace-demo-test"] {
		t.Error("target_info does not carry service_name")
	}
	for name := range readme {
		if name != "target_info" && !slices.Contains(got, name) {
			t.Errorf("README lists %s, which is not exported", name)
		}
	}

	res := out.res
	if res.Rounds == 0 || res.Calls == 0 || res.Acquires == 0 || res.Hits == 0 || res.Redials == 0 {
		t.Errorf("live result = %+v, want rounds, calls, hits and redials", res)
	}
	if res.UnexpectedErrors != 0 {
		t.Errorf("%d unexpected errors, last: %s", res.UnexpectedErrors, res.LastError)
	}
	for _, r := range wantLabelValues["mcp_pool_acquires_total"]["plugin_mcp_miss_reason"] {
		if res.MissReasons[r] == 0 {
			t.Errorf("LiveResult.MissReasons[%s] = 0, want > 0 (all: %v)", r, res.MissReasons)
		}
	}
}

func TestRunLiveStopsAtItsDurationAndWhenCancelled(t *testing.T) {
	res, err := demo.RunLive(context.Background(), demo.LiveConfig{Duration: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("RunLive with a duration: %v", err)
	}
	if res.Wall <= 0 {
		t.Errorf("Wall = %v, want the time run", res.Wall)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := demo.RunLive(ctx, demo.LiveConfig{}); err != nil {
		t.Errorf("RunLive on a cancelled context: %v, want nil (stopping is the normal end)", err)
	}
}
