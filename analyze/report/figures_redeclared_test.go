package report_test

import (
	"testing"

	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestDeclaringFiguresAgainForgetsTheOldDeclarations pins that
// DeclareFigures replaces what the report declared before: a report whose
// writer now shows everything declares nothing, whatever a server-side
// writer made it declare earlier.
func TestDeclaringFiguresAgainForgetsTheOldDeclarations(t *testing.T) {
	r := dumptest.Scenario(t, "pooled")
	full := r.Writer
	r.Writer = writerWithout(r, "refused_attempts")
	r.DeclareFigures()
	if len(r.Figures) == 0 {
		t.Fatal("the case this pins is not set up: a server-side writer declared nothing")
	}
	r.Writer = full
	r.DeclareFigures()
	if len(r.Figures) != 0 {
		t.Errorf("after declaring again for a client-side writer, figures %v, want none", r.Figures)
	}
}
