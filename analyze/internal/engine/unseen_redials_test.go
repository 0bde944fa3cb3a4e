package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// withoutAttempts is the built-in pool vocabulary mapping no attempt
// attribute: a writer whose acquire spans do not say which attempt they
// are.
func withoutAttempts() *rulefmt.Vocabulary {
	v, _ := rulefmt.BuiltinVocabulary(rulefmt.ProfileMcptrace)
	v.Name, v.Attributes.Attempt = "pool-without-attempts", ""
	return &v
}

// TestRedialsAVocabularyCannotSeeAreBounds pins what the misses by cause
// are worth where no acquire span says its attempt: a cold miss, then an
// invocation whose first attempt reused the session and whose second
// (the redial) dialed. With the attempt mapped the causes are the
// truth: cold 1, redial 1. Without it the redial reads as a first
// attempt that found the session its first attempt just released, so it
// is filed unexplained: redial is then a lower bound (0 read, 1 true),
// concurrent, health_check, unexplained and unexplained_misses upper
// bounds, ttl, after_failure and evicted not measurable, cold the truth;
// on the load and the stream path alike, in the testdata dump of a real
// redial too.
func TestRedialsAVocabularyCannotSeeAreBounds(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "gw")
	attemptsDump(d, ss, 1, 0, 100, false, attempt{at: 0, attempt: 1})
	attemptsDump(d, ss, 2, 200, 300, false, attempt{at: 0, hit: true, attempt: 1}, attempt{at: 50, attempt: 2})
	path := d.b.Write(t)
	seen := map[string]report.Measurability{}
	unseen := map[string]report.Measurability{
		report.MissCauseFigure(spans.MissRedial):     report.LowerBound,
		report.MissCauseFigure(spans.MissConcurrent): report.UpperBound, report.MissCauseFigure(spans.MissHealthCheck): report.UpperBound,
		report.MissCauseFigure(spans.MissUnexplained): report.UpperBound, "unexplained_misses": report.UpperBound,
		report.MissCauseFigure(spans.MissTTL): report.NotMeasurable, report.MissCauseFigure(spans.MissAfterFailure): report.NotMeasurable,
		report.MissCauseFigure(spans.MissEvicted): report.NotMeasurable,
	}
	for _, tc := range []struct {
		name  string
		path  string
		voc   *rulefmt.Vocabulary
		want  map[string]report.Measurability // the figures not measurable
		cause map[string]int                  // the misses by cause read
	}{
		{"attempt mapped", path, nil, seen, map[string]int{spans.MissCold: 1, spans.MissRedial: 1}},
		{"no attempt mapped", path, withoutAttempts(), unseen, map[string]int{spans.MissCold: 1, spans.MissUnexplained: 1}},
		{"testdata redial, attempt mapped", tracesDir + "/ttl-and-redial.otlp.json", nil, seen,
			map[string]int{spans.MissCold: 1, spans.MissTTL: 1, spans.MissRedial: 1}},
		{"testdata redial, no attempt mapped", tracesDir + "/ttl-and-redial.otlp.json", withoutAttempts(), unseen,
			map[string]int{spans.MissCold: 1, spans.MissTTL: 1, spans.MissAfterFailure: 1}},
	} {
		cfg := rulefmt.Config{IdleTTL: time.Hour, Vocabulary: tc.voc}
		if strings.HasPrefix(tc.path, tracesDir) {
			cfg.IdleTTL = 0 // the dump records its settings
		}
		for run, analyze := range map[string]func() (*report.Report, error){
			"load": func() (*report.Report, error) {
				_, r := loadAndAnalyze(t, tc.path, cfg.WithDefaults())
				return r, nil
			},
			"stream": func() (*report.Report, error) {
				r, _, err := AnalyzeStream(context.Background(), ingest.Files{tc.path}, cfg, LoadOptions{Read: ReadOptions{Strict: true}}, EngineOptions{})
				return r, err
			},
		} {
			t.Run(tc.name+"/"+run, func(t *testing.T) {
				r, err := analyze()
				if err != nil {
					t.Fatal(err)
				}
				checkCauses(t, r, tc.cause, tc.want)
			})
		}
	}
}

// checkCauses checks r's misses by cause against cause and what each
// cause's figure and unexplained_misses are worth against want (the
// rest measurable), each bound's reason naming the attempt number.
func checkCauses(t *testing.T, r *report.Report, cause map[string]int, want map[string]report.Measurability) {
	t.Helper()
	for _, c := range spans.MissReasons {
		if r.Pool.MissReasons[c] != cause[c] {
			t.Errorf("miss_reasons %v, want %v", r.Pool.MissReasons, cause)
			break
		}
	}
	for _, name := range append([]string{"unexplained_misses"}, causeFigures()...) {
		f, w := r.FigureOf(name), want[name]
		if w == "" {
			w = report.Measurable
		}
		if f.State != w || (w != report.Measurable && !strings.Contains(f.Why, "no acquire span carries an attempt number")) {
			t.Errorf("%s is %s (%q), want %s", name, f.State, f.Why, w)
		}
	}
}

// causeFigures names the figure of every cause of a miss.
func causeFigures() []string {
	out := make([]string, 0, len(spans.MissReasons))
	for _, c := range spans.MissReasons {
		out = append(out, report.MissCauseFigure(c))
	}
	return out
}
