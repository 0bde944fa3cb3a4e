package fuzz

import (
	"context"
	"strings"
	"time"
)

// Minimize shrinks c while the oracle still reports a finding of signature
// sig: it clears the mask's bits one at a time, then halves the size,
// keeping each step that still fails the same way, until nothing shrinks or
// the deadline passes. Only the run the signature names is made, so a step
// costs one run of the binary. It returns the smallest case found and the
// findings it gave.
func Minimize(ctx context.Context, bin, tmp string, c *Case, sig string, lim Limits, deadline time.Time) (*Case, []Finding) {
	f, err := FamilyByName(c.Family)
	if err != nil {
		return c, nil
	}
	runName := sig[strings.LastIndexByte(sig, '/')+1:]
	best, bestFs := c, []Finding(nil)
	fails := func(family string, seed uint64, size int, mask uint64) (*Case, []Finding, bool) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, nil, false
		}
		cand, err := Generate(family, seed, size, mask)
		if err != nil {
			return nil, nil, false
		}
		fs, _, err := Judge(ctx, bin, tmp, cand, lim, runName)
		if err != nil {
			return nil, nil, false
		}
		for _, x := range fs {
			if x.Signature(family) == sig {
				return cand, fs, true
			}
		}
		return nil, nil, false
	}
	for changed := true; changed; {
		changed = false
		for bit := 0; bit < f.Parts; bit++ {
			m := best.Mask &^ (1 << uint(bit))
			if m == best.Mask || m&(1<<uint(f.Parts)-1) == 0 {
				continue
			}
			if cand, fs, ok := fails(best.Family, best.Seed, best.Size, m); ok {
				best, bestFs, changed = cand, fs, true
			}
		}
		for best.Size > 1 {
			cand, fs, ok := fails(best.Family, best.Seed, best.Size/2, best.Mask)
			if !ok {
				break
			}
			best, bestFs, changed = cand, fs, true
		}
	}
	if bestFs == nil {
		fs, _, _ := Judge(ctx, bin, tmp, best, lim, runName)
		bestFs = fs
	}
	return best, bestFs
}
