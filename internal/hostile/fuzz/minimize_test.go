package fuzz

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fakeMcptrace stands in for the binary: it prints a raw ESC when the
// directory it is given holds a nul.jsonl of at least 8 bytes, the one part
// of the special-files family that "fails".
const fakeMcptrace = `#!/bin/sh
for a; do last=$a; done
f="$last/nul.jsonl"
if [ -f "$f" ] && [ "$(wc -c < "$f")" -ge 8 ]; then printf 'x\033[31m\n'; fi
exit 0
`

// Minimize keeps only the part that fails and halves the size down to the
// smallest that still fails, and a fuzz finding's signature survives it.
func TestMinimizeKeepsOnlyTheFailingPartAtItsSmallestSize(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcptrace")
	if err := os.WriteFile(bin, []byte(fakeMcptrace), 0o755); err != nil {
		t.Fatal(err)
	}
	lim := DefaultLimits()
	lim.Interrupt = 0
	c, err := Generate("special-files", 11, 1000, 1<<11-1)
	if err != nil {
		t.Fatal(err)
	}
	fs, _, err := Judge(context.Background(), bin, dir, c, lim)
	if err != nil {
		t.Fatal(err)
	}
	var sig string
	for _, f := range fs {
		if f.Kind == "escape" && f.Run == "check-table" {
			sig = f.Signature(c.Family)
		}
	}
	if sig == "" {
		t.Fatalf("the fake's ESC was not found: %v", fs)
	}
	best, bfs := Minimize(context.Background(), bin, dir, c, sig, lim, time.Now().Add(time.Minute))
	if best.Mask != 1<<1 {
		t.Errorf("mask %b (%s), want only the NUL-filled part (10)", best.Mask, best.What)
	}
	if best.Size < 8 || best.Size >= 16 {
		t.Errorf("size %d, want the smallest halving of 1000 that is still 8 or more (15)", best.Size)
	}
	if len(bfs) == 0 || bfs[0].Signature(best.Family) != sig {
		t.Errorf("minimized findings %v, want %s", bfs, sig)
	}
}
