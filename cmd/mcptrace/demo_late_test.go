package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/internal/demo"
)

// TestASeededRunThatRanLateSaysSoInTheTable pins when the demo's table
// says the run was late: past half a slot behind its planned clock, the
// distance at which load can turn a hit into a ttl miss, and not at it.
func TestASeededRunThatRanLateSaysSoInTheTable(t *testing.T) {
	seed := uint64(7)
	for _, tc := range []struct {
		late float64 // ms
		want bool
	}{
		{0, false},
		{80, false}, // exactly half of a 160ms slot
		{80.001, true},
		{349, true},
	} {
		r := demo.Result{Mode: demo.ModeSeeded, Seed: &seed, LateMS: tc.late, Settings: demo.Seeded{Slot: 160 * time.Millisecond}}
		var b bytes.Buffer
		if err := renderDemoTable(&b, []demo.Result{r}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "LATE: a step ran"); got != tc.want {
			t.Errorf("late %vms: note shown %v, want %v\n%s", tc.late, got, tc.want, b.String())
		}
	}
}

// TestTheDemosHintRunsAsTheDemoRan pins the "Next:" hint's command: under
// go run (a binary in a go-build temporary directory, the README's first
// command, before anything is installed) it is go run ./cmd/mcptrace,
// otherwise mcptrace.
func TestTheDemosHintRunsAsTheDemoRan(t *testing.T) {
	for exe, want := range map[string]string{
		"/tmp/go-build3712/b001/exe/mcptrace": "go run ./cmd/mcptrace",
		"/root/go/bin/mcptrace":               "mcptrace",
		"mcptrace":                            "mcptrace",
	} {
		if got := invokedAs(exe); got != want {
			t.Errorf("invokedAs(%q) = %q, want %q", exe, got, want)
		}
	}
}
