package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientpkg "github.com/mcptrace/mcptrace/internal/conformance/client"
	"github.com/mcptrace/mcptrace/internal/peers"
	"github.com/mcptrace/mcptrace/internal/realpart"
	"github.com/mcptrace/mcptrace/internal/testbound"
)

// modern is the revision every scenario that applies to it also runs at.
const modern = "2026-07-28"

// workers is how many runner processes run at once. Each is mostly waiting
// (on its client, on an authorization redirect, on a 500 ms SSE retry), so
// twice the 2 cores of CI keeps them busy without starving the machine.
const workers = 4

// listed is one client scenario as `conformance list` prints it.
type listed struct {
	name     string
	versions []string // the revisions it applies to, or ["extension"]
}

// run is one runner invocation: a scenario at a revision.
type run struct {
	row      row
	revision string // the revision it runs at
	flag     string // --spec-version, "" for the runner's own pick
}

func (r run) label() string { return r.row.name + "@" + r.revision }

// result is what one run left.
type result struct {
	exitCode int
	err      error // the runner could not be run at all
	output   []byte
	checks   []check
	readErr  error // checks.json missing or unreadable
}

// check is one entry of the runner's checks.json.
type check struct {
	ID           string `json:"id"`
	Description  string `json:"description"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestConformanceClientScenarios runs every client scenario of the pinned
// runner against the pool as client (./client), as the table says: a
// pass must exit 0 with every check SUCCESS or INFO (or allowed, with the
// reason), a known failure must still fail, and the table must name exactly
// the scenarios `conformance list` prints.
func TestConformanceClientScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the conformance runner drives every client scenario (about 90 s)")
	}
	env := peers.RequireEnv(t)
	runner := requireRunner(t, env)
	scenarios := listClientScenarios(t, env, runner)
	checkTableMatches(t, scenarios)
	if t.Failed() {
		return
	}
	client := clientCommand(t)
	if os.Getenv(clientpkg.NegotiateEnv) != "" { // read here too, so it keys the test cache
		t.Logf("%s is set: the client negotiates the revision instead of pinning the runner's", clientpkg.NegotiateEnv)
	}
	runs := only(t, plan(t, scenarios))
	start := time.Now()
	results := runAll(t, env, runner, client, runs)
	t.Logf("%d runs of %d scenarios, %d at a time, in %s", len(runs), len(scenarios), workers, time.Since(start).Round(time.Second))
	for i, r := range runs {
		t.Run(r.label(), func(t *testing.T) { judge(t, r, results[i]) })
	}
}

// requireRunner returns the runner's entry point, skipping (failing under
// CI=true) when it is not installed.
func requireRunner(t *testing.T, env peers.Env) string {
	t.Helper()
	runner := filepath.Join(env.Modules, "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(runner); err != nil {
		realpart.Missing(t, peers.MissingPart(), fmt.Sprintf("%v: no conformance runner at %s", peers.ErrNotInstalled, runner))
	}
	return runner
}

// scenarioLine is one line of `conformance list`: "  - name [v1,v2]".
var scenarioLine = regexp.MustCompile(`^  - (\S+) \[([^\]]*)\]$`)

// listClientScenarios runs `conformance list` and parses its client
// section.
func listClientScenarios(t *testing.T, env peers.Env, runner string) []listed {
	t.Helper()
	ctx, cancel := testbound.Context(t)
	defer cancel()
	out, err := node(ctx, env, runner, "list").Output()
	if err != nil {
		t.Fatalf("conformance list: %v", err)
	}
	scenarios, err := parseClientList(out)
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	return scenarios
}

// parseClientList reads the "Client scenarios" section of `conformance
// list`; a section that is missing or empty is an error, never an empty
// list that every table would match.
func parseClientList(out []byte) ([]listed, error) {
	var scenarios []listed
	in := false
	for i, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "Client scenarios"):
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in:
			m := scenarioLine.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d %q: expected \"  - name [revisions]\"", i+1, line)
			}
			scenarios = append(scenarios, listed{name: m[1], versions: strings.Split(m[2], ",")})
		}
	}
	if len(scenarios) == 0 {
		return nil, errors.New(`no "Client scenarios" section with scenarios`)
	}
	return scenarios, nil
}

