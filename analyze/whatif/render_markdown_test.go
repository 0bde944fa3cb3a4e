package whatif

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// cellsOf splits a Markdown table row as GitHub does: on '|' not escaped
// by a backslash, the row's outer pipes dropped.
func cellsOf(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var cells []string
	cur := ""
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row):
			cur += row[i : i+2]
			i++
		case row[i] == '|':
			cells = append(cells, cur)
			cur = ""
		default:
			cur += string(row[i])
		}
	}
	return append(cells, cur)
}

// TestMarkdownSettingStaysOneCell: a setting's text holding '|',
// backticks, a newline or markup stays one code-span cell of one row.
func TestMarkdownSettingStaysOneCell(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"plain", "idle-ttl=5m idle-per-key=peak"},
		{"pipe", "a|b||c"},
		{"backticks", "a`b``c`"},
		{"pipe inside backticks", "`a|b`"},
		{"newline", "a\nb\r\nc"},
		{"markup", "<img src=x> [x](http://e)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			mdRow(&b, []string{mdSetting(tc.text), "2"})
			out := b.String()
			if strings.Count(out, "\n") != 1 {
				t.Fatalf("%q: %d lines, want one row", out, strings.Count(out, "\n"))
			}
			cells := cellsOf(out)
			if len(cells) != 2 {
				t.Fatalf("%q: %d cells %q, want 2", out, len(cells), cells)
			}
			c := strings.TrimSpace(cells[0])
			if !strings.HasPrefix(c, "`") || !strings.HasSuffix(c, "`") || strings.Count(c, "`") != 2 {
				t.Errorf("cell %q: want one code span, no backtick inside", c)
			}
		})
	}
}

// mdRows are n rows sorted as given, the as-recorded one at index rec.
func mdRows(n, rec int) []Row {
	var rows []Row
	for i := range n {
		rows = append(rows, Row{Settings: Settings{IdleTTL: time.Duration(i+1) * time.Second, IdlePerKey: 1, MaxIdle: 64},
			AsRecorded: i == rec, Acquires: 100, Hits: 100 - i, SessionsOpened: i, MissesByCause: map[string]int{"ttl": i}})
	}
	return rows
}

// TestMarkdownReportIsBoundedAndComplete: the table shows at most
// MaxMarkdownRows rows and always the as-recorded row, counts the rest,
// and the best-per-cost lines and the out-of-scope sentence follow.
func TestMarkdownReportIsBoundedAndComplete(t *testing.T) {
	for _, tc := range []struct {
		name        string
		n, rec      int
		shown, more int
	}{
		{"fewer rows than the bound: all shown", 3, 1, 3, 0},
		{"exactly the bound: all shown", MaxMarkdownRows, MaxMarkdownRows - 1, MaxMarkdownRows, 0},
		{"one over the bound: one counted", MaxMarkdownRows + 1, 0, MaxMarkdownRows, 1},
		{"over the bound, as recorded inside", MaxMarkdownRows + 5, 0, MaxMarkdownRows, 5},
		{"over the bound, as recorded past it: shown too", MaxMarkdownRows + 5, MaxMarkdownRows + 3, MaxMarkdownRows + 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteMarkdown(&b, mdRows(tc.n, tc.rec), Marks{Assumed: true}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			rows := 0
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "| `idle-ttl=") {
					rows++
				}
			}
			if rows != tc.shown {
				t.Errorf("%d rows shown, want %d\n%s", rows, tc.shown, out)
			}
			if more := fmt.Sprintf("%d more rows not shown", tc.more); (tc.more > 0) != strings.Contains(out, more) {
				t.Errorf("want %q said iff rows were left out (%d)\n%s", more, tc.more, out)
			}
			if !strings.Contains(out, "(as recorded, settings assumed)") {
				t.Errorf("the as-recorded row is not marked\n%s", out)
			}
			if got := strings.Count(out, "\n- at most "); got != len(Costs) {
				t.Errorf("%d best-per-cost lines, want %d\n%s", got, len(Costs), out)
			}
			if !strings.HasSuffix(out, OutOfScope+".\n") {
				t.Errorf("the out-of-scope sentence does not end the report\n%s", out)
			}
		})
	}
}
