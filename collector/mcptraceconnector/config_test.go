package mcptraceconnector

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/collector/mcptraceconnector/internal/metadata"
)

func TestDefaultConfigIsValidAndWellFormed(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	if err := componenttest.CheckConfigStruct(cfg); err != nil {
		t.Fatalf("CheckConfigStruct: %v", err)
	}
	c := cfg.(*Config)
	if err := c.Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	want := Config{Wait: 30 * time.Second, MaxOpenTraces: 100000, Profile: "auto", Attribution: "local", PairWait: 45 * time.Second}
	if c.Wait != want.Wait || c.MaxOpenTraces != want.MaxOpenTraces || c.Profile != want.Profile || c.Rules != "" ||
		c.Attribution != want.Attribution || c.PairWait != want.PairWait {
		t.Fatalf("defaults = %+v, want %+v", *c, want)
	}
}

// TestConfigFromYAML loads each named instance of testdata/config.yaml the
// way the Collector does and checks the config or the error, which must
// name the offending field.
func TestConfigFromYAML(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id        string
		want      *Config // checked when wantErr is empty
		wantErr   string  // substring of the unmarshal or Validate error
		unmarshal bool    // the error comes from unmarshalling, not Validate
		sentinel  error
	}{
		{id: "mcptrace", want: &Config{Wait: DefaultWait, MaxOpenTraces: DefaultMaxOpenTraces, Profile: "auto", Attribution: AttributionLocal, PairWait: DefaultPairWait}},
		{id: "mcptrace/custom", want: &Config{Wait: 5 * time.Second, MaxOpenTraces: 10, Profile: "acquire-on-miss", Rules: "testdata/rules.yaml", Attribution: AttributionLocal, PairWait: DefaultPairWait}},
		{id: "mcptrace/hold", want: &Config{Wait: DefaultWait, MaxOpenTraces: DefaultMaxOpenTraces, Profile: "auto", HoldComplete: true, Attribution: AttributionLocal, PairWait: DefaultPairWait}},
		{id: "mcptrace/forward", want: &Config{Wait: DefaultWait, MaxOpenTraces: DefaultMaxOpenTraces, Profile: "auto", Attribution: AttributionForward, PairWait: time.Minute}},
		{id: "mcptrace/bad_attribution", wantErr: `attribution: want local or forward, got "pairs"`},
		{id: "mcptrace/zero_pair_wait", wantErr: "pair_wait: must be positive, got 0s", sentinel: errNotPositive},
		{id: "mcptrace/zero_wait", wantErr: "wait: must be positive, got 0s", sentinel: errNotPositive},
		{id: "mcptrace/negative_wait", wantErr: "wait: must be positive, got -1s", sentinel: errNotPositive},
		{id: "mcptrace/zero_max", wantErr: "max_open_traces: must be positive, got 0", sentinel: errNotPositive},
		{id: "mcptrace/bad_profile", wantErr: `profile: unknown profile "fancy"`, sentinel: rulefmt.ErrUnknownProfile},
		{id: "mcptrace/missing_rules", wantErr: "rules: read config: open testdata/no-such-file.yaml"},
		{id: "mcptrace/bad_rules", wantErr: "rules: testdata/bad-rules.yaml:5"},
		// An empty rules file is the error mcptrace check --config gives.
		{id: "mcptrace/empty_rules", wantErr: "rules: testdata/empty-rules.yaml: empty configuration file: it holds none of measures, rules, regressions, builtin, vocabulary", sentinel: rulefmt.ErrEmptyConfig},
		// Every mistake of a rules file at once, as mcptrace rules lists them:
		// the last of five typos is there.
		{id: "mcptrace/typo_rules", wantErr: "\ntestdata/typo-rules.yaml:7:14: unknown key \"nmae\" (did you mean \"name\"?)"},
		{id: "mcptrace/unknown_key", wantErr: "wait_duration", unmarshal: true},
		{id: "mcptrace/vocabulary", want: &Config{Wait: DefaultWait, MaxOpenTraces: DefaultMaxOpenTraces, Profile: "auto", Attribution: AttributionLocal, PairWait: DefaultPairWait}},
		{id: "mcptrace/bad_vocabulary", wantErr: `vocabulary: the connector's vocabulary block, re-encoded:`},
		{id: "mcptrace/bad_vocabulary", wantErr: `"sesion"`},
		{id: "mcptrace/vocabulary_and_profile", wantErr: "profile semconv and vocabulary session-spans: give one"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			id := component.MustNewIDWithName(metadata.Type.String(), "")
			if err := id.UnmarshalText([]byte(tt.id)); err != nil {
				t.Fatal(err)
			}
			sub, err := cm.Sub(id.String())
			if err != nil {
				t.Fatal(err)
			}
			cfg := createDefaultConfig().(*Config)
			err = sub.Unmarshal(cfg)
			if tt.unmarshal {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("unmarshal error = %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			err = cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if cfg.Wait != tt.want.Wait || cfg.MaxOpenTraces != tt.want.MaxOpenTraces || cfg.Profile != tt.want.Profile || cfg.Rules != tt.want.Rules ||
					cfg.HoldComplete != tt.want.HoldComplete || cfg.Attribution != tt.want.Attribution || cfg.PairWait != tt.want.PairWait {
					t.Fatalf("config = %+v, want %+v", *cfg, *tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate error = %v, want one containing %q", err, tt.wantErr)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Fatalf("Validate error %v does not wrap %v", err, tt.sentinel)
			}
		})
	}
}

// TestRulesSplitPerTraceFromDumpScoped pins which rules the connector can
// judge in-stream: the file's trace rule, not its dump rule.
func TestRulesSplitPerTraceFromDumpScoped(t *testing.T) {
	c := &Config{Wait: time.Second, MaxOpenTraces: 1, Rules: filepath.Join("testdata", "rules.yaml")}
	s, err := c.settings()
	if err != nil {
		t.Fatal(err)
	}
	perTrace, dumpScoped := inStreamRules(s.rules)
	if len(perTrace) != 1 || perTrace[0].ID != "invocations-do-not-fail" {
		t.Fatalf("per-trace rules = %v, want [invocations-do-not-fail]", ids(perTrace))
	}
	if len(dumpScoped) != 1 || dumpScoped[0].ID != "handshakes-match-misses" {
		t.Fatalf("dump-scoped rules = %v, want [handshakes-match-misses]", ids(dumpScoped))
	}
}

func ids(rs []rulefmt.Rule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestCompleteAtRootFollowsTheEngineRule: a trace is finalized when its root
// arrives unless hold_complete is set or the measures or in-stream rules
// wait on more (a reads measure, a complete_when), exactly as
// analyze.CompleteAtRoot decides for the engine.
func TestCompleteAtRootFollowsTheEngineRule(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cfg   Config
		short bool
	}{
		{"defaults: built-in rules", Config{}, true},
		{"per-trace rules without complete_when", Config{Rules: "testdata/rules.yaml"}, true},
		{"hold_complete", Config{HoldComplete: true}, false},
		{"a reads-per-request measure", Config{Rules: "testdata/rules-measure.yaml"}, false},
		{"a rule with complete_when", Config{Rules: "testdata/rules-complete-when.yaml"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cfg
			c.Wait, c.MaxOpenTraces, c.Profile = time.Second, 1, "default"
			s, err := c.settings()
			if err != nil {
				t.Fatal(err)
			}
			if s.completeAtRoot != tt.short {
				t.Fatalf("completeAtRoot = %v, want %v", s.completeAtRoot, tt.short)
			}
			perTrace, _ := inStreamRules(s.rules)
			if engine := analyze.CompleteAtRoot(s.analyze, perTrace); !c.HoldComplete && engine != s.completeAtRoot {
				t.Fatalf("connector says %v, analyze.CompleteAtRoot %v", s.completeAtRoot, engine)
			}
		})
	}
}

// TestRulesFileMistakesAreTheAnalyzersList: the connector hands on the
// analyzer's list of a rules file's mistakes whole, so a caller can count
// and walk them as mcptrace rules does: five typos, five mistakes.
func TestRulesFileMistakesAreTheAnalyzersList(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Rules = filepath.Join("testdata", "typo-rules.yaml")
	err := cfg.Validate()
	ces, ok := errors.AsType[rulefmt.ConfigErrors](err)
	if !ok || len(ces) != 5 {
		t.Fatalf("Validate error %v: want the analyzer's list of 5 mistakes", err)
	}
	if _, direct := rulefmt.ParseGateConfig(cfg.Rules, mustRead(t, cfg.Rules)); direct == nil || "rules: "+direct.Error() != err.Error() {
		t.Errorf("the connector says\n%v\nthe analyzer\n%v", err, direct)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
