package engine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// scopesDump indexes one pooled invocation in each of n pool scopes; the
// first scope's name is long.
func scopesDump(t testing.TB, n int, long string) *index.Index {
	t.Helper()
	d := newDump()
	for i := range n {
		name := fmt.Sprintf("scope-%d", i)
		if i == 0 {
			name = long
		}
		ss := d.resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, name)
		d.invocation(ss, lease{trace: uint64(i + 1), start: time.Duration(i) * time.Millisecond, end: time.Duration(i)*time.Millisecond + 500*time.Microsecond,
			key: "k", hit: false, reason: spans.MissCold, handshake: true, session: fmt.Sprintf("s%d", i)})
	}
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(d.td)
	return idx
}

// Every report format has a size budget: a value of megabytes shows as a
// clipped cell with a visible mark, and Markdown's padding to the widest
// cell is bounded by the cell budget (the HTML report's own bound is
// analyze/htmlreport's TestHTMLReportListsABoundedNumberOfScopes). So
// output grows at most linearly with the rows, whatever one value holds
// (unbounded, a 45 KB dump's Markdown can be gigabytes).
func TestReportOutputIsBoundedPerRow(t *testing.T) {
	const n = 300
	long := strings.Repeat("[x](https://e.example)\u202e", 40_000) // about 1 MB
	idx := scopesDump(t, n, long)
	r, err := Analyze(asDump(idx), rulefmt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Pool.ByScope) != n {
		t.Fatalf("%d scopes, want %d", len(r.Pool.ByScope), n)
	}
	// A row is at most its columns times the cell budget, at 10 bytes per
	// escaped rune; the rest of the report is a few KB.
	const cols = 9
	for _, tc := range []struct {
		format string
		cell   int
	}{{render.FormatTable, render.MaxTableCell}, {render.FormatMarkdown, render.MaxMDCell}} {
		var b bytes.Buffer
		if err := render.Write(&b, r, tc.format); err != nil {
			t.Fatal(err)
		}
		bound := 16<<10 + (render.MaxRows+2)*(cols*(tc.cell*10+3)+2)
		if b.Len() > bound {
			t.Errorf("%s: %d bytes for %d scopes, over the bound of %d", tc.format, b.Len(), n, bound)
		}
		if !strings.Contains(b.String(), "…") {
			t.Errorf("%s: the long scope name shows no clip mark", tc.format)
		}
		if want := fmt.Sprintf("and %d more rows", n-render.MaxRows); !strings.Contains(b.String(), want) {
			t.Errorf("%s: the scope table does not say %q", tc.format, want)
		}
		if strings.Contains(b.String(), fmt.Sprintf("scope-%d ", n-1)) {
			t.Errorf("%s: draws the last of %d scopes, past the %d-row cap", tc.format, n, render.MaxRows)
		}
		// Markdown pads to the widest cell: a short scope's row stays short.
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.Contains(line, "scope-7 ") && len(line) > cols*(tc.cell*10+3)+2 {
				t.Errorf("%s: a short row is %d bytes: padded to an unbounded cell", tc.format, len(line))
			}
		}
	}
}
