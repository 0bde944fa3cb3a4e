package benchscripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCPUListExpandsRangesAndSingleCPUs(t *testing.T) {
	for _, c := range []struct{ list, want string }{
		{"0-2,5,7-8", "0 1 2 5 7 8"},
		{"3", "3"},
		{"0-1", "0 1"},
		{"4-4", "4"},
		{"", ""},
	} {
		got, ok := sourced(t, "", `cpu_list "$1"`, c.list)
		if !ok || strings.Join(strings.Fields(got), " ") != c.want {
			t.Errorf("cpu_list %q: %q (exit 0: %v), want %q", c.list, got, ok, c.want)
		}
	}
}

func TestCoreCostsTextTakesEachCPUsMedianAndTheRatios(t *testing.T) {
	for _, c := range []struct {
		name, runs, timings, want string
	}{
		{
			name: "three rounds, an odd count: the middle run",
			runs: "3",
			timings: "0 1.5 0.2\n1 1.2 0.1\nall 2.0 0.3\n" +
				"0 1.7 0.2\n1 1.0 0.1\nall 2.2 0.3\n" +
				"0 1.6 0.2\n1 1.1 0.1\nall 2.1 0.3\n",
			want: "Each CPU alone (`GOMAXPROCS=1 taskset -c N`, 3 rounds, median CPU-s): CPU 0 1.80 s, CPU 1 1.20 s, the slowest 1.50x the fastest; on every CPU at once (GOMAXPROCS unset): 2.40 s, 2.00x the fastest CPU alone.",
		},
		{
			name:    "two rounds, an even count: the mean of the middle two",
			runs:    "2",
			timings: "1 1.0 0\n0 2.0 0\nall 3.0 0\n1 2.0 0\n0 2.0 0\nall 3.5 0\n",
			want:    "Each CPU alone (`GOMAXPROCS=1 taskset -c N`, 2 rounds, median CPU-s): CPU 1 1.50 s, CPU 0 2.00 s, the slowest 1.33x the fastest; on every CPU at once (GOMAXPROCS unset): 3.25 s, 2.17x the fastest CPU alone.",
		},
		{
			name:    "alike CPUs and a run on both that costs nothing more",
			runs:    "1",
			timings: "0 1.00 0.20\n1 1.10 0.10\nall 1.00 0.20\n",
			want:    "Each CPU alone (`GOMAXPROCS=1 taskset -c N`, 1 round, median CPU-s): CPU 0 1.20 s, CPU 1 1.20 s, the slowest 1.00x the fastest; on every CPU at once (GOMAXPROCS unset): 1.20 s, 1.00x the fastest CPU alone.",
		},
		{
			name:    "no measurable CPU: the ratios n/a",
			runs:    "1",
			timings: "0 0.00 0.00\n1 0.01 0.00\nall 0.02 0.00\n",
			want:    "Each CPU alone (`GOMAXPROCS=1 taskset -c N`, 1 round, median CPU-s): CPU 0 0.00 s, CPU 1 0.01 s; on every CPU at once (GOMAXPROCS unset): 0.02 s; the ratios n/a (the fastest CPU took no measurable CPU time).",
		},
	} {
		got, ok := sourced(t, c.timings, `core_costs_text "$1"`, c.runs)
		if !ok || strings.TrimSpace(got) != c.want {
			t.Errorf("%s:\n got %q (exit 0: %v)\nwant %q", c.name, got, ok, c.want)
		}
	}
}

// TestCoreCostsSaysWhyItCannotMeasure runs core_costs itself, with true
// and false as the command: on one CPU, without taskset, and with a run
// that fails, its paragraph says so instead of a figure.
func TestCoreCostsSaysWhyItCannotMeasure(t *testing.T) {
	for _, tool := range []string{"taskset", "/usr/bin/time"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	got, _ := sourced(t, "", `taskset -c "$(allowed_cpus | head -n1)" bash -c '. "$LIB/benchmarks.sh"; core_costs 1 true'`)
	if want := "Each CPU alone: not measured (one CPU)."; strings.TrimSpace(got) != want {
		t.Errorf("pinned to one CPU: %q, want %q", got, want)
	}
	got, _ = sourced(t, "", `core_costs 1 false`)
	if want := "Each CPU alone: not measured (a run failed: false)."; strings.TrimSpace(got) != want {
		t.Errorf("a failing run: %q, want %q", got, want)
	}
	got, _ = sourced(t, "", `core_costs 2 true`)
	if !strings.HasPrefix(got, "Each CPU alone (`GOMAXPROCS=1 taskset -c N`, 2 rounds, median CPU-s): CPU ") || !strings.Contains(got, "on every CPU at once") {
		t.Errorf("a run that works: %q", got)
	}
	// No taskset: a PATH of the other tools core_costs runs.
	bin := t.TempDir()
	for _, tool := range []string{"awk", "wc", "mktemp", "seq", "rm", "cat", "true"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("needs %s", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = sourced(t, "", `PATH="$1"; core_costs 1 true`, bin)
	if want := "Each CPU alone: not measured (taskset, of util-linux, is missing)."; strings.TrimSpace(got) != want {
		t.Errorf("no taskset: %q, want %q", got, want)
	}
}
