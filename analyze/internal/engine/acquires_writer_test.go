package engine

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestReadAcquiresWriterIsTheReportsWriter pins that the writer
// ReadAcquiresWriter returns with the acquires is the analysis report's
// Writer section, computed from the same evidence: the lone surrogates
// the inputs held and the keyless acquire spans take the target identity
// in both, so a replay and the report mark the same figures.
func TestReadAcquiresWriterIsTheReportsWriter(t *testing.T) {
	dir := t.TempDir()
	paths := map[string]string{"keyless acquire spans": dumptest.MissesOnKeys("", "", "").Write(t), "keyed acquire spans": dumptest.MissesOnKeys("a", "b").Write(t)}
	for _, tc := range []struct{ name, keyA, keyB string }{
		{"keys differing only in lone surrogates", `k\ud800`, `k\udbff`},
		{"valid keys", "ka", "kb"},
	} {
		for name, doc := range loneDocs(t, twoColdKeys()) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+"."+name)
			repl := strings.NewReplacer("KEYA", tc.keyA, "KEYB", tc.keyB, "SCOPE", "pool-1", "TOOL", "t")
			if err := os.WriteFile(path, []byte(repl.Replace(string(doc))), 0o644); err != nil {
				t.Fatal(err)
			}
			paths[tc.name+"/"+name] = path
		}
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			r, _, err := AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{}, LoadOptions{}, EngineOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, w, err := ReadAcquiresWriter(context.Background(), ingest.Files{path}, rulefmt.Config{}, LoadOptions{}, func(*Acquire) {})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(w, r.Writer) {
				t.Errorf("writer %+v, the report's %+v", w, r.Writer)
			}
			if identity := w.IdentityLost == "" && !strings.Contains(name, "keyless"); identity != strings.Contains(strings.Join(w.Shows, ","), "target_identity") {
				t.Errorf("shows %v, identity lost %q", w.Shows, w.IdentityLost)
			}
		})
	}
}
