package gate

import (
	"testing"
)

// TestAnIncompleteRuleNamesWhatItWaitedFor pins the finding of a rule
// whose scopes could not be judged: scopes whose trace lacks a parent
// span wait for that parent, the others for a span matching the rule's
// complete_when, named by its selector; a mix counts each. The
// cold-init-incomplete scenario holds four traces: two complete, one
// whose worker.fetch has not landed, one whose root never landed.
func TestAnIncompleteRuleNamesWhatItWaitedFor(t *testing.T) {
	_, res := checkOf(t, "cold-init-incomplete", `
rules:
  - id: subtrees-wait-for-the-worker
    scope: {subtree: {name: mcp.request}}
    complete_when: {name: worker.fetch}
    select: db.query
    expect: {of: count, op: ">=", than: 0}
  - id: traces-wait-for-both
    scope: trace
    complete_when: {name: worker.fetch}
    select: db.query
    expect: {of: count, op: ">=", than: 0}
  - id: traces-wait-for-a-parent
    scope: trace
    select: db.query
    expect: {of: count, op: ">=", than: 0}
`)
	for _, tc := range []struct{ id, found string }{
		{"subtrees-wait-for-the-worker", "holds in all 2 subtrees judged; 1 incomplete, not judged: waiting for a span matching complete_when [name=worker.fetch]"},
		{"traces-wait-for-both", "holds in all 2 traces judged; 2 incomplete, not judged: 1 waiting for a parent span the dump lacks, 1 for a span matching complete_when [name=worker.fetch]"},
		{"traces-wait-for-a-parent", "holds in all 3 traces judged; 1 incomplete, not judged: waiting for a parent span the dump lacks"},
	} {
		if got := res[tc.id].Found; got != tc.found {
			t.Errorf("%s: found %q,\nwant %q", tc.id, got, tc.found)
		}
	}
}

// TestAnIncompleteCheckSaysWhatItsRulesWaitedFor pins the reasons an
// incomplete check's summary line gives: each incomplete error rule's
// finding, with what its scopes waited for or why it had nothing to
// judge; the dump's lack of pool spans only for a rule that reads the
// pool.
func TestAnIncompleteCheckSaysWhatItsRulesWaitedFor(t *testing.T) {
	c, _ := checkOf(t, "cold-init-incomplete", `
rules:
  - id: waits
    scope: trace
    complete_when: {name: no.such.span}
    select: db.query
    expect: {of: count, op: ">=", than: 0}
`)
	want := "waits: 4 incomplete, not judged: 1 waiting for a parent span the dump lacks, 3 for a span matching complete_when [name=no.such.span]"
	if why := c.IncompleteWhy(); len(why) != 1 || why[0] != want {
		t.Errorf("IncompleteWhy = %q,\nwant [%q]", why, want)
	}
	c, _ = checkOf(t, "cold-init-incomplete", `
rules:
  - id: nothing-to-judge
    scope: {subtree: {name: no.such.root}}
    select: db.query
    expect: {of: count, op: ">=", than: 0}
`)
	want = "nothing-to-judge: nothing to judge: no subtrees: no span matches the scope's root [name=no.such.root]"
	if why := c.IncompleteWhy(); len(why) != 1 || why[0] != want {
		t.Errorf("IncompleteWhy = %q,\nwant [%q]: a rule that reads no pool figure is not blamed on the pool", why, want)
	}
}
