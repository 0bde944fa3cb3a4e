package whatif

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// TestHitRatesNeverRoundToAHundredOrZero pins the hit rate's digits in
// every output a person reads: 3999 hits of 4000 acquires is 99.975%,
// which one decimal would draw "100.0%" (a pool that never misses), and 1
// of 4000 is 0.025%, not "0.0%". JSON carries the ratio itself.
// (textfmt.Percent is the rule; the analyzer's reports draw by it too.)
func TestHitRatesNeverRoundToAHundredOrZero(t *testing.T) {
	set := Settings{IdleTTL: 5 * time.Minute, IdlePerKey: 1, Peak: true, MaxIdle: 64}
	other := set
	other.IdleTTL = time.Minute
	rows := []Row{
		{Settings: set, AsRecorded: true, Acquires: 4000, Hits: 3999, MissesByCause: map[string]int{"cold": 1}},
		{Settings: other, Acquires: 4000, Hits: 1, MissesByCause: map[string]int{"cold": 3999}},
	}
	for _, tc := range []struct {
		name  string
		write func(io.Writer, []Row, Marks) error
	}{
		{"table", WriteTable}, {"markdown", WriteMarkdown}, {"html", WriteHTMLSection},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b, rows, Marks{}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if i := strings.Index(out, "<table"); i >= 0 {
				// The page's charts label their axes at exactly 0% and
				// 100%: only the table's rates are the rows'.
				out = out[i : i+strings.Index(out[i:], "</table>")]
			}
			for _, want := range []string{"99.98%", "0.03%"} {
				if !strings.Contains(out, want) {
					t.Errorf("lacks %q", want)
				}
			}
			for _, bad := range []string{"100.0%", " 0.0%", "|0.0%", ">0.0%"} {
				if strings.Contains(out, bad) {
					t.Errorf("draws %q for a rate that is not", bad)
				}
			}
		})
	}
}
