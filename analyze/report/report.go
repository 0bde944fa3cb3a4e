package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// Schema identifies the JSON contract of a Report (docs/analysis-schema.md).
// It changes only when a key changes meaning or disappears; new keys may be
// added within a version.
const Schema = "mcptrace.analysis/v2"

// SchemaV1 is the contract before figures were declared: every figure a
// number. A v1 report reads as a v2 one whose figures are all measurable
// (no writer section, no figures), which is what it claimed.
const SchemaV1 = "mcptrace.analysis/v1"

// ReadableSchema reports whether a report of schema s reads as a Report:
// what a baseline reader accepts.
func ReadableSchema(s string) bool { return s == Schema || s == SchemaV1 }

// Report is the result of an analysis. Its JSON form is the documented,
// stable contract of `mcptrace analyze --format json`; every slice is sorted
// so the same dump always gives the same bytes.
type Report struct {
	// Schema is always the Schema constant.
	Schema string `json:"schema"`
	// Settings echoes how the analysis was configured.
	Settings Settings `json:"settings"`
	// Partial is true when an input was truncated or damaged and only what
	// was read before the damage was analyzed.
	Partial bool `json:"partial"`
	// Inputs lists what was read, in input order.
	Inputs []InputReport `json:"inputs"`
	// Spans counts distinct spans (duplicates count once).
	Spans int `json:"spans"`
	// DuplicateSpans counts spans dropped because the same trace and span id
	// was already read.
	DuplicateSpans int `json:"duplicate_spans"`
	// Traces counts distinct traces.
	Traces int `json:"traces"`
	// IncompleteTraces counts traces with a span whose parent is missing.
	IncompleteTraces int `json:"incomplete_traces"`
	// PoolSpans counts the spans of the profile's pool vocabulary (invoke,
	// acquire, handshake and call spans; see Settings.PoolSpanNames): 0
	// means the dump holds nothing to measure, and a gate on it is
	// incomplete, not green.
	PoolSpans int `json:"pool_spans"`
	// Recognition says what the vocabularies read: spans recognised and
	// not, per vocabulary with its resources, and the most frequent names
	// of the spans none reads (the vocabulary stage).
	Recognition RecognitionReport `json:"recognition"`
	// Window is the time covered by the spans.
	Window Window `json:"window"`
	// Pool is the pool measure.
	Pool PoolReport `json:"pool"`
	// Executions is the session-continuity measure.
	Executions ExecutionsReport `json:"executions"`
	// Writer says what the writer of the spans can show; nil in a report
	// read back from a file written before it existed.
	Writer *WriterReport `json:"writer,omitempty"`
	// Figures holds, by measure name, every figure that is not the truth:
	// a bound, or not measurable (its value in the JSON is then null),
	// with why (figures.go). A figure not listed is measurable.
	Figures map[string]FigureState `json:"figures"`
	// ByProtocol groups the headline figures by MCP protocol revision, in
	// version order: a sessionless revision (2026-07-28 or later) has no
	// session rules to keep, and its cost is the cold start.
	ByProtocol []ProtocolReport `json:"by_protocol"`
	// Measures are the configured reads-per-request measures, in
	// configuration order.
	Measures []MeasureReport `json:"measures"`
	// Warnings say what the spans carried that the measures could not
	// read as written (an attribute of the wrong type, a span ending
	// before it starts) and how they read it instead; absent when none.
	Warnings []string `json:"warnings,omitempty"`
	// Stream is present only for a streaming analysis (a window or a bound
	// on open traces): what the stream did to the figures.
	Stream *StreamReport `json:"stream,omitempty"`
}

// Settings echoes the analysis configuration in a report.
type Settings struct {
	Profile rulefmt.Profile `json:"profile"`
	// Vocabulary is what was read: one vocabulary name (mcptrace,
	// acquire-on-miss, sentry, semconv, openllmetry, mastra), "mixed" when
	// resources were read with different ones (Report.Recognition lists
	// them), "none" when nothing was recognised.
	Vocabulary string `json:"vocabulary"`
	ScopeAttr  string `json:"scope_attr"`
	// IdleTTLSeconds is the idle TTL assumed of a pool scope that recorded
	// no settings (--idle-ttl).
	IdleTTLSeconds float64 `json:"idle_ttl_seconds"`
	// PoolSettings says whose idle settings the miss causes were
	// attributed under: recorded (every pool scope with acquires recorded
	// its own on its acquire spans), assumed (none did: IdleTTLSeconds with
	// the pool's default caps), mixed (some did; Pool.ByScope says which),
	// or "" without acquires.
	PoolSettings  string `json:"pool_settings"`
	ExecutionRoot string `json:"execution_root"`
	// PoolSpanNames are the span names the profile reads as pool spans.
	PoolSpanNames []string `json:"pool_span_names"`
}

// Where the idle settings a scope was attributed under came from
// (Settings.PoolSettings, ScopeReport.Settings).
const (
	SettingsRecorded = "recorded"
	SettingsAssumed  = "assumed"
	SettingsMixed    = "mixed"
)

