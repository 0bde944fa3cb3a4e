package engine

import (
	"strings"

	"slices"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

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
	sel := func(s string) rulefmt.Selector { return parseSel(t, s) }
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

// TestAMeasureNamesItsSelectorsThatMatchNoSpan pins the measure's
// unmatched selectors: a selector is named when no span of the dump
// matches it, wherever that span sits (a read outside every request
// counts as matched), in the order root, read, complete_when; the engine
// gives the same names over several shards, where a selector matched in
// one shard only is matched.
func TestAMeasureNamesItsSelectorsThatMatchNoSpan(t *testing.T) {
	sel := func(s string) rulefmt.Selector { return parseSel(t, s) }
	worker, nothing, lone := sel("worker"), sel("nothing"), sel("lone.worker")
	dumpOf := func() ptrace.Traces {
		d := readsDump()
		d.add(d.resource(spans.ResourceServiceName, "worker"), sp{trace: 6, name: "lone.worker"})
		return d.td
	}
	tests := []struct {
		name string
		m    rulefmt.ReadMeasure
		want string
	}{
		{"every selector matches", rulefmt.ReadMeasure{Root: sel("request"), Read: sel("db.query"), CompleteWhen: &worker}, ""},
		{"no root: the reads outside a request still match", rulefmt.ReadMeasure{Root: sel("nothing"), Read: sel("db.query"), CompleteWhen: &worker}, "root name=nothing"},
		{"no read", rulefmt.ReadMeasure{Root: sel("request"), Read: sel("nothing")}, "read name=nothing"},
		{"no complete_when", rulefmt.ReadMeasure{Root: sel("request"), Read: sel("db.query"), CompleteWhen: &nothing}, "complete_when name=nothing"},
		{"complete_when matched only in a trace with no request", rulefmt.ReadMeasure{Root: sel("request"), Read: sel("db.query"), CompleteWhen: &lone}, ""},
		{"all three, in order", rulefmt.ReadMeasure{Root: sel("none.root"), Read: sel("none.read"), CompleteWhen: &nothing},
			"root name=none.root; read name=none.read; complete_when name=nothing"},
	}
	names := func(us []report.UnmatchedSelector) string {
		var out []string
		for _, u := range us {
			out = append(out, u.Role+" "+u.Selector)
		}
		return strings.Join(out, "; ")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.m.Name = "m"
			cfg := rulefmt.Config{Measures: []rulefmt.ReadMeasure{tt.m}}
			if got := names(analyzeTD(t, cfg, dumpOf()).Measures[0].Unmatched); got != tt.want {
				t.Errorf("batch: unmatched %q, want %q", got, tt.want)
			}
			for _, shards := range []int{1, 3} {
				r := engineReport(t, cfg, EngineOptions{Shards: shards}, []ptrace.Traces{dumpOf()})
				if got := names(r.Measures[0].Unmatched); got != tt.want {
					t.Errorf("engine over %d shards: unmatched %q, want %q", shards, got, tt.want)
				}
			}
		})
	}
}
