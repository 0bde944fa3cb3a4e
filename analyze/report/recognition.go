package report

import (
	"fmt"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// Built-in vocabulary names, as the report's settings.vocabulary and
// recognition.vocabularies[].vocabulary give them.
const (
	VocabMcptrace      = "mcptrace"
	VocabAcquireOnMiss = "acquire-on-miss"
	VocabSemconv       = "semconv"
	VocabOpenLLMetry   = "openllmetry"
	VocabSentry        = "sentry"
	VocabMastra        = "mastra"
	// VocabNone is a resource no vocabulary reads.
	VocabNone = "none"
	// VocabMixed is settings.vocabulary when resources differ.
	VocabMixed = "mixed"
)

// VocabularyPrecedence lists the built-in vocabularies in detection's
// precedence order (ties within a tier go to the earlier one), as the
// reports name them; the analyzer's detection signatures follow it (a test
// there pins it).
var VocabularyPrecedence = []string{VocabMcptrace, VocabAcquireOnMiss, VocabSentry, VocabSemconv, VocabOpenLLMetry, VocabMastra}

// RecognitionReport says what the analysis read: how many spans a
// vocabulary recognised and how many none did, each vocabulary with the
// resources read with it, and the most frequent names of the spans no
// vocabulary recognises.
type RecognitionReport struct {
	// RecognisedSpans counts the spans the vocabulary of their resource
	// reads; UnrecognisedSpans the others. They add up to Spans.
	RecognisedSpans   int `json:"recognised_spans"`
	UnrecognisedSpans int `json:"unrecognised_spans"`
	// Vocabularies lists each vocabulary read (and VocabNone for resources
	// none reads), most spans first.
	Vocabularies []VocabularyUse `json:"vocabularies"`
	// UnrecognisedNames are the most frequent names of spans no built-in
	// vocabulary recognises, at most MaxUnrecognisedNames, most spans
	// first (ties by name).
	UnrecognisedNames []NameCount `json:"unrecognised_names"`
}

// VocabularyUse is one vocabulary and the resources read with it.
type VocabularyUse struct {
	Vocabulary      string `json:"vocabulary"`
	Resources       int    `json:"resources"`
	Spans           int    `json:"spans"`
	RecognisedSpans int    `json:"recognised_spans"`
	// ExampleResources name up to MaxExampleResources of the resources,
	// sorted, by their kept attributes ("service.name=gateway").
	ExampleResources []string `json:"example_resources"`
}

// NameCount is a span name and how many spans carry it.
type NameCount struct {
	Name  string `json:"name"`
	Spans int    `json:"spans"`
}

// NothingRecognised reports whether the report holds spans, no vocabulary
// recognised any of them and no reads-per-request measure of the
// configuration found a request among them: there is nothing to measure,
// and analyze and check exit 3 (UnrecognisedText says why). A measure that
// read the dump is the user's own vocabulary for it.
func (r *Report) NothingRecognised() bool {
	if r.Spans == 0 || r.Recognition.RecognisedSpans > 0 {
		return false
	}
	for _, m := range r.Measures {
		if m.Requests > 0 {
			return false
		}
	}
	return true
}

// unrecognisedNameWidth is the most of a span name UnrecognisedText shows.
const unrecognisedNameWidth = 80

// UnrecognisedText says, for a report whose spans no vocabulary
// recognised, what was seen (the most frequent span names, escaped and
// clipped) and what would read them: --profile semconv when the names look
// like the conventions' ("tools/call <tool>"), else a vocabulary: block in
// mcptrace.yaml. The first line is a sentence, then one line per name and
// one for the remedy: for a terminal.
func (r *Report) UnrecognisedText() string { return r.unrecognised(true) }

// UnrecognisedLine is UnrecognisedText on one line, the names quoted: for
// a check's incomplete reasons, which the CI reports show one per line.
func (r *Report) UnrecognisedLine() string { return r.unrecognised(false) }

func (r *Report) unrecognised(lines bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "no span recognised: none of the %d spans is read by a built-in vocabulary (%s)", r.Spans, strings.Join(VocabularyPrecedence, ", "))
	names := r.Recognition.UnrecognisedNames
	if len(names) > 0 {
		fmt.Fprintf(&b, "; the %d most frequent span names:", len(names))
	}
	semconvLike := false
	for k, n := range names {
		name := textfmt.TermSafe(textfmt.ClipTo(n.Name, unrecognisedNameWidth))
		switch {
		case lines:
			fmt.Fprintf(&b, "\n  %8d  %s", n.Spans, name)
		case k > 0:
			fmt.Fprintf(&b, ", \"%s\" (%d)", name, n.Spans)
		default:
			fmt.Fprintf(&b, " \"%s\" (%d)", name, n.Spans)
		}
		semconvLike = semconvLike || rulefmt.LooksSemconv(n.Name)
	}
	if lines {
		b.WriteString("\nto read them: ")
	} else {
		b.WriteString("; to read them: ")
	}
	if semconvLike {
		b.WriteString("--profile " + string(rulefmt.ProfileSemconv) + " (names look like the MCP conventions' \"" + spans.MethodToolsCall + " <tool>\")")
	} else {
		b.WriteString("a vocabulary: block in mcptrace.yaml, see docs/vocabularies.md")
	}
	return b.String()
}
