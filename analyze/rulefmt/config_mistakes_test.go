package rulefmt

import (
	"errors"
	"testing"
)

// TestConfigMistakesAreErrorsAtTheirPlace pins what a configuration file
// must not get away with: a second YAML document (refused at the --- line
// that starts it, since only the first would be read) and a tolerance that
// is no finite number (refused at the value, file:line:column, instead of
// passing the parse). One document, a document marker before it, a
// trailing empty document and finite values at the edges are accepted.
func TestConfigMistakesAreErrorsAtTheirPlace(t *testing.T) {
	const head = "rules:\n  - id: a\n    select: request\n"
	const rule = head + "    expect: {of: count, op: \">=\", than: 0}\n"
	for _, tc := range []struct {
		name, doc, want string
		is              error
	}{
		{"one document", rule, "", nil},
		{"a marker before the only document", "---\n" + rule, "", nil},
		{"a trailing empty document", rule + "---\n", "", nil},
		{"two documents", rule + "---\nregressions: {hit_rate_drop: 0.5}\n",
			"f.yaml:5:1: several YAML documents in one configuration file: a second document starts here, and only the first would be read; put everything in one document", ErrSeveralDocuments},
		{"a third document after an empty second", rule + "---\n---\nregressions: {hit_rate_drop: 0.5}\n",
			"f.yaml:6:1: several YAML documents in one configuration file: a second document starts here, and only the first would be read; put everything in one document", ErrSeveralDocuments},
		{"a syntax error in the second document", rule + "---\nrules: [\n", "f.yaml:6: invalid YAML: did not find expected node content", nil},
		{"hit_rate_drop .nan", "regressions:\n  hit_rate_drop: .nan\n", "f.yaml:2:18: hit_rate_drop must be a finite number, not .nan", nil},
		{"latency_ratio .inf", "regressions:\n  latency_ratio: .inf\n", "f.yaml:2:18: latency_ratio must be a finite number, not .inf", nil},
		{"latency_min_delta_ms .inf", "regressions:\n  latency_min_delta_ms: .inf\n", "f.yaml:2:25: latency_min_delta_ms must be a finite number, not .inf", nil},
		{"latency_min_delta_ms -.inf", "regressions:\n  latency_min_delta_ms: -.inf\n", "f.yaml:2:25: latency_min_delta_ms must be a finite number, not -.inf", nil},
		{"than .nan", head + "    expect: {of: count, op: \">=\", than: .nan}\n",
			"f.yaml:4:41: than must be a finite number, not .nan", nil},
		{"than -.inf", head + "    expect: {of: count, op: \">=\", than: -.inf}\n",
			"f.yaml:4:41: than must be a finite number, not -.inf", nil},
		{"hit_rate_drop 0 and 1 are finite", "regressions: {hit_rate_drop: 0, latency_ratio: 1, latency_min_delta_ms: 0}\n", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGateConfig("f.yaml", []byte(tc.doc))
			if got := errText(err); got != tc.want {
				t.Errorf("error %q, want %q", got, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
}
