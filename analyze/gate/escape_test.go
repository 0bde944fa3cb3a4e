package gate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// hostileScope names a pool scope with an OSC title sequence, a BEL, a CSI
// colour, a C1 control, a newline and a pipe: what a hostile dump can put in
// any resource attribute.
const hostileScope = "evil\x1b]0;pwned\x07\x1b[31mred\u009b|cell\nrow"

// TestRenderersEscapeControlBytesFromTheDump pins terminal-injection and
// Markdown-row safety: no renderer for people prints ESC, BEL or C1 bytes
// from the dump, and Markdown keeps a value with a newline or '|' in one
// cell.
func TestRenderersEscapeControlBytesFromTheDump(t *testing.T) {
	td := tracegen.Pooled()
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rss.At(i).Resource().Attributes().PutStr(spans.ResourceServiceInstanceID, hostileScope)
	}
	rules := rulefmt.BuiltinRules(rulefmt.Config{})
	r, res := gateEval(t, rulefmt.Config{}, rules, td)
	results := make([]RuleResult, 0, len(res))
	for _, rule := range rules {
		res := res[rule.ID]
		res.Found += " " + hostileScope // as a finding quoting the dump would
		results = append(results, res)
	}
	check := NewCheckReport(r, results, nil, "base\x1b[2J.json")
	outputs := map[string]func(*bytes.Buffer) error{
		"analyze table":    func(b *bytes.Buffer) error { return render.Table(b, r) },
		"analyze markdown": func(b *bytes.Buffer) error { return render.Markdown(b, r) },
		"check table":      func(b *bytes.Buffer) error { return check.Render(b, CheckTable) },
		"check markdown":   func(b *bytes.Buffer) error { return check.Render(b, CheckMarkdown) },
		"diff table": func(b *bytes.Buffer) error {
			return RenderDiff(b, Compare(r, r, rulefmt.DefaultTolerances()), hostileScope, "cur")
		},
		"diff markdown": func(b *bytes.Buffer) error {
			return RenderDiffMarkdown(b, Compare(r, r, rulefmt.DefaultTolerances()), hostileScope, "cur")
		},
	}
	for name, render := range outputs {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := b.String()
		if strings.ContainsAny(out, "\x1b\x07\u009b") {
			t.Errorf("%s prints control bytes from the dump raw:\n%q", name, out)
		}
		// Markdown text escapes the bracket (it could open a link); a code
		// span shows it as is.
		if !strings.Contains(out, `evil\x1b]0;`) && !strings.Contains(out, `evil\x1b\]0;`) {
			t.Errorf("%s does not show the escaped value", name)
		}
		if strings.Contains(name, "markdown") {
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "pwned") && strings.HasPrefix(line, "|") && !strings.Contains(line, `\|cell\x0arow`) {
					t.Errorf("%s: the value breaks its row: %q", name, line)
				}
				if strings.HasPrefix(line, "row") {
					t.Errorf("%s: a newline in the value started a line: %q", name, line)
				}
			}
		}
	}
}