// PoolSpanNames lists the span names the built-in vocabulary p reads as the
// pool's: what a dump must hold for there to be anything to measure (nil
// for a name that is no built-in).
func PoolSpanNames(p rulefmt.Profile) []string {
	if p == rulefmt.ProfileAuto { // every built-in's, ours first: any may be detected
		var names []string
		for _, v := range rulefmt.BuiltinVocabularies() {
			for _, n := range v.PoolSpanNames() {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
		return names
	}
	v, ok := rulefmt.BuiltinVocabulary(p)
	if !ok {
		return nil
	}
	return v.PoolSpanNames()
}

// NoPoolSpansText says that a dump holds no pool spans and what was looked
// for, in the words the reports and the CLI use. p is a built-in's name or,
// for a configured vocabulary, its name (whose span names a report's
// settings.pool_span_names lists).
func NoPoolSpansText(p rulefmt.Profile) string {
	if p == "" {
		p = rulefmt.ProfileDefault
	}
	names := PoolSpanNames(p)
	if names == nil {
		return "no pool spans found: the spans of vocabulary " + string(p) + " are absent"
	}
	return "no pool spans found: looked for spans named " + strings.Join(names, ", ") + " (profile " + string(p) + ")"
}

// InputReport describes one input read: a file, or stdin as "-".
type InputReport struct {
	Path string `json:"path"`
	// Format is the detected (or forced) format: otlp-json, otlp-proto,
	// jaeger or tempo.
	Format string `json:"format"`
	// Compression is gzip, zstd, or "" for none.
	Compression string `json:"compression"`
	// Spans counts the spans read from this input, duplicates included.
	Spans int `json:"spans"`
	// Partial is true when the input was damaged and read up to the damage.
	Partial bool `json:"partial"`
	// Warnings say what was skipped or repaired, with the place.
	Warnings []string `json:"warnings"`
	// Window is the time span of this input's spans (both null when it
	// held none): inputs far apart are separate runs (Runs).
	Window Window `json:"window"`
	// Backend, for an input read from a tracing backend's query API
	// rather than a file, says what was asked for and fetched; absent
	// for a file.
	Backend *BackendInput `json:"backend,omitempty"`
	// LoneSurrogates counts the escaped lone UTF-16 surrogates read as
	// U+FFFD from this input (its warnings say where): the analysis asks
	// it whether keys holding U+FFFD may be two read as one. Not in the
	// JSON: the writer section says what it cost (WriterReport.IdentityLost).
	LoneSurrogates int `json:"-"`
}

// BackendInput is what a query of a tracing backend asked for and
// fetched: which window of which services the figures measure, and
// whether anything was left out.
type BackendInput struct {
	// Backend is the backend's kind ("jaeger"); URL its base URL, never
	// with credentials.
	Backend string `json:"backend"`
	URL     string `json:"url"`
	// Services are the services asked for, in order.
	Services []string `json:"services"`
	// Window is the window asked for: traces with a selected span
	// starting at or after its start and before its end.
	Window Window `json:"window"`
	// Filter is the span filter asked for, "" for none.
	Filter string `json:"filter"`
	// Pages, Traces and Spans count what was fetched and analyzed.
	Pages  int `json:"pages"`
	Traces int `json:"traces"`
	Spans  int `json:"spans"`
	// SettlingTraces were still receiving spans: not judged, and the
	// input is partial.
	SettlingTraces int `json:"settling_traces"`
	// Cut says a page held the most traces a request asks for even at
	// the narrowest range, so traces may be missing: the input is
	// partial.
	Cut bool `json:"cut"`
}

// counted is n with its noun: "1 page", "3 pages".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Text says the query for people in one line, as every report draws it.
func (b *BackendInput) Text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "read from %s %s: services %s, window %s", b.Backend, b.URL, strings.Join(b.Services, ", "), b.Window.Text())
	if b.Filter != "" {
		sb.WriteString(", " + b.Filter)
	}
	fmt.Fprintf(&sb, "; %s, %s, %s", counted(b.Pages, "page"), counted(b.Traces, "trace"), counted(b.Spans, "span"))
	if b.SettlingTraces > 0 {
		fmt.Fprintf(&sb, "; %s still receiving spans, not judged", counted(b.SettlingTraces, "trace"))
	}
	if b.Cut {
		sb.WriteString("; CUT: a page held the most traces a request asks for, traces may be missing")
	}
	return sb.String()
}

// Window is the time span of a dump: the earliest span start and the latest
// span end, in UTC; both null for an empty dump.
type Window struct {
	Start *time.Time `json:"start"`
	End   *time.Time `json:"end"`
}

// Text is the window for people, "START .. END" in RFC 3339, "" for an
// empty dump: every report and heading that shows a window draws it so.
func (w Window) Text() string {
	if w.Start == nil || w.End == nil {
		return ""
	}
	return w.Start.Format(time.RFC3339) + " .. " + w.End.Format(time.RFC3339)
}

// MaxCell bounds free text a report quotes from the dump or the
// configuration (scope names, selectors): the analysis clips the
// executions' why-not to it and the renderers clip their cells to it, so
// the data and the table for people agree and a table stays readable at
// 100 columns.
const MaxCell = 40
