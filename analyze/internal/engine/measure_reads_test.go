package engine

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// readsDump builds requests as traces: request → (cache.fill →) db.query
// reads, plus a worker span when the trace is complete.
func readsDump() *dump {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "svc")
	// Trace 1: 1 direct read, 1 read under cache.fill, worker landed.
	r1 := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
	d.add(ss, sp{trace: 1, parent: r1, name: "db.query"})
	fill := d.add(ss, sp{trace: 1, parent: r1, name: "cache.fill"})
	d.add(ss, sp{trace: 1, parent: fill, name: "db.query"})
	d.add(ss, sp{trace: 1, parent: r1, name: "worker"})
	// Trace 2: 2 direct reads, worker landed; a read outside any request.
	r2 := d.add(ss, sp{trace: 2, name: "request"})
	d.add(ss, sp{trace: 2, parent: r2, name: "db.query"})
	d.add(ss, sp{trace: 2, parent: r2, name: "db.query"})
	d.add(ss, sp{trace: 2, parent: r2, name: "worker"})
	d.add(ss, sp{trace: 2, name: "db.query"})
	// Trace 3: 1 read, no worker span: not trusted.
	r3 := d.add(ss, sp{trace: 3, name: "request"})
	d.add(ss, sp{trace: 3, parent: r3, name: "db.query"})
	// Trace 4: a request whose sibling's parent never landed.
	r4 := d.add(ss, sp{trace: 4, name: "request"})
	d.add(ss, sp{trace: 4, parent: r4, name: "worker"})
	d.add(ss, sp{trace: 4, parent: 999, name: "db.query"})
	// Trace 5: nested requests: the outer one counts the inner one's read.
	outer := d.add(ss, sp{trace: 5, name: "request"})
	inner := d.add(ss, sp{trace: 5, parent: outer, name: "request"})
	d.add(ss, sp{trace: 5, parent: inner, name: "db.query"})
	d.add(ss, sp{trace: 5, parent: outer, name: "worker"})
	return d
}

func TestReadsPerRequest(t *testing.T) {
	sel := func(s string) rulefmt.Selector {
		t.Helper()
		x, err := rulefmt.ParseSelectorString(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	notUnder, worker := sel("cache.fill"), sel("worker")
	tests := []struct {
		name     string
		m        rulefmt.ReadMeasure
		want     report.MeasureReport
		examples []string
	}{{
		name: "complete_when and not_under",
		m:    rulefmt.ReadMeasure{Name: "m", Root: sel("request"), Read: sel("db.query"), NotUnder: &notUnder, CompleteWhen: &worker, Expect: ptr(1)},
		// T1 1 (the cache.fill read is left out), T2 2, T3 untrusted, T4
		// incomplete, T5 outer 1 and inner 1.
		want:     report.MeasureReport{Requests: 6, Complete: 4, Incomplete: 2, Histogram: []report.HistogramBin{{Reads: 1, Requests: 3}, {Reads: 2, Requests: 1}}, Unexpected: 1},
		examples: []string{"00000000000000000000000000000002"},
	}, {
		name:     "without not_under every read beneath counts",
		m:        rulefmt.ReadMeasure{Name: "m", Root: sel("request"), Read: sel("db.query"), CompleteWhen: &worker, Expect: ptr(2)},
		want:     report.MeasureReport{Requests: 6, Complete: 4, Incomplete: 2, Histogram: []report.HistogramBin{{Reads: 1, Requests: 2}, {Reads: 2, Requests: 2}}, Unexpected: 2},
		examples: []string{"00000000000000000000000000000005"}, // both requests of T5
	}, {
		name: "without complete_when only a missing parent makes a request untrusted",
		m:    rulefmt.ReadMeasure{Name: "m", Root: sel("request"), Read: sel("db.query")},
		want: report.MeasureReport{Requests: 6, Complete: 5, Incomplete: 1, Histogram: []report.HistogramBin{{Reads: 1, Requests: 3}, {Reads: 2, Requests: 2}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := analyzeTD(t, rulefmt.Config{Measures: []rulefmt.ReadMeasure{tt.m}}, readsDump().td)
			got := r.Measures[0]
			if got.Requests != tt.want.Requests || got.Complete != tt.want.Complete || got.Incomplete != tt.want.Incomplete ||
				got.Unexpected != tt.want.Unexpected || fmtHist(got.Histogram) != fmtHist(tt.want.Histogram) {
				t.Errorf("got requests %d complete %d incomplete %d histogram %s unexpected %d\nwant requests %d complete %d incomplete %d histogram %s unexpected %d",
					got.Requests, got.Complete, got.Incomplete, fmtHist(got.Histogram), got.Unexpected,
					tt.want.Requests, tt.want.Complete, tt.want.Incomplete, fmtHist(tt.want.Histogram), tt.want.Unexpected)
			}
			if !slices.Equal(got.Examples, tt.examples) && (len(got.Examples) > 0 || len(tt.examples) > 0) {
				t.Errorf("examples %v, want %v", got.Examples, tt.examples)
			}
		})
	}
}

func fmtHist(h []report.HistogramBin) string {
	s := ""
	for _, b := range h {
		s += strconv.Itoa(b.Reads) + ":" + strconv.Itoa(b.Requests) + " "
	}
	return s
}
