package main

import (
	"strings"
	"testing"
)

// TestLimitsThatAreNotPositiveSizesAreUsageErrors pins --max-memory and
// --max-decompression-ratio on analyze and check: a budget that is not a
// positive whole number of bytes, or below 16MiB (the minimum, accepted at
// exactly 16MiB), or a ratio that is NaN, infinite or
// negative but -1, is refused with a usage error (exit 2) naming the flag,
// before anything is read; it never becomes the default or no bound.
func TestLimitsThatAreNotPositiveSizesAreUsageErrors(t *testing.T) {
	dump := traces + "acquire-on-miss.otlp.jsonl"
	for _, tc := range []struct {
		flag, value string
	}{
		{"--max-memory", "nan"},
		{"--max-memory", "0.5"},
		{"--max-memory", "0"},
		{"--max-memory", "-1"},
		{"--max-memory", "1e400"},
		{"--max-memory", "Inf"},
		{"--max-memory", "lots"},
		{"--max-memory", "0.5KiB!"},
		// Below the sane minimum: refused, not a run that stops at its
		// first spans with "0 MiB, past half of the 1 MiB budget".
		{"--max-memory", "1"},
		{"--max-memory", "1MiB"},
		{"--max-memory", "16777215"},
		{"--max-decompression-ratio", "nan"},
		{"--max-decompression-ratio", "+Inf"},
		{"--max-decompression-ratio", "0"},
		{"--max-decompression-ratio", "-5"},
	} {
		for _, cmd := range []string{"analyze", "check"} {
			code, _, stderr := runCLI(t, "", cmd, tc.flag+"="+tc.value, dump)
			if code != 2 || !strings.Contains(stderr, tc.flag) {
				t.Errorf("%s %s=%s: exit %d, stderr %q; want exit 2 naming %s", cmd, tc.flag, tc.value, code, stderr, tc.flag)
			}
		}
	}
	for _, ok := range []string{"--max-memory=64MiB", "--max-memory=16MiB", "--max-memory=16777216", "--max-decompression-ratio=-1", "--max-decompression-ratio=0.5"} {
		if code, _, stderr := runCLI(t, "", "analyze", ok, dump); code != 0 {
			t.Errorf("analyze %s: exit %d, %s", ok, code, stderr)
		}
	}
}
