package gate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// TestAComparisonNamesTheUnitOfItsLatencies pins the diff's tables: a
// latency row names its unit, a rate or a count does not (its figure
// says what it is), in the table and in Markdown alike.
func TestAComparisonNamesTheUnitOfItsLatencies(t *testing.T) {
	v := 1.0
	rows := []Row{{Measure: "call.p50", Baseline: &v, Current: &v}, {Measure: "acquire_miss.p99", Baseline: &v, Current: &v}, {Measure: "hit_rate", Baseline: &v, Current: &v}}
	var table, md bytes.Buffer
	if err := renderRows(&textfmt.ErrWriter{W: &table}, rows); err != nil {
		t.Fatal(err)
	}
	renderRowsMarkdown(&textfmt.ErrWriter{W: &md}, rows)
	for name, out := range map[string]string{"table": table.String(), "markdown": md.String()} {
		for _, want := range []string{"call.p50", "acquire_miss.p99"} {
			line := lineWith(out, want)
			if !strings.Contains(line, "(ms)") {
				t.Errorf("%s: the %s row names no unit: %q", name, want, line)
			}
		}
		if line := lineWith(out, "hit_rate"); strings.Contains(line, "(ms)") {
			t.Errorf("%s: the hit_rate row reads as milliseconds: %q", name, line)
		}
	}
}

func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
