package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// dirFlags name directories a command writes into, not files: the clash
// check of files does not apply to them. "out" is a deprecated alias
// holding the value of demo's --dump (checked as it) or of dashboards'
// --dir.
var dirFlags = map[string]bool{"dir": true, "profile-dir": true, "out": true}

// notFileFlags are the flags whose text value names no file or
// directory: an address, a URL, a format, a selector, a window.
var notFileFlags = map[string]bool{
	"addr": true, "end": true, "execution-root": true, "format": true, "idle-per-key": true, "idle-ttl": true,
	"input-format": true, "jaeger": true, "max-idle": true, "max-memory": true, "metrics-addr": true, "mode": true,
	"operation": true, "otlp-endpoint": true, "otlp-protocol": true, "prewarm": true, "profile": true,
	"pyroscope-url": true, "recorded-idle-per-key": true, "recorded-prewarm": true, "scenario": true,
	"scope-attr": true, "service": true, "split-by": true, "start": true, "trace-url": true,
}

// mentionsFiles are flags of notFileFlags whose help speaks of files
// without naming one.
var mentionsFiles = map[string]bool{"jaeger": true, "split-by": true, "trace-url": true}

// looksLikeFile is usage text that says a flag names a file or directory.
var looksLikeFile = regexp.MustCompile(`(?i)\bfile\b|\bfiles\b|\bdir\b|directory|\bPEM\b|\bpath\b`)

// Every flag of every command that takes a text value is known: a file
// the clash check sees (an output or an input), a directory, or not a
// file at all. A new flag that names a file, an input above all, cannot
// be forgotten by the check that keeps an output off it: this test fails
// until it is classified.
func TestEveryFileFlagIsKnownToTheClashCheck(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			switch fl.Value.Type() {
			case "bool", "int", "intSlice", "uint64", "float64", "duration", "count":
				return
			}
			_, file := fileFlags[fl.Name]
			switch {
			case file || dirFlags[fl.Name]:
			case notFileFlags[fl.Name] && looksLikeFile.MatchString(fl.Usage) && !mentionsFiles[fl.Name]:
				t.Errorf("%s --%s is listed as no file, but its help says it names one: %q", c.CommandPath(), fl.Name, fl.Usage)
			case !notFileFlags[fl.Name]:
				t.Errorf("%s --%s (%s) is unknown to the clash check: add it to fileFlags (files.go) as an input or output, or to dirFlags or notFileFlags here", c.CommandPath(), fl.Name, fl.Value.Type())
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd())
}

// An output naming the backend's credential file or CA file is refused
// before any work, in every command that reads a backend, naming both
// flags; the file keeps every byte.
func TestAnOutputThatIsABackendCredentialOrCAFileIsRefused(t *testing.T) {
	outputs := []string{"output", "junit", "summary", "html", "cpuprofile", "memprofile", "exectrace"}
	for _, cmdName := range []string{"analyze", "check", "diff", "whatif"} {
		cmd, _, err := newRootCmd().Find([]string{cmdName})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{"backend-credential-file", "backend-ca-file"} {
			for _, out := range outputs {
				if cmd.Flags().Lookup(out) == nil {
					continue
				}
				t.Run(cmdName+" --"+out+" the --"+in, func(t *testing.T) {
					p := filepath.Join(t.TempDir(), "secret")
					want := []byte("Bearer my-precious-token\n")
					if err := os.WriteFile(p, want, 0o600); err != nil {
						t.Fatal(err)
					}
					args := []string{cmdName, "--jaeger", "http://127.0.0.1:9", "--service", "gw", "--since", "1h",
						"--backend-timeout", "1ms", "--" + in, p, "--" + out, p}
					if cmdName == "diff" {
						args = append(args, traces+"pooled.otlp.jsonl.golden.json")
					}
					code, _, stderr := runCLI(t, "", args...)
					if code != 2 || !strings.Contains(stderr, "--"+in) || !strings.Contains(stderr, "destroy the input") {
						t.Errorf("exit %d, want 2 naming --%s as the input:\n%s", code, in, stderr)
					}
					if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
						t.Errorf("the --%s file now holds %.40q", in, got)
					}
				})
			}
		}
	}
}