// checkTableMatches fails for every scenario the runner lists that the
// table lacks, every row the runner does not list, and every notShipped
// scenario the runner now ships.
func checkTableMatches(t *testing.T, scenarios []listed) {
	t.Helper()
	inList := map[string]bool{}
	for _, s := range scenarios {
		inList[s.name] = true
	}
	inTable := map[string]bool{}
	for _, r := range table {
		if inTable[r.name] {
			t.Errorf("table names %q twice", r.name)
		}
		inTable[r.name] = true
		if !inList[r.name] {
			t.Errorf("table row %q: the runner lists no such client scenario (removed or renamed upstream?)", r.name)
		}
		if r.knownFailure != "" && r.skip != "" {
			t.Errorf("table row %q is both a known failure and skipped", r.name)
		}
	}
	for _, s := range scenarios {
		if !inTable[s.name] {
			t.Errorf("the runner lists client scenario %q %v, which the table lacks: add a row", s.name, s.versions)
		}
	}
	for name, why := range notShipped {
		if inList[name] {
			t.Errorf("the runner now ships %q (%s): give it a row", name, why)
		}
	}
}

// plan lists the runs: each row not skipped at the runner's own revision
// and, when the scenario also applies to 2026-07-28 but was introduced
// earlier, at 2026-07-28 too. Skips are logged with their reason.
func plan(t *testing.T, scenarios []listed) []run {
	t.Helper()
	versions := map[string][]string{}
	for _, s := range scenarios {
		versions[s.name] = s.versions
	}
	var runs []run
	for _, r := range table {
		if r.skip != "" {
			t.Logf("skip %s: %s", r.name, r.skip)
			continue
		}
		v := versions[r.name]
		first := "2025-11-25" // the runner's pick for all but scenarios introduced at 2026-07-28
		if v[0] == modern {
			first = modern
		}
		runs = append(runs, run{row: r, revision: first})
		if first != modern && slices.Contains(v, modern) {
			runs = append(runs, run{row: r, revision: modern, flag: modern})
		}
	}
	return runs
}

// onlyEnv, if set, is a regular expression: only the runs whose label
// (scenario@revision) it matches run, for a quick look at a few. The table
// is checked against the list whatever it says.
const onlyEnv = "MCPTRACE_CONFORMANCE_ONLY"

// only keeps the runs onlyEnv matches.
func only(t *testing.T, runs []run) []run {
	t.Helper()
	expr := os.Getenv(onlyEnv)
	if expr == "" {
		return runs
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatalf("%s=%q: %v", onlyEnv, expr, err)
	}
	runs = slices.DeleteFunc(runs, func(r run) bool { return !re.MatchString(r.label()) })
	if len(runs) == 0 {
		t.Fatalf("%s=%q matches no run", onlyEnv, expr)
	}
	t.Logf("%s=%q: %d runs", onlyEnv, expr, len(runs))
	return runs
}

// clientCommand is this test binary, which plays the client when the
// runner starts it with clientEnv set (see TestMain).
func clientCommand(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary's path: %v", err)
	}
	if strings.ContainsAny(exe, " \t'\"") {
		t.Fatalf("the test binary's path %q has a space or a quote: the runner splits its --command on spaces", exe)
	}
	return exe
}

// runAll runs every run, workers at a time, and returns the results in
// the order of runs.
func runAll(t *testing.T, env peers.Env, runner, client string, runs []run) []result {
	t.Helper()
	ctx, cancel := testbound.Context(t)
	defer cancel()
	results := make([]result, len(runs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				results[i] = runOne(ctx, env, runner, client, t.TempDir(), runs[i])
			}
		})
	}
	for i := range runs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// runOne runs the runner once for r, its results under dir.
