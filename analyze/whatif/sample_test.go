package whatif

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// keyed hands out, for each i of counts, counts[i] acquires of key "k<i>"
// in one scope, interleaved one a millisecond: what
// ReportEvents.EachAcquire would.
func keyed(counts []int) func(func(*events.Acquire)) {
	return func(fn func(*events.Acquire)) {
		left := append([]int{}, counts...)
		t := int64(0)
		for more := true; more; {
			more = false
			for i := range left {
				if left[i] == 0 {
					continue
				}
				left[i]--
				more = true
				t += int64(time.Millisecond)
				fn(&events.Acquire{Scope: "s", Key: "k" + strconv.Itoa(i), HasScope: true, HasKey: true, Start: t, LeaseEnd: t + 1000, Attempt: 1})
			}
		}
	}
}

// TestCollectBusiestKeepsTheBusiestKeysAndSaysSo pins the what-if
// section's sampling: within both caps every key is replayed and nothing
// is said; past the key cap the busiest keys (ties: the first seen) are
// kept, each with all its acquires; past the acquire cap keys are kept
// while they fit, the busiest always; the note names what was kept and
// how many more keys are not shown.
func TestCollectBusiestKeepsTheBusiestKeysAndSaysSo(t *testing.T) {
	for _, tc := range []struct {
		name             string
		counts           []int
		maxKeys, maxAcqs int
		want             Sample
		wantNote         string
	}{
		{"within both caps", []int{5, 3, 1}, 3, 9, Sample{3, 3, 9, 9}, ""},
		{"one key over the cap", []int{1, 5, 3}, 2, 100, Sample{3, 2, 9, 8},
			"Replayed over the 2 busiest keys of 3 (8 of 9 acquires); 1 more keys not shown."},
		{"ties: the first seen", []int{2, 2, 2}, 2, 100, Sample{3, 2, 6, 4}, "1 more keys not shown"},
		{"the acquire cap stops at the first key that does not fit", []int{5, 4, 1}, 3, 6, Sample{3, 1, 10, 5}, "2 more keys not shown"},
		{"the busiest key is kept past the acquire cap", []int{7, 1}, 2, 5, Sample{2, 1, 8, 7}, "1 more keys not shown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, smp := CollectBusiest(keyed(tc.counts), tc.maxKeys, tc.maxAcqs)
			if smp != tc.want || w.Acquires() != tc.want.AcquiresShown || w.pairs != tc.want.KeysShown {
				t.Errorf("sample %+v, workload of %d acquires and %d keys; want %+v", smp, w.Acquires(), w.pairs, tc.want)
			}
			if note := smp.Note(); !strings.Contains(note, tc.wantNote) || (tc.wantNote == "") != (note == "") {
				t.Errorf("note %q, want it to say %q", note, tc.wantNote)
			}
		})
	}
}

// TestReportSectionOfAMillionKeysReplaysAThousand: a million keys, one
// acquire each, are replayed as the ReportMaxKeys first seen, and the
// section says how many more are not shown; it is no larger than the
// section of those thousand keys alone plus that note: the section costs
// what a thousand keys do. Under the race detector it runs on 200,000
// keys, as far past the cap for what it pins.
func TestReportSectionOfAMillionKeysReplaysAThousand(t *testing.T) {
	n := 1_000_000
	if raceEnabled || testing.Short() {
		n = 200_000 // still past the thousand replayed, five times faster
	}
	counts := make([]int, n)
	for i := range counts {
		counts[i] = 1
	}
	w, smp := CollectBusiest(keyed(counts), ReportMaxKeys, ReportMaxAcquires)
	if want := (Sample{n, ReportMaxKeys, n, ReportMaxKeys}); smp != want || w.Acquires() != ReportMaxKeys {
		t.Fatalf("sample %+v, workload of %d acquires; want %+v", smp, w.Acquires(), want)
	}
	var million, thousand strings.Builder
	if err := writeReportSection(&million, keyed(counts), DefaultAssumed, ""); err != nil {
		t.Fatal(err)
	}
	if err := writeReportSection(&thousand, keyed(counts[:ReportMaxKeys]), DefaultAssumed, ""); err != nil {
		t.Fatal(err)
	}
	c := textfmt.Count
	want := fmt.Sprintf("Replayed over the 1,000 busiest keys of %s (1,000 of %s acquires); %s more keys not shown.", c(n), c(n), c(n-ReportMaxKeys))
	if !strings.Contains(million.String(), want) {
		t.Errorf("the section does not say %q:\n%.2000s", want, million.String())
	}
	if million.Len() > thousand.Len()+len(smp.Note())+64 {
		t.Errorf("the section of a million keys is %d bytes, of a thousand %d", million.Len(), thousand.Len())
	}
}

// keysDump writes n pool keys of one scope, one cold acquire each.
func keysDump(t *testing.T, n int) string {
	t.Helper()
	d := dumptest.New()
	ss := d.Resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "gw-1")
	for i := range n {
		start := time.Duration(i) * time.Millisecond
		d.Add(ss, dumptest.Span{Trace: uint64(i + 1), Name: spans.SpanAcquire, Start: start, End: start + time.Microsecond,
			Attrs: []any{spans.AttrCacheKey, fmt.Sprintf("key-%d", i), spans.AttrCacheHit, false, spans.AttrMissReason, spans.MissCold}})
	}
	return d.Write(t)
}

// TestReportSectionSizeDoesNotGrowPastTheKeyCap: the section of a dump of
// three times ReportMaxKeys keys is the section of ReportMaxKeys keys plus
// the sampling note, which says how many more keys are not shown; at the
// cap no note is written.
func TestReportSectionSizeDoesNotGrowPastTheKeyCap(t *testing.T) {
	section := func(n int) string {
		ev, _ := reportEvents(t, keysDump(t, n))
		var b strings.Builder
		if err := WriteReportSection(&b, ev, DefaultAssumed, ""); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	atCap, over := section(ReportMaxKeys), section(3*ReportMaxKeys)
	if strings.Contains(atCap, `id="whatif-sample"`) {
		t.Errorf("a section at the cap says it sampled")
	}
	if !strings.Contains(over, "2,000 more keys not shown") {
		t.Errorf("the section over the cap does not say how many keys it left out:\n%.2000s", over)
	}
	if len(over) > len(atCap)+1024 {
		t.Errorf("the section of %d keys is %d bytes, of %d keys %d: it grows past the cap", 3*ReportMaxKeys, len(over), ReportMaxKeys, len(atCap))
	}
}
