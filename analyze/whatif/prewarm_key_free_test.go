package whatif

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze"
)

// TestPrewarmFiguresAreGivenWhereTheyDoNotDependOnKeys pins the pre-warm
// cell of every output where the replay merges keys (Marks.KeysMerged):
// a row that replays no pre-warm (none; or recent:N keeping no idle
// session) dialed nothing, "0 (0)"; an as-recorded row dialed the dump's
// own pre-warm handshakes, whatever their keys, so its dials are given
// and its unused are not where it dialed any, "3 (—)", and are 0 where it
// dialed none; a recent:N row picks keys to dial, so neither is given. The
// JSON gives the same figures, nulls the others, and its figures section
// lists a pre-warm figure only where some row nulls it, saying where it is
// given; with no row depending on keys it lists neither.
func TestPrewarmFiguresAreGivenWhereTheyDoNotDependOnKeys(t *testing.T) {
	row := func(ttl time.Duration, perKey, prewarm, dials, unused int, asRecorded bool) Row {
		return Row{Settings: Settings{IdleTTL: ttl, IdlePerKey: perKey, MaxIdle: 64, Prewarm: prewarm}, AsRecorded: asRecorded,
			Acquires: 9, Hits: 4, MissesByCause: map[string]int{"cold": 5}, SessionsOpened: 5 + dials, PeakSessions: 3,
			IdleSessionSeconds: 2.5, PrewarmDials: dials, PrewarmUnused: unused}
	}
	recorded := row(time.Minute, 1, PrewarmAsRecorded, 3, 1, true)
	none := row(time.Second, 1, 0, 0, 0, false)
	recent := row(2*time.Second, 1, 2, 4, 2, false)
	recentKeepingNone := row(3*time.Second, -1, 2, 0, 0, false)
	recordedNoDial := row(4*time.Second, 1, PrewarmAsRecorded, 0, 0, false)
	type want struct {
		cell          string
		dials, unused *int
	}
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		name    string
		rows    []Row
		want    []want
		figures map[string]bool // the pre-warm figures listed, and whether with the rows that give them
	}{
		{"rows of every kind", []Row{recorded, none, recent, recentKeepingNone, recordedNoDial},
			[]want{{"3 (—)", n(3), nil}, {"0 (0)", n(0), n(0)}, {"—", nil, nil}, {"0 (0)", n(0), n(0)}, {"0 (0)", n(0), n(0)}},
			map[string]bool{figPrewarmDials: true, figPrewarmUnused: true}},
		{"no row depends on keys", []Row{none, recentKeepingNone, recordedNoDial},
			[]want{{"0 (0)", n(0), n(0)}, {"0 (0)", n(0), n(0)}, {"0 (0)", n(0), n(0)}}, map[string]bool{}},
		{"only unused depends on keys", []Row{recorded, none},
			[]want{{"3 (—)", n(3), nil}, {"0 (0)", n(0), n(0)}}, map[string]bool{figPrewarmUnused: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const why = "two targets read as one key"
			m := Marks{KeysMerged: why}
			for _, f := range []struct {
				name  string
				write func(io.Writer, []Row, Marks) error
				cell  func(out string, r Row) string
			}{
				{"table", WriteTable, tableCell},
				{"markdown", WriteMarkdown, markdownCell},
				{"html", WriteHTMLSection, htmlCell},
			} {
				var b bytes.Buffer
				if err := f.write(&b, tc.rows, m); err != nil {
					t.Fatal(err)
				}
				for i, r := range tc.rows {
					if got := f.cell(b.String(), r); got != tc.want[i].cell {
						t.Errorf("%s: %s pre-warm cell %q, want %q in:\n%s", f.name, r.Settings, got, tc.want[i].cell, b.String())
					}
				}
			}
			var b bytes.Buffer
			if err := WriteJSON(&b, tc.rows, m); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Figures map[string]struct{ State, Why string } `json:"figures"`
				Rows    []struct {
					Settings string `json:"settings"`
					Dials    *int   `json:"prewarm_dials"`
					Unused   *int   `json:"prewarm_unused"`
					Hits     *int   `json:"hits"`
				} `json:"rows"`
			}
			if err := json.Unmarshal(b.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			for i, r := range got.Rows {
				w := tc.want[i]
				if r.Settings != tc.rows[i].Settings.String() || fmt.Sprint(deref(r.Dials), deref(r.Unused)) != fmt.Sprint(deref(w.dials), deref(w.unused)) || r.Hits != nil {
					t.Errorf("json: %s pre-warm dials %s unused %s hits %s, want %s %s null", r.Settings, deref(r.Dials), deref(r.Unused), deref(r.Hits), deref(w.dials), deref(w.unused))
				}
			}
			for _, name := range []string{figPrewarmDials, figPrewarmUnused} {
				f, listed := got.Figures[name]
				withRows, want := tc.figures[name]
				switch {
				case listed != want:
					t.Errorf("json: figures[%s] listed %v, want %v\n%s", name, listed, want, b.String())
				case listed && (f.State != "not_measurable" || !strings.HasPrefix(f.Why, why) || strings.Contains(f.Why, keyFreeNote) != withRows):
					t.Errorf("json: figures[%s] = %+v, want not_measurable because %q, naming the rows that give it: %v", name, f, why, withRows)
				}
			}
			if f := got.Figures["hit_rate"]; f.State != "not_measurable" || f.Why != why {
				t.Errorf("json: figures[hit_rate] = %+v, want not_measurable because %q", f, why)
			}
		})
	}
}

