package report

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRunsGroupInputsByTheirWindowsGaps(t *testing.T) {
	t0 := time.Date(2026, 4, 30, 9, 0, 0, 0, time.UTC)
	in := func(from, to time.Duration) InputReport {
		s, e := t0.Add(from), t0.Add(to)
		return InputReport{Window: Window{Start: &s, End: &e}}
	}
	empty := InputReport{}
	cases := []struct {
		name   string
		inputs []InputReport
		want   [][]int
	}{
		{"none", nil, nil},
		{"an input without a span is in no run", []InputReport{empty, in(0, time.Minute)}, [][]int{{1}}},
		{"overlapping windows are one run", []InputReport{in(0, 2*time.Minute), in(time.Minute, 3*time.Minute)}, [][]int{{0, 1}}},
		{"a gap just under RunGap is one run", []InputReport{in(0, time.Minute), in(2*time.Minute-time.Nanosecond, 3*time.Minute)}, [][]int{{0, 1}}},
		{"a gap of exactly RunGap is two runs", []InputReport{in(0, time.Minute), in(2*time.Minute, 3*time.Minute)}, [][]int{{0}, {1}}},
		{"ordered by start, not by input", []InputReport{in(time.Hour, time.Hour+time.Second), in(0, time.Second)}, [][]int{{1}, {0}}},
		{"a long input bridges the ones inside it", []InputReport{in(0, time.Hour), in(10*time.Minute, 11*time.Minute), in(50*time.Minute, 61*time.Minute)}, [][]int{{0, 1, 2}}},
		{"the gap is from the latest end so far", []InputReport{in(0, time.Hour), in(time.Minute, 2*time.Minute), in(time.Hour+30*time.Second, 2*time.Hour)}, [][]int{{0, 1, 2}}},
		{"equal starts keep input order", []InputReport{in(0, time.Second), in(0, time.Second)}, [][]int{{0, 1}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Runs(tc.inputs)
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]int]) {
				t.Errorf("Runs = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRunsNoteOnlyForSeveralRuns(t *testing.T) {
	t0 := time.Date(2026, 4, 30, 9, 0, 0, 0, time.UTC)
	w := func(at time.Duration) Window {
		s, e := t0.Add(at), t0.Add(at+time.Second)
		return Window{Start: &s, End: &e}
	}
	one := &Report{Inputs: []InputReport{{Window: w(0)}, {Window: w(time.Second)}}}
	if note := one.RunsNote(); note != "" {
		t.Errorf("one run: note %q, want none", note)
	}
	two := &Report{Inputs: []InputReport{{Window: w(0)}, {Window: w(time.Hour)}, {}}}
	note := two.RunsNote()
	for _, want := range []string{"the 3 inputs hold 2 runs", "--split-by run"} {
		if !strings.Contains(note, want) {
			t.Errorf("two runs: note %q lacks %q", note, want)
		}
	}
}

func TestWindowOfNoSpanIsNull(t *testing.T) {
	if w := WindowOf(0, 0); w.Start != nil || w.End != nil {
		t.Errorf("WindowOf(0, 0) = %v, want both null", w)
	}
	w := WindowOf(1, 2)
	if w.Start == nil || w.End == nil || w.Start.UnixNano() != 1 || w.End.UnixNano() != 2 || w.Start.Location() != time.UTC {
		t.Errorf("WindowOf(1, 2) = %v, want 1ns .. 2ns UTC", w)
	}
}
