package mcptraceconnector

import (
	"errors"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// Defaults of the connector's configuration.
const (
	// DefaultWait is how long after a trace's last span an open trace waits
	// for more before it is finalized (wall clock, like the groupbytrace
	// processor's wait_duration).
	DefaultWait = 30 * time.Second
	// DefaultMaxOpenTraces bounds the traces held open at once.
	DefaultMaxOpenTraces = 100_000
	// DefaultPairWait is how long the logs → metrics leg holds a forwarded
	// acquire before it attributes it: longer than DefaultWait, because an
	// acquire of a trace finalized by its wait arrives up to that wait
	// (and a sweep) after an acquire of a trace finalized at its root.
	DefaultPairWait = 45 * time.Second
)

// Values of Config.Attribution.
const (
	// AttributionLocal: the traces legs attribute the misses of the
	// acquires they see (exact on one instance).
	AttributionLocal = "local"
	// AttributionForward: the traces → logs leg sends each acquire as a
	// record for the logs → metrics leg of the instance that owns its
	// (scope, key) pair, and the traces → metrics leg counts no acquires
	// (exact across a fleet routed by trace id).
	AttributionForward = "forward"
)

// Config is the mcptrace connector's configuration. Its zero value is not
// valid; the factory's default config is.
type Config struct {
	// Wait is how long an open trace is held after its last span arrived
	// before it is finalized. It must be positive.
	Wait time.Duration `mapstructure:"wait"`
	// MaxOpenTraces bounds the traces held open; when a new trace would
	// exceed it, the trace whose last span is oldest is finalized early and
	// counted as cut. It must be positive.
	MaxOpenTraces int `mapstructure:"max_open_traces"`
	// Profile is the vocabulary, as `mcptrace analyze --profile`: auto (the
	// default: detected per resource from the spans present, sticky once a
	// resource's spans show a writer, see analyze/internal/vocab), or a
	// built-in forced: mcptrace (alias default), acquire-on-miss, semconv,
	// openllmetry, sentry or mastra. docs/vocabularies.md says what each
	// reads.
	Profile string `mapstructure:"profile"`
	// Vocabulary describes any other writer, in the same keys as the
	// vocabulary: block of mcptrace.yaml (docs/vocabularies.md), validated
	// when the config is loaded. It is read instead of Profile, which must
	// then be left at auto; a rules file's own vocabulary: block is the
	// other place to give one (not both).
	Vocabulary map[string]any `mapstructure:"vocabulary"`
	// Rules is the path of an mcptrace.yaml whose rules are evaluated per
	// finalized trace; empty means the built-in rules.
	Rules string `mapstructure:"rules"`
	// HoldComplete keeps every trace for Wait after its last span, even one
	// whose root span has arrived. By default such a trace is complete (the
	// engine's rule, analyze.CompleteAtRoot) and finalized at the end of
	// the batch that brought its root; a later span of it is late. Hold
	// when the pipeline in front of the connector reorders batches (a
	// sending queue with several consumers) or a trace's spans come from
	// processes that export after its root.
	HoldComplete bool `mapstructure:"hold_complete"`
	// Attribution says where misses get their cause: local (this instance
	// attributes the acquires of the traces it sees) or forward (the
	// traces → logs leg emits one record per acquire, to be routed by
	// pair to a logs → metrics leg of this connector, which attributes
	// them; the traces → metrics leg then counts no acquires). A fleet
	// routed by trace id needs forward for exact miss causes.
	Attribution string `mapstructure:"attribution"`
	// PairWait is how long the logs → metrics leg holds a forwarded
	// acquire before attributing it, so that the acquires of its pair that
	// started earlier, finalized later on other instances, arrive first.
	// Set it above the trace tier's wait plus the time a record takes to
	// get here. It must be positive.
	PairWait time.Duration `mapstructure:"pair_wait"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// errNotPositive is wrapped by Validate for a wait or bound that is zero or
// negative.
var errNotPositive = errors.New("must be positive")

// Validate checks every field and names the one that is wrong: the
// Collector calls it when the config is loaded (also by `validate`), so bad
// config fails before any pipeline starts. The rules file is read and
// parsed here so that a missing file or a bad rule is reported at load time
// with its file, line and column.
func (c *Config) Validate() error {
	if c.Wait <= 0 {
		return fmt.Errorf("wait: %w, got %v", errNotPositive, c.Wait)
	}
	if c.MaxOpenTraces <= 0 {
		return fmt.Errorf("max_open_traces: %w, got %d", errNotPositive, c.MaxOpenTraces)
	}
	if c.PairWait <= 0 {
		return fmt.Errorf("pair_wait: %w, got %v", errNotPositive, c.PairWait)
	}
	if _, err := c.settings(); err != nil {
		return err
	}
	return nil
}

// settings is the configuration resolved for the logic: the profile parsed
// and the rules loaded. The connector never re-reads the raw Config.
type settings struct {
	wait          time.Duration
	maxOpenTraces int
	// completeAtRoot finalizes a trace when its root span arrives: unless
	// held, and only when neither the measures nor the in-stream rules
	// wait on more (analyze.CompleteAtRoot).
	completeAtRoot bool
	analyze        rulefmt.Config
	// rules are evaluated per finalized trace; the dump-scoped ones are
	// not (see inStreamRules).
	rules []rulefmt.Rule
	// rulesSource names where the rules came from, for logs.
	rulesSource string
	// forward is attribution: forward.
	forward  bool
	pairWait time.Duration
}

// vocabulary parses the vocabulary block, nil without one. The block is
// handed to the analyzer's own parser (rulefmt.ParseVocabulary), the one
// that reads the vocabulary: block of an mcptrace.yaml, so it takes exactly the keys, the
// selectors and the checks of the file format, every mistake at once; the
// lines and columns its errors name are those of the block as re-encoded,
// which the message says.
func (c *Config) vocabulary() (*rulefmt.Vocabulary, error) {
	if c.Vocabulary == nil {
		return nil, nil
	}
	data, err := yaml.Marshal(c.Vocabulary)
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	v, err := rulefmt.ParseVocabulary("the connector's vocabulary block, re-encoded", data)
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	return v, nil
}

// settings resolves c; errors name the field.
func (c *Config) settings() (settings, error) {
	profile, err := rulefmt.ParseProfile(c.Profile)
	if err != nil {
		return settings{}, fmt.Errorf("profile: %w", err)
	}
	s := settings{
		wait:          c.Wait,
		maxOpenTraces: c.MaxOpenTraces,
		analyze:       rulefmt.Config{Profile: profile},
		pairWait:      c.PairWait,
	}
	switch c.Attribution {
	case "", AttributionLocal:
	case AttributionForward:
		s.forward = true
	default:
		return settings{}, fmt.Errorf("attribution: want %s or %s, got %q", AttributionLocal, AttributionForward, c.Attribution)
	}
	voc, err := c.vocabulary()
	if err != nil {
		return settings{}, err
	}
	var gc *rulefmt.GateConfig // nil: the built-in rules only
	if c.Rules == "" {
		s.rulesSource = "built-in rules"
	} else {
		gc, err = rulefmt.LoadGateConfig(c.Rules)
		if err != nil {
			return settings{}, fmt.Errorf("rules: %w", err)
		}
		s.analyze.Measures = gc.Measures
		s.rulesSource = c.Rules
		if gc.Vocabulary != nil {
			if voc != nil {
				return settings{}, fmt.Errorf("vocabulary: given here and in rules file %s: give one", c.Rules)
			}
			voc = gc.Vocabulary
		}
	}
	if voc != nil {
		if profile != rulefmt.ProfileAuto {
			return settings{}, fmt.Errorf("profile %s and vocabulary %s: give one (leave profile at auto)", profile, voc.Name)
		}
		s.analyze.Vocabulary = voc
	}
	// The check's own choice of rules, shared with mcptrace check.
	s.rules = rulefmt.CheckRules(gc, s.analyze, false)
	perTrace, _ := inStreamRules(s.rules)
	s.completeAtRoot = analyze.ChooseEngine(analyze.EngineRequest{Config: s.analyze, Rules: perTrace, Live: true,
		Options: analyze.EngineOptions{HoldComplete: c.HoldComplete}}).FinalizeAtRoot
	return s, nil
}

// inStreamRules splits rules into those judged per trace or subtree, which
// the connector can evaluate on a finalized trace, and the dump-scoped ones
// (a dump scope, or a comparison with a dump-wide measure such as the hit
// rate), which need every trace at once and are not evaluated in-stream.
func inStreamRules(rules []rulefmt.Rule) (perTrace, dumpScoped []rulefmt.Rule) {
	for _, r := range rules {
		if !analyze.InStream(r) {
			dumpScoped = append(dumpScoped, r)
			continue
		}
		perTrace = append(perTrace, r)
	}
	return perTrace, dumpScoped
}