// deref writes a JSON figure as the test compares it: its number, or null.
func deref(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// tableCell is the last cell of r's line in WriteTable's out.
func tableCell(out string, r Row) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, r.Settings.String()+" ") {
			fields := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
			return fields[len(fields)-1]
		}
	}
	return "(no row)"
}

// markdownCell is the last cell of r's row in WriteMarkdown's out.
func markdownCell(out string, r Row) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| "+mdSetting(r.Settings.String())) {
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			return cells[len(cells)-1]
		}
	}
	return "(no row)"
}

// htmlCell is the last cell of r's row in WriteHTMLSection's out.
func htmlCell(out string, r Row) string {
	re := regexp.MustCompile(`<tr[^>]*><td><code>` + regexp.QuoteMeta(r.Settings.String()) + `</code>.*?<td class="n">([^<]*)</td></tr>`)
	if m := re.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return "(no row)"
}

// TestKeyFreeFiguresAreTheSameWhateverTheKeys pins keyFree's argument on
// real replays: the same acquires and recorded pre-warm dials, replayed
// with their keys and with every key merged into one, under a grid of
// settings. Wherever keyFree says a figure of the merged replay's row
// does not depend on the keys, the keyed replay's is the same; and the
// figures it leaves not measurable do differ somewhere (a recent:N
// pre-warm's dials, an as-recorded dial's unused), so the test would see
// keyFree claim too much.
func TestKeyFreeFiguresAreTheSameWhateverTheKeys(t *testing.T) {
	// s1 calls a, b, c, then s2 (the same service) starts: recent:N dials
	// s1's recent keys. A recorded pre-warm dial of x is never acquired by
	// its own key, but merged, the next acquire takes it.
	mk := func(merge bool) *Workload {
		key := func(k string) string {
			if merge {
				return ""
			}
			return k
		}
		c := NewCollector()
		add := func(scope, k string, start, end int64, prewarm bool) {
			c.Add(&analyze.Acquire{Scope: scope, Key: key(k), Start: start, LeaseEnd: end, Attempt: 1, Prewarm: prewarm,
				Service: "svc", HasService: true})
		}
		add("s1", "x", 0, 5, true)
		add("s1", "a", 10, 20, false)
		add("s1", "b", 30, 40, false)
		add("s1", "c", 50, 60, false)
		add("s2", "c", 100, 110, false)
		add("s2", "a", 120, 130, false)
		return c.Workload()
	}
	keyed, merged := mk(false), mk(true)
	differs := map[string]bool{}
	for _, ttl := range []time.Duration{time.Nanosecond, time.Second} {
		for _, perKey := range []int{-1, 0, 1, 2} {
			for _, prewarm := range []int{PrewarmAsRecorded, 0, 1, 3} {
				for _, maxIdle := range []int{1, 64} {
					set := Settings{IdleTTL: ttl, IdlePerKey: perKey, MaxIdle: maxIdle, Prewarm: prewarm}
					k, m := keyed.Replay(set), merged.Replay(set)
					for _, f := range []struct {
						name string
						k, m int
					}{{figPrewarmDials, k.PrewarmDials, m.PrewarmDials}, {figPrewarmUnused, k.PrewarmUnused, m.PrewarmUnused}} {
						switch {
						case keyFree(m, f.name) && f.k != f.m:
							t.Errorf("%s: %s %d keyed, %d merged, yet keyFree", set, f.name, f.k, f.m)
						case !keyFree(m, f.name) && f.k != f.m:
							differs[f.name] = true
						}
					}
				}
			}
		}
	}
	for _, f := range []string{figPrewarmDials, figPrewarmUnused} {
		if !differs[f] {
			t.Errorf("no setting's %s differs keyed and merged: the workload does not show why keyFree leaves it out", f)
		}
	}
}
