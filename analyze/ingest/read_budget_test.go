package ingest

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// TestTheRecordCapIsASixteenthOfTheBudgetWithinItsBounds pins recordCap's
// clamp on both sides: a sixteenth of the budget, never under 1 MiB and
// never over maxLineBytes, however large the budget.
func TestTheRecordCapIsASixteenthOfTheBudgetWithinItsBounds(t *testing.T) {
	for _, tc := range []struct {
		budget, want int64
	}{
		{1 << 20, 1 << 20},
		{64 << 20, 4 << 20},
		{16 * maxLineBytes, maxLineBytes},
		{64 * maxLineBytes, maxLineBytes},
	} {
		if got := (ReadOptions{MaxMemory: tc.budget}).budget().recordCap(); got != tc.want {
			t.Errorf("budget %d: record cap %d, want %d", tc.budget, got, tc.want)
		}
	}
}

// TestADocumentRecordOverTheCapIsCutNotWaitedOn pins capReader at its
// limit: a document's record longer than the record cap (a sixteenth of
// a 16 MiB budget: 1 MiB) is cut with ErrRecordTooLarge once the decoder
// has read exactly the cap, not handed empty reads it would spin on.
func TestADocumentRecordOverTheCapIsCutNotWaitedOn(t *testing.T) {
	rs := func(n int, attr string) string {
		return `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(n) + attr + `}]}]}`
	}
	big := `,"attributes":[{"key":"k","value":{"stringValue":"` + strings.Repeat("x", 3<<20/2) + `"}}]`
	doc := "{\"resourceSpans\": [\n" + rs(1, "") + ",\n" + rs(2, big) + "]}\n"
	_, _, err := readBytes(t, []byte(doc), ReadOptions{Strict: true, MaxMemory: 16 << 20})
	if !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("err %v, want ErrRecordTooLarge", err)
	}
}

// TestALimitStopsTheReadEvenAfterSpans pins that a limit is never a
// warning (the read never goes on past it with the input merely
// partial): a zstd
// stream whose second frame wants a window over the budget's share stops
// the read with ErrMemoryLimit in non-strict mode too, after the first
// frame's spans; a gzip stream that expands past the ratio and the slack
// stops it with ErrDecompressionLimit. The limit is the error, not also a
// warning.
func TestALimitStopsTheReadEvenAfterSpans(t *testing.T) {
	big, _ := dumpOf(tracegen.WriteOTLPProto, decompressionSlack+4<<20)
	inputs, _, err := readBytes(t, tracegen.GzipBytes(big), ReadOptions{MaxDecompressionRatio: 2})
	if !errors.Is(err, ErrDecompressionLimit) || inputs[0].Spans == 0 || len(inputs[0].Warnings) != 0 {
		t.Errorf("gzip: err %v, %d spans, warnings %q; want the spans before the limit, then ErrDecompressionLimit alone", err, inputs[0].Spans, inputs[0].Warnings)
	}

	dump := tracegen.MustEncode(tracegen.WriteOTLPProto, tracegen.ProdColdStarts())
	data := append(zstdFrame(t, dump, true, 0), zstdFrame(t, dump, false, 16<<20)...)
	opts := ReadOptions{MaxMemory: 64 << 20} // a window of at most 8 MiB
	if w := opts.budget().zstdWindow(); w != 8<<20 {
		t.Fatalf("the zstd window of a 64 MiB budget is %d, the test expects 8 MiB", w)
	}
	inputs, _, err = readBytes(t, data, opts)
	if !errors.Is(err, ErrMemoryLimit) || inputs[0].Spans == 0 || len(inputs[0].Warnings) != 0 {
		t.Fatalf("zstd: err %v, %d spans, warnings %q; want the first frame's spans, then ErrMemoryLimit alone", err, inputs[0].Spans, inputs[0].Warnings)
	}
}

// TestTheDefaultBudgetIsAQuarterOfTheMachineWithinItsBounds pins
// defaultBudget at its edges (read_budget.go: `total <= 0`, each clamp):
// a quarter of the machine, at least 64 MiB, at most 1 GiB, 1 GiB when
// the machine's memory is unknown; and machineMemory reads MemTotal (or
// a lower cgroup limit) as this machine has it.
func TestTheDefaultBudgetIsAQuarterOfTheMachineWithinItsBounds(t *testing.T) {
	for _, tc := range []struct{ total, want int64 }{
		{-1, 1 << 30}, {0, 1 << 30}, {1, 64 << 20}, {256 << 20, 64 << 20}, {256<<20 + 4, 64<<20 + 1},
		{1 << 32, 1 << 30}, {1<<32 + 4, 1 << 30}, {1<<32 - 4, 1<<30 - 1}, {64 << 30, 1 << 30},
	} {
		if got := defaultBudget(tc.total); got != tc.want {
			t.Errorf("defaultBudget(%d) = %d, want %d", tc.total, got, tc.want)
		}
	}
	meminfo, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skipf("no /proc/meminfo: %v", err)
	}
	var kb int64
	for _, line := range strings.Split(string(meminfo), "\n") {
		if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
			break
		}
	}
	want := kb << 10
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		var lim int64
		if _, err := fmt.Sscanf(string(b), "%d", &lim); err == nil && lim > 0 && lim < want {
			want = lim
		}
	}
	if got := machineMemory(); kb == 0 || got != want {
		t.Errorf("machineMemory() = %d, want %d (MemTotal %d kB, or a lower cgroup limit)", got, want, kb)
	}
	if got := DefaultMaxMemory(); got != defaultBudget(want) {
		t.Errorf("DefaultMaxMemory() = %d, want %d for this machine", got, defaultBudget(want))
	}
}
