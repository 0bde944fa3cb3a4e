package gate

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/htmlreport"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// hostileTexts are values a dump can put in any attribute: live Markdown
// (links, images, autolinks, bare URLs, an entity naming a bidi override),
// bidi controls, zero-width characters, separators, C0 and C1 controls and
// an invalid byte. One table for every format.
var hostileTexts = []struct{ name, s string }{
	{"link", "[click me](https://evil.example/x)"},
	{"image", "![pixel](https://evil.example/p.png)"},
	{"reference link", "[x][1] [1]: https://evil.example"},
	{"autolink", "<https://evil.example/a>"},
	{"bare url", "see https://evil.example/bare now"},
	{"www autolink", "go to www.evil.example today"},
	{"email autolink", "mail admin@evil.example"},
	{"mailto", "mailto:admin@evil.example"},
	{"entity", "a&#x202E;b &lt;script&gt;"},
	{"html", "<img src=x onerror=alert(1)>"},
	{"bidi override", "user\u202Etxt.exe"},
	{"bidi embeddings", "a\u202Ab\u202Bc\u202Cd\u202De"},
	{"bidi isolates", "a\u2066b\u2067c\u2068d\u2069e"},
	{"zero width", "a\u200Bb\u200Cc\u200Dd\u200Ee\u200Ff\u2060g\uFEFFh"},
	{"separators", "line\u2028para\u2029end"},
	{"c0 and c1", "a\x01b\x1b[31mc\x7fd\u0085e\u009bf"},
	{"invalid utf-8", "a\xffb\xc3"},
	{"table breakers", "a|b\nc\td"},
}

// rawHidden returns, with its offset, the first character of out a reader cannot see as
// what it is: a control other than newline, a format character (bidi,
// zero width), a line or paragraph separator, or an invalid byte.
func rawHidden(out string) (rune, int, bool) {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return r, i, true
		case r == '\n':
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r):
			return r, i, true
		}
		i += size
	}
	return 0, 0, false
}

// liveMarkdown finds Markdown that would render as a link, an image, an
// autolink or HTML: an unescaped bracket, '<' or '&', '@' or the ':' of
// "://" or "mailto:", or "www.".
var liveMarkdown = regexp.MustCompile(`(^|[^\\])(\[|\]|<|@|://|(?i:mailto|xmpp):|(?i:www)\.)|&[#a-zA-Z]`)

// Every format shows every hostile value as text: the formats for people
// (tables, Markdown, HTML, JUnit, annotations) with no raw control, bidi,
// zero-width or separator character and, in Markdown, no live link, image
// or autolink; JSON stays valid and keeps the value exactly.
func TestEveryFormatShowsHostileTextInert(t *testing.T) {
	rules := rulefmt.BuiltinRules(rulefmt.Config{})
	for _, h := range hostileTexts {
		t.Run(h.name, func(t *testing.T) {
			td := tracegen.Pooled()
			rss := td.ResourceSpans()
			for i := 0; i < rss.Len(); i++ {
				rss.At(i).Resource().Attributes().PutStr(spans.ResourceServiceInstanceID, h.s)
			}
			cfg := rulefmt.Config{}
			idx := analyze.NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
			idx.Add(td)
			r, res := evaluate(t, idx, cfg, rules, 5)
			for i := range res {
				res[i].Found += " " + h.s // as a finding quoting the dump would
				res[i].Status = StatusFail
			}
			check := NewCheckReport(r, res, nil, h.s+".json")
			ev, err := analyze.NewReportEvents(idx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			html, err := htmlreport.New(r, ev, htmlreport.Options{Check: check.HTML()})
			if err != nil {
				t.Fatal(err)
			}
			human := map[string]func(*bytes.Buffer) error{
				"analyze table":      func(b *bytes.Buffer) error { return render.Table(b, r) },
				"analyze markdown":   func(b *bytes.Buffer) error { return render.Markdown(b, r) },
				"check table":        func(b *bytes.Buffer) error { return check.Render(b, CheckTable) },
				"check markdown":     func(b *bytes.Buffer) error { return check.Render(b, CheckMarkdown) },
				"junit":              check.writeJUnitTo,
				"github annotations": func(b *bytes.Buffer) error { return check.WriteGitHubAnnotations(b) },
				"html page":          func(b *bytes.Buffer) error { return html.Render(b) },
				"html data": func(b *bytes.Buffer) error {
					// What the page's script draws with textContent: the
					// data's strings once decoded.
					data, err := json.Marshal(html)
					if err != nil {
						return err
					}
					return decodedStrings(data, b)
				},
			}
			for name, render := range human {
				var b bytes.Buffer
				if err := render(&b); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				out := b.String()
				if r, at, bad := rawHidden(out); bad {
					t.Errorf("%s prints %U raw: %q", name, r, out[max(at-80, 0):min(at+80, len(out))])
				}
				if !strings.Contains(name, "markdown") {
					continue
				}
				for _, line := range strings.Split(out, "\n") {
					if !strings.Contains(line, "evil") && !strings.Contains(line, "202") && !strings.Contains(line, "img") {
						continue
					}
					// Code spans are inert: look at the text outside them.
					text := regexp.MustCompile("`[^`]*`").ReplaceAllString(line, "")
					text = strings.TrimPrefix(strings.TrimSpace(text), "<details><summary>")
					text = strings.ReplaceAll(text, "</summary>", "")
					// The escapes' own entities are text.
					text = strings.NewReplacer("&amp;", "", "&lt;", "").Replace(text)
					if m := liveMarkdown.FindString(text); m != "" {
						t.Errorf("%s: live markup %q in %q", name, m, line)
					}
				}
			}
			// JSON is data: valid, and the value itself (invalid UTF-8
			// excepted, which JSON cannot hold).
			for name, render := range map[string]func(*bytes.Buffer) error{
				"analyze json": func(b *bytes.Buffer) error { return render.JSON(b, r) },
				"check json":   func(b *bytes.Buffer) error { return check.Render(b, CheckJSON) },
			} {
				var b bytes.Buffer
				if err := render(&b); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !json.Valid(b.Bytes()) {
					t.Errorf("%s is not valid JSON", name)
				}
				var strs bytes.Buffer
				if err := decodedStrings(b.Bytes(), &strs); err != nil {
					t.Fatal(err)
				}
				if utf8.ValidString(h.s) && !strings.Contains(strs.String(), strings.ReplaceAll(h.s, "\n", " ")) {
					t.Errorf("%s does not keep the value %q as is", name, h.s)
				}
			}
		})
	}
}

// writeJUnitTo writes c's JUnit XML to b.
func (c *CheckReport) writeJUnitTo(b *bytes.Buffer) error { return c.WriteJUnit(b) }

// decodedStrings writes every string of the JSON document data, decoded,
// one per line, to b.
func decodedStrings(data []byte, b *bytes.Buffer) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(strings.ReplaceAll(v, "\n", " ") + "\n")
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for k, x := range v {
				b.WriteString(k + "\n")
				walk(x)
			}
		}
	}
	walk(v)
	return nil
}