// ctx, the test binary's deadline (testbound), ends a runner that hangs.
func runOne(ctx context.Context, env peers.Env, runner, client, dir string, r run) result {
	args := []string{runner, "client", "--command", client, "--scenario", r.row.name, "-o", dir, "--timeout", "30000"}
	if r.flag != "" {
		args = append(args, "--spec-version", r.flag)
	}
	if r.row.knownFailure != "" {
		baseline := filepath.Join(dir, "expected-failures.yml")
		if err := os.WriteFile(baseline, []byte("client:\n  - "+r.row.name+"\n"), 0o600); err != nil {
			return result{err: err}
		}
		args = append(args, "--expected-failures", baseline)
	}
	var out bytes.Buffer
	cmd := node(ctx, env, args...)
	cmd.Env = append(os.Environ(), clientEnv+"=1")
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	res := result{output: out.Bytes()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.exitCode = exit.ExitCode()
	case err != nil:
		res.err = err
	}
	res.checks, res.readErr = readChecks(dir)
	return res
}

// node is the peers' Node running args in the peers workspace, killed with
// its context.
func node(ctx context.Context, env peers.Env, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, env.Node, args...)
	cmd.Dir = env.Dir
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// readChecks reads the one checks.json the runner wrote under dir.
func readChecks(dir string) ([]check, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "checks.json" {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("found %d checks.json under %s, expected 1", len(files), dir)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	var checks []check
	if err := json.Unmarshal(data, &checks); err != nil {
		return nil, fmt.Errorf("%s: %w", files[0], err)
	}
	return checks, nil
}

// judge holds one run to its row.
func judge(t *testing.T, r run, res result) {
	if res.err != nil {
		t.Fatalf("runner did not run: %v\n%s", res.err, tail(res.output))
	}
	if res.readErr != nil {
		t.Fatalf("checks: %v (exit %d)\n%s", res.readErr, res.exitCode, tail(res.output))
	}
	if r.row.knownFailure != "" {
		judgeKnownFailure(t, r, res)
		return
	}
	if res.exitCode != 0 {
		t.Errorf("runner exited %d, want 0\n%s", res.exitCode, tail(res.output))
	}
	verdicts := 0
	used := make([]bool, len(r.row.allow))
	for _, c := range res.checks {
		switch c.Status {
		case "SUCCESS":
			verdicts++
			continue
		case "INFO":
			continue
		}
		if i := allowed(r, c); i >= 0 {
			used[i] = true
			continue
		}
		t.Errorf("check %s ended %s: %s %s", c.ID, c.Status, c.Description, c.ErrorMessage)
	}
	if verdicts == 0 {
		t.Errorf("no check ended SUCCESS (of %d): a run that judged nothing is not a pass", len(res.checks))
	}
	for i, a := range r.row.allow {
		if a.revision == r.revision && !used[i] {
			t.Errorf("allowance for %s %s %q was not needed: remove it", a.id, a.status, a.about)
		}
	}
}

// allowed returns the index of the row's allowance that covers c, or -1.
func allowed(r run, c check) int {
	for i, a := range r.row.allow {
		if a.revision == r.revision && a.id == c.ID && a.status == c.Status && strings.Contains(c.Description, a.about) {
			return i
		}
	}
	return -1
}

// judgeKnownFailure wants the runner to have failed the scenario as its
// baseline expects (exit 0 under --expected-failures; 1 if it passed, a
// stale baseline) with at least one check FAILURE.
func judgeKnownFailure(t *testing.T, r run, res result) {
	failed := slices.ContainsFunc(res.checks, func(c check) bool { return c.Status == "FAILURE" })
	if res.exitCode != 0 || !failed {
		t.Errorf("known failure (%s) no longer fails (exit %d, a FAILURE check: %v): make it a pass row\n%s",
			r.row.knownFailure, res.exitCode, failed, tail(res.output))
	}
}

// tail is the end of a run's output, enough to see why it failed.
func tail(out []byte) string {
	const n = 6000
	if len(out) > n {
		out = append([]byte("…"), out[len(out)-n:]...)
	}
	return string(out)
}
