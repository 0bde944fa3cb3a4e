package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestProfileFlagsWriteProfilesOfTheRun pins --cpuprofile, --memprofile
// and --exectrace on the commands that read: each writes a pprof profile
// of its kind, or an execution trace; a
// profile path that is an input is refused before any work, and one that
// cannot be created names its flag.
func TestProfileFlagsWriteProfilesOfTheRun(t *testing.T) {
	dump := traces + "pooled.otlp.jsonl"
	dir := t.TempDir()
	for _, c := range []string{"analyze", "check", "whatif"} {
		t.Run(c, func(t *testing.T) {
			cpu, mem, exec := filepath.Join(dir, c+".cpu"), filepath.Join(dir, c+".mem"), filepath.Join(dir, c+".trace")
			args := []string{c, "--cpuprofile", cpu, "--memprofile", mem, "--exectrace", exec, dump}
			if code, _, errOut := runCLI(t, "", args...); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			// An execution trace opens with its format's header; what it
			// holds is read by internal/benchtools/idletrace's tests.
			if b, err := os.ReadFile(exec); err != nil || !bytes.HasPrefix(b, []byte("go 1.")) || !bytes.Contains(b[:16], []byte(" trace")) {
				t.Errorf("--exectrace wrote %d bytes (%v), want an execution trace", len(b), err)
			}
			for path, kind := range map[string]string{cpu: "cpu", mem: "inuse_space"} {
				p := readProfile(t, path)
				var types []string
				for _, st := range p.SampleType {
					types = append(types, st.Type)
				}
				if !strings.Contains(strings.Join(types, ","), kind) {
					t.Errorf("%s: sample types %v, want %s", filepath.Base(path), types, kind)
				}
			}
		})
	}
	code, _, errOut := runCLI(t, "", "analyze", "--cpuprofile", dump, dump)
	if code != 2 || !strings.Contains(errOut, "--cpuprofile") {
		t.Errorf("a profile over the input: exit %d, %q; want exit 2 naming --cpuprofile", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "analyze", "--memprofile", filepath.Join(dir, "no", "such", "dir", "m"), dump)
	if code == 0 || !strings.Contains(errOut, "--memprofile") {
		t.Errorf("a profile that cannot be written: exit %d, %q; want a failure naming --memprofile", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "analyze", "--cpuprofile", filepath.Join(dir, "kept.cpu"), "--exectrace", filepath.Join(dir, "no", "such", "dir", "t"), dump)
	if code == 0 || !strings.Contains(errOut, "--exectrace") {
		t.Errorf("a trace that cannot be written: exit %d, %q; want a failure naming --exectrace", code, errOut)
	}
}

func readProfile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}
