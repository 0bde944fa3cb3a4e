package rulefmt

import (
	"fmt"
	"math"

	"go.yaml.in/yaml/v3"
)

// Tolerances say how much worse than its baseline a dump may be before the
// gate calls it a regression. The zero value tolerates nothing; start from
// DefaultTolerances.
type Tolerances struct {
	// HitRateDrop is how far the hit rate may fall (absolute, 0.02 = two
	// points) before it regresses.
	HitRateDrop float64
	// LatencyRatio is how many times its baseline a latency percentile may
	// grow to (1.5 = 50% slower).
	LatencyRatio float64
	// LatencyMinDeltaMS ignores latency growth smaller than this many
	// milliseconds: a 0.1 ms acquire that takes 0.2 ms is noise, not a
	// regression.
	LatencyMinDeltaMS float64
	// ExcessMisses, UnexplainedMisses and Unexpected are how many more
	// misses above the floor, unexplained misses and unexpected requests of
	// a reads measure the dump may have than its baseline.
	ExcessMisses      int
	UnexplainedMisses int
	Unexpected        int
}

// DefaultTolerances are the gate's defaults: the hit rate may drop 2
// points, a latency percentile may grow 50% (or by less than 5 ms), and no
// count of misses, unexplained misses or unexpected reads may grow.
func DefaultTolerances() Tolerances {
	return Tolerances{HitRateDrop: 0.02, LatencyRatio: 1.5, LatencyMinDeltaMS: 5}
}

// Validate reports a tolerance that makes no sense.
func (t Tolerances) Validate() error {
	switch {
	case t.HitRateDrop < 0 || t.HitRateDrop > 1 || math.IsNaN(t.HitRateDrop):
		return fmt.Errorf("hit rate drop %v: want 0 to 1", t.HitRateDrop)
	case t.LatencyRatio < 1 || math.IsNaN(t.LatencyRatio) || math.IsInf(t.LatencyRatio, 0):
		return fmt.Errorf("latency ratio %v: want 1 or more (1.5 = 50%% slower)", t.LatencyRatio)
	case t.LatencyMinDeltaMS < 0 || math.IsNaN(t.LatencyMinDeltaMS):
		return fmt.Errorf("latency minimum delta %v ms: want 0 or more", t.LatencyMinDeltaMS)
	case t.ExcessMisses < 0 || t.UnexplainedMisses < 0 || t.Unexpected < 0:
		return fmt.Errorf("miss and read tolerances must be 0 or more")
	}
	return nil
}

// parseTolerances reads the regressions: mapping of a configuration file
// over the values already in t.
func parseTolerances(n *yaml.Node, t *Tolerances) error {
	err := eachKey(n, []string{"hit_rate_drop", "latency_ratio", "latency_min_delta_ms", "excess_misses", "unexplained_misses", "unexpected"}, func(key string, _, v *yaml.Node) error {
		switch key {
		case "hit_rate_drop", "latency_ratio", "latency_min_delta_ms":
			return setToleranceRatio(t, key, v)
		default:
			return setToleranceCount(t, key, v)
		}
	})
	return err
}

// toleranceError says what key's value v must be, at v's place in the file.
func toleranceError(key string, v *yaml.Node, want string) error {
	return nodeErrorf(v, "%s must be %s", key, want)
}

// setToleranceRatio reads v, the value of one of the fractional
// tolerances, into t: a finite number within the key's range.
func setToleranceRatio(t *Tolerances, key string, v *yaml.Node) error {
	var f float64
	if v.Kind != yaml.ScalarNode || v.Decode(&f) != nil {
		return toleranceError(key, v, "a number")
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return toleranceError(key, v, "a finite number, not "+v.Value)
	}
	switch key {
	case "hit_rate_drop":
		if f < 0 || f > 1 {
			return toleranceError(key, v, "between 0 and 1")
		}
		t.HitRateDrop = f
	case "latency_ratio":
		if f < 1 {
			return toleranceError(key, v, "1 or more (1.5 = 50% slower)")
		}
		t.LatencyRatio = f
	case "latency_min_delta_ms":
		if f < 0 {
			return toleranceError(key, v, "0 or more")
		}
		t.LatencyMinDeltaMS = f
	}
	return nil
}

// setToleranceCount reads v, the value of one of the count tolerances,
// into t: a whole number, 0 or more.
func setToleranceCount(t *Tolerances, key string, v *yaml.Node) error {
	var i int
	// The tag, not Decode alone: yaml.v3 decodes 0.5 into an int as 0.
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&i) != nil || i < 0 {
		return toleranceError(key, v, "a whole number, 0 or more")
	}
	switch key {
	case "excess_misses":
		t.ExcessMisses = i
	case "unexplained_misses":
		t.UnexplainedMisses = i
	case "unexpected":
		t.Unexpected = i
	}
	return nil
}
