package engine_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	analyze "github.com/mcptrace/mcptrace/analyze/internal/engine"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// pooledDir holds testdata's pooled dump, which dumptest.PooledWithSettings
// writes the pool's settings onto.
const pooledDir = "../../../testdata/traces"

// TestReadAcquiresCarriesTheScopesRecordedSettings pins what every Acquire
// says of its scope's recorded settings: the set its acquire spans carry,
// on every acquire of the scope even where one span alone carries it (a
// sampled or cut dump); nil and mixed where the spans disagree; nil where
// none records any; values kept byte for byte, even one that spells the
// stage's own encoding.
func TestReadAcquiresCarriesTheScopesRecordedSettings(t *testing.T) {
	set := map[string]string{spans.AttrPoolIdleTTL: "0.1", spans.AttrPoolMaxIdlePerKey: "1", spans.AttrPoolIdleSizing: spans.IdleSizingFixed,
		spans.AttrPoolMaxIdle: "64", spans.AttrPoolSweepInterval: "60"}
	other := maps.Clone(set)
	other[spans.AttrPoolIdleTTL] = "300"
	odd := map[string]string{spans.AttrPoolIdleSizing: "2:1:x", spans.AttrPoolMaxIdle: ""}
	for _, tc := range []struct {
		name      string
		settings  func(n int) map[string]string
		want      map[string]string
		wantMixed bool
	}{
		{"every span records the same", func(int) map[string]string { return set }, set, false},
		{"one span alone records them", func(n int) map[string]string {
			if n == 3 {
				return set
			}
			return nil
		}, set, false},
		{"one span disagrees", func(n int) map[string]string {
			if n == 5 {
				return other
			}
			return set
		}, nil, true},
		{"no span records any", func(int) map[string]string { return nil }, nil, false},
		{"values that spell the encoding", func(int) map[string]string { return odd }, odd, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []analyze.Acquire
			_, err := analyze.ReadAcquires(context.Background(), ingest.Files{dumptest.PooledWithSettings(t, pooledDir, tc.settings)}, rulefmt.Config{}, analyze.LoadOptions{},
				func(a *analyze.Acquire) { got = append(got, *a) })
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 6 {
				t.Fatalf("%d acquires, want 6", len(got))
			}
			for i, a := range got {
				if !maps.Equal(a.Settings, tc.want) || (a.Settings == nil) != (tc.want == nil) || a.SettingsMixed != tc.wantMixed {
					t.Errorf("acquire %d: settings %v mixed %v; want %v mixed %v", i, a.Settings, a.SettingsMixed, tc.want, tc.wantMixed)
				}
			}
		})
	}
}

// TestReadAcquiresCarriesTheScopesService: every Acquire names the
// service.name of its acquires' resource (what a replay's recent:N ranks
// keys within), on the generated scenario of several pool scopes and on
// the real pool's seeded dump; a resource without one says so.
func TestReadAcquiresCarriesTheScopesService(t *testing.T) {
	for _, tc := range []struct {
		path, want string
	}{
		{"../../../testdata/traces/prod-cold-starts.otlp.jsonl", "mcp-gateway"},
		{"../../../testdata/traces/seeded/fixed-240ms.otlp.jsonl.gz", "mcptrace-demo-seeded"},
	} {
		n := 0
		_, err := analyze.ReadAcquires(context.Background(), ingest.Files{tc.path}, rulefmt.Config{}, analyze.LoadOptions{}, func(a *analyze.Acquire) {
			n++
			if !a.HasService || a.Service != tc.want {
				t.Errorf("%s: acquire of scope %q: service %q (%v), want %q", tc.path, a.Scope, a.Service, a.HasService, tc.want)
			}
		})
		if err != nil || n == 0 {
			t.Fatalf("%s: %d acquires (%v)", tc.path, n, err)
		}
	}
	raw, err := os.ReadFile("../../../testdata/traces/pooled.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(t.TempDir(), "bare.otlp.jsonl")
	if err := os.WriteFile(bare, []byte(strings.ReplaceAll(string(raw), `"service.name"`, `"not.service.name"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = analyze.ReadAcquires(context.Background(), ingest.Files{bare}, rulefmt.Config{}, analyze.LoadOptions{}, func(a *analyze.Acquire) {
		if a.HasService {
			t.Errorf("no service.name: acquire says %q", a.Service)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}
