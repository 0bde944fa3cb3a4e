package gate

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestBuiltinSessionRulesJudgeTheVocabularysCalls: the built-in session
// rule selects the calls of the vocabulary read, not spans carrying
// mcp.method.name, so on OpenLLMetry's per-call corpus dump (calls named
// <tool>.tool, no mcp.method.name; every execution measurable) it judges
// each execution, and fails exactly the executions the corpus server's
// ledger saw spread over several sessions, at the ledger's session count.
// Selecting by mcp.method.name left it with nothing to judge.
func TestBuiltinSessionRulesJudgeTheVocabularysCalls(t *testing.T) {
	const dir = "../../testdata/traces/corpus/openllmetry/"
	var golden struct {
		Figures map[string]struct {
			Ledger int `json:"ledger"`
		} `json:"figures"`
	}
	data, err := os.ReadFile(dir + "per-call.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	multi, most := golden.Figures["multi_session_executions"].Ledger, golden.Figures["sessions_per_execution_max"].Ledger
	if multi == 0 || most < 2 {
		t.Fatalf("the golden holds no multi-session execution (%d, max %d): nothing to judge", multi, most)
	}
	for _, p := range []rulefmt.Profile{rulefmt.ProfileAuto, rulefmt.ProfileOpenLLMetry} {
		t.Run(string(p), func(t *testing.T) {
			cfg := rulefmt.Config{Profile: p}
			_, res := gateEvalFile(t, cfg, rulefmt.BuiltinRules(cfg), dir+"per-call.jsonl")
			r := res[rulefmt.RuleOneSessionPerExecution]
			if r.Status != StatusFail || r.Failed != multi || !strings.Contains(r.Found, fmt.Sprintf("pool_sessions = %d", most)) {
				t.Errorf("%s = %s, %d failed (%s); want fail on the ledger's %d executions at %d sessions", r.ID, r.Status, r.Failed, r.Found, multi, most)
			}
			if !strings.Contains(r.TraceQL, `\\.tool$`) {
				t.Errorf("TraceQL %s does not find the calls in OpenLLMetry's words", r.TraceQL)
			}
		})
	}
}
