// Package realpart is how a test that needs a real program from outside Go
// (a browser, a Prometheus server, a Jaeger server, npm and the MCP peers)
// says it is missing. Everywhere but CI the test skips, with how to install
// the part; under CI=true it fails, since .ci/run installs every part and a
// green run must have tested them all.
//
// go test prints nothing of a package that passes, so a skip alone is
// silent. When scripts/test.sh runs the suite it sets [MarksEnv] to a new
// directory; each missing part leaves a mark there, and the script ends
// the run with one line naming the parts missing and how to install each.
// Only a test that misses a part reads the variable, and its value is new
// each run, so go test never takes such a test's result from its cache
// (its mark would be lost) while every other result stays cached.
package realpart

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// MarksEnv names the environment variable that holds the marks' directory.
// Unset, no mark is written.
const MarksEnv = "MCPTRACE_MISSING_PARTS"

// Part is one real program the tests use.
type Part struct {
	// Name is the part's short name, as the summary line shows it
	// ("chromium"); it names its mark, so it is a plain word.
	Name string
	// Install is the command that installs it, as a newcomer would type it.
	Install string
}

// Well-known parts, one place for their names and install commands.
var (
	Chromium   = Part{Name: "chromium", Install: "apt-get install -y chromium"}
	Prometheus = Part{Name: "prometheus", Install: "apt-get install -y prometheus"}
	NPM        = Part{Name: "npm", Install: "apt-get install -y npm"}
	// Jaeger is a Jaeger v2 server built from source (no Debian package
	// ships it): the script builds the version pinned in
	// internal/jaegertest/tool/go.mod, through the Go module proxy, into
	// the cache directory where internal/jaegertest looks for it.
	Jaeger = Part{Name: "jaeger", Install: "scripts/jaeger-build.sh"}
)

var plainName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// Missing skips t because p is absent (why says what was looked for), or
// fails it under CI=true. It leaves p's mark for the suite's summary line.
func Missing(t testing.TB, p Part, why string) {
	t.Helper()
	msg := why + ": install it with `" + p.Install + "`"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI must install it (.ci/run)")
		return
	}
	if err := mark(p); err != nil {
		t.Logf("realpart: %v", err)
	}
	t.Skip(msg)
}

// mark writes p's mark, one line "name (install: command)", through a
// temporary file renamed into place, so concurrent test binaries never
// leave a half-written mark.
func mark(p Part) error {
	dir, ok := marksDir()
	if !ok {
		return nil
	}
	if !plainName.MatchString(p.Name) {
		return errors.New("part name " + p.Name + " is not a plain word")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".mark-*")
	if err != nil {
		return err
	}
	line := p.Name + " (install: " + strings.ReplaceAll(p.Install, "\n", " ") + ")\n"
	_, werr := f.WriteString(line)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, p.Name))
}

func marksDir() (string, bool) {
	dir := os.Getenv(MarksEnv)
	return dir, dir != "" && filepath.IsAbs(dir)
}
