package benchscripts

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// libDir is scripts/lib, from this file's place in the module.
func libDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "scripts", "lib")
}

// sourced runs script in bash with scripts/lib/benchmarks.sh sourced,
// script's positional parameters args, and returns its standard output
// and whether it exited 0.
func sourced(t *testing.T, stdin, script string, args ...string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on PATH")
	}
	cmd := exec.Command("bash", append([]string{"-c", `. "$LIB/benchmarks.sh"; ` + script, "sourced"}, args...)...)
	cmd.Env = append(cmd.Environ(), "LIB="+libDir(t))
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		if _, exit := err.(*exec.ExitError); !exit {
			t.Fatalf("bash: %v", err)
		}
	}
	return out.String(), err == nil
}

func TestGoalVerdictJudgesEveryOperatorAtItsBoundary(t *testing.T) {
	for _, c := range []struct {
		figure, op, goal, want string
	}{
		{"2", ">=", "2", "met"},
		{"1.99", ">=", "2", "NOT met"},
		{"2", ">", "2", "NOT met"},
		{"2.01", ">", "2", "met"},
		{"2", "<=", "2", "met"},
		{"2.01", "<=", "2", "NOT met"},
		{"2", "<", "2", "NOT met"},
		{"1.99", "<", "2", "met"},
		{"0", "==", "0", "met"},
		{"0.5", "==", "0", "NOT met"},
		{"10", ">=", "9", "met"}, // numbers, not text: "10" sorts before "9"
		{"1e3", ">=", "2", "met"},
		{"-0.5", "<=", "0", "met"},
		{".5", ">=", "0.125", "met"},
		{"0.124", ">=", "0.125", "NOT met"},
	} {
		got, ok := sourced(t, "", `goal_verdict "$1" "$2" "$3"`, c.figure, c.op, c.goal)
		if !ok || strings.TrimSpace(got) != c.want {
			t.Errorf("%s %s %s: %q (exit 0: %v), want %q", c.figure, c.op, c.goal, got, ok, c.want)
		}
	}
}

func TestAMissingFigureIsNeitherMetNorMissed(t *testing.T) {
	for _, figure := range []string{"", "n/a", "abc", "1.5x", "nan", "inf", "1,5", " 2", "2 "} {
		for _, op := range []string{">=", "<", "<="} {
			got, ok := sourced(t, "", `goal_verdict "$1" "$2" 2`, figure, op)
			if !ok || strings.TrimSpace(got) != "n/a (no figure)" {
				t.Errorf("%q %s 2: %q (exit 0: %v), want n/a (no figure)", figure, op, got, ok)
			}
		}
		if got, _ := sourced(t, "", `figure "$1" '%.2f'`, figure); strings.TrimSpace(got) != "n/a" {
			t.Errorf("figure %q printed as %q, want n/a", figure, got)
		}
	}
}

func TestGoalVerdictRefusesAnUnknownOperator(t *testing.T) {
	if got, ok := sourced(t, "", `goal_verdict 1 "=<" 2`); ok {
		t.Errorf("an unknown operator was judged: %q", got)
	}
}

func TestFigurePrintsANumberWithItsFormat(t *testing.T) {
	for _, c := range []struct{ x, f, want string }{
		{"1.234", "%.2f", "1.23"},
		{"0", "%.1f", "0.0"},
		{"109.14", "%s MiB", "109.14 MiB"},
		{"2.5", "%sx", "2.5x"},
	} {
		if got, ok := sourced(t, "", `figure "$1" "$2"`, c.x, c.f); !ok || strings.TrimSpace(got) != c.want {
			t.Errorf("figure %s %q: %q, want %q", c.x, c.f, got, c.want)
		}
	}
}

// TestJudgedNeverRoundsAFigureOntoItsGoal pins judged: a figure printed
// beside its verdict shows the digits it takes to get that verdict itself
// (0.1248 never prints as 0.125 beside "NOT met" against >= 0.125), and
// no more digits than its format when the format's print agrees.
func TestJudgedNeverRoundsAFigureOntoItsGoal(t *testing.T) {
	for _, c := range []struct{ x, f, op, goal, want string }{
		{"0.1248", "%.3g", ">=", "0.125", "0.1248"},
		{"0.1251", "%.3g", ">=", "0.125", "0.125"}, // on its own side: the format's print
		{"1.496", "%.2f", ">=", "1.5", "1.496"},
		{"1.5", "%.2f", ">=", "1.5", "1.50"},
		{"100.04", "%.1f", "<=", "100", "100.04"},
		{"99.96", "%.1f", "<=", "100", "100.0"},
		{"2.004", "%.2f", ">", "2", "2.004"},
		{"2", "%.2f", ">", "2", "2.00"},
		{"127.96", "%.1f", "<", "128", "127.96"},
		{"1499999.6", "%.0f", ">=", "1500000", "1499999.6"},
		{"0.49", "%.0f", "==", "0", "0.5"},
		{"-0.0004", "%.3f", "<", "0", "-0.0004"},
		{"31.6", "%.1f", ">=", "40", "31.6"},
		{"n/a", "%.2f", ">=", "1", "n/a"},
		{"", "%.2f", ">=", "1", "n/a"},
	} {
		got, ok := sourced(t, "", `judged "$1" "$2" "$3" "$4"`, c.x, c.f, c.op, c.goal)
		if !ok || strings.TrimSpace(got) != c.want {
			t.Errorf("judged %q %q %s %s: %q (exit 0: %v), want %q", c.x, c.f, c.op, c.goal, got, ok, c.want)
		}
		if c.want == "n/a" {
			continue
		}
		// What is printed gets the verdict the figure got.
		shown, _ := sourced(t, "", `goal_verdict "$1" "$2" "$3"`, strings.TrimSpace(got), c.op, c.goal)
		if real, _ := sourced(t, "", `goal_verdict "$1" "$2" "$3"`, c.x, c.op, c.goal); shown != real {
			t.Errorf("judged %q printed %q, judged %q; the figure is %q", c.x, got, shown, real)
		}
	}
}

func TestCheckProcsRefusesAFigureRunElsewhere(t *testing.T) {
	const head = "goos: linux\npkg: x\n"
	for _, c := range []struct {
		name, out string
		pass      bool
	}{
		{"one core as named", "BenchmarkD/jsonl/ours \t 3\t 100 ns/op\t 1.000 procs\t 5 spans/s\n", true},
		{"two cores as named", "BenchmarkD/jsonl/ours-2 \t 3\t 100 ns/op\t 2.000 procs\n", true},
		{"named for one, ran on two", "BenchmarkD/jsonl/ours \t 3\t 100 ns/op\t 2.000 procs\n", false},
		{"named for two, ran on one", "BenchmarkD/jsonl/ours-2 \t 3\t 100 ns/op\t 1.000 procs\n", false},
		{"no procs metric", "BenchmarkD/jsonl/ours \t 3\t 100 ns/op\n", false},
		{"one bad among good", "BenchmarkA-2 \t 1\t 1 ns/op\t 2.000 procs\nBenchmarkB \t 1\t 1 ns/op\t 2.000 procs\n", false},
	} {
		got, ok := sourced(t, head+c.out+"PASS\n", `check_procs`)
		if ok != c.pass {
			t.Errorf("%s: passed %v, want %v", c.name, ok, c.pass)
		}
		if got != head+c.out+"PASS\n" {
			t.Errorf("%s: did not pass its input through: %q", c.name, got)
		}
	}
}
