package report

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestSpanQuantityIsALowerBoundWhereValuesMayHaveMerged pins what a
// rule's count over its spans is worth: the session counts are lower
// bounds where session identities may have merged (and only then), a
// distinct of another attribute wherever the inputs held a lone
// surrogate, and count always measurable.
func TestSpanQuantityIsALowerBoundWhereValuesMayHaveMerged(t *testing.T) {
	merged := &WriterReport{Shows: []string{"calls", "session_id"}, SessionsMerged: "SESSIONS MERGED"}
	lone := []InputReport{{LoneSurrogates: 3}}
	for _, tc := range []struct {
		name, of, attribute string
		writer              *WriterReport
		inputs              []InputReport
		want                Measurability
		why                 string
	}{
		{"pool_sessions where sessions may have merged", rulefmt.QuantityPoolSessions, "", merged, lone, LowerBound, "SESSIONS MERGED"},
		{"lost_sessions where sessions may have merged", rulefmt.QuantityLostSessions, "", merged, lone, LowerBound, "SESSIONS MERGED"},
		{"distinct session ids where sessions may have merged", rulefmt.QuantityDistinct, spans.AttrSessionID, merged, lone, LowerBound, "SESSIONS MERGED"},
		{"pool_sessions with lone surrogates elsewhere", rulefmt.QuantityPoolSessions, "", &WriterReport{}, lone, Measurable, ""},
		{"distinct session ids with lone surrogates elsewhere", rulefmt.QuantityDistinct, spans.AttrSessionID, &WriterReport{}, lone, Measurable, ""},
		{"distinct of another attribute with lone surrogates", rulefmt.QuantityDistinct, "gen_ai.tool.name", &WriterReport{}, lone, LowerBound, "values of gen_ai.tool.name"},
		{"distinct of another attribute without", rulefmt.QuantityDistinct, "gen_ai.tool.name", merged, nil, Measurable, ""},
		{"count where sessions may have merged", rulefmt.QuantityCount, "", merged, lone, Measurable, ""},
		{"pool_sessions of a report without a writer section", rulefmt.QuantityPoolSessions, "", nil, lone, Measurable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Writer: tc.writer, Inputs: tc.inputs}
			f := r.SpanQuantityOf(tc.of, tc.attribute)
			if f.State != tc.want || !strings.Contains(f.Why, tc.why) {
				t.Errorf("%s(%s) is %s (%q), want %s (%q)", tc.of, tc.attribute, f.State, f.Why, tc.want, tc.why)
			}
		})
	}
}
