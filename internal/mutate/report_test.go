package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestSampleGivesEachOperatorItsTurn pins the stratified draw: a rare
// operator's mutants are tried even when another operator has forty times
// as many, and the budget is still exact.
func TestSampleGivesEachOperatorItsTurn(t *testing.T) {
	var ms []mutant
	for i := range 93 {
		op := "common"
		switch {
		case i == 40:
			op = "rare"
		case i == 41 || i == 80:
			op = "twice"
		}
		ms = append(ms, mutant{File: "a.go", Line: i, Op: op, start: i})
	}
	got := map[string]int{}
	for _, m := range sample(ms, 10, 1, "pkg") {
		got[m.Op]++
	}
	if got["rare"] != 1 || got["twice"] != 2 || got["common"] != 7 {
		t.Errorf("sample of 10 took %v, want rare 1, twice 2, common 7", got)
	}
}

// TestScoreIsReportedPerOperator pins the report: per package and per
// operator killed, survived and total (a timeout counts killed, an
// unviable mutant in neither), in the JSON and the table, and each
// survivor as file:line operator.
func TestScoreIsReportedPerOperator(t *testing.T) {
	ps := pkgScore{Dir: "analyze/x", Survivors: []mutant{}}
	for _, v := range []struct {
		m       mutant
		verdict string
	}{
		{mutant{File: "a.go", Line: 3, Op: opDropCall, Desc: "f(x) → x"}, "survived"},
		{mutant{File: "a.go", Line: 5, Op: opDropCall}, "killed"},
		{mutant{File: "a.go", Line: 6, Op: opNegate}, "timeout"},
		{mutant{File: "b.go", Line: 9, Op: opNegate}, "unviable"},
	} {
		ps.tally(v.m, v.verdict)
	}
	want := []opScore{{Op: opDropCall, Killed: 1, Survived: 1, Total: 2, Score: 0.5}, {Op: opNegate, Killed: 1, Total: 1, Score: 1}}
	if !slices.Equal(ps.Operators, want) || ps.Killed != 2 || ps.Survived != 1 || ps.Unviable != 1 {
		t.Errorf("tally %+v", ps)
	}
	b, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"operators":[{"op":"drop-call","killed":1,"survived":1,"total":2,"score":0.5}`)) {
		t.Errorf("JSON without the per-operator score: %s", b)
	}
	var out strings.Builder
	printTable(&out, result{Packages: []pkgScore{ps}})
	var rows []string
	for _, l := range strings.Split(out.String(), "\n") {
		rows = append(rows, strings.Join(strings.Fields(l), " "))
	}
	for _, row := range []string{
		"package operator killed survived total score",
		"analyze/x drop-call 1 1 2 50%",
		"analyze/x negate 1 0 1 100%",
		"survivor analyze/x/a.go:3 drop-call (f(x) → x)",
	} {
		if !slices.Contains(rows, row) {
			t.Errorf("table without %q:\n%s", row, out.String())
		}
	}
}
