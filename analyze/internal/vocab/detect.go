package vocab

import (
	"cmp"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/poll"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// Detection: which vocabulary wrote a dump's spans, per resource.
//
// A fleet mixes instrumentations (our pool in a gateway, a server on the
// TypeScript SDK under Shinzo, a client under OpenLLMetry), so the choice
// is made per resource: one process's spans, identified by the resource
// attributes the index keeps (service.name, service.instance.id and those
// a configuration names). Each span adds to its resource's evidence
// (resEvidence): plain counts, so evidence merges by adding, in any order,
// and the choice made from the sum is the same whatever the sharding.
//
// The choice (decide) goes by the signatures of the built-in vocabularies
// (builtinSignatures), in two tiers. Our own spans (plugin.mcp.*) are
// unambiguous and win whenever present: a pool writing call spans in the
// conventions' names (pool.Options.SemconvCallSpans) is still the pool,
// read as mcptrace. Within a tier the vocabulary recognising the most spans
// wins, and an equal count goes to the one listed first (sentry before
// semconv: Sentry's spans are the conventions' and marked as its own;
// semconv before openllmetry: the conventions are the standard).
//
// In a batch run the evidence of the whole dump is summed before any trace
// is measured, so detection equals the one over a single index. A stream
// has no whole dump: a resource's vocabulary is decided by the first
// finalized batch in which it shows a signature (in the order of the
// batches, and of the engine's shards within one) and is sticky from then
// on;
// spans finalized before it are counted as unrecognised, and the
// vocabulary the measures read (effectiveProfile) is decided, and fixed,
// with the first resource decided. A speculative batch run (one that
// measures traces as their roots arrive) decides as a stream does and is
// spoiled, and read again holding every trace, when the whole dump's
// choice turns out to differ.

// OpenLLMetry's request span suffixes (@traceloop/instrumentation-mcp
// 0.27): "<tool>.tool" for a tools/call and "<method>.mcp" for every other
// request, client or server kind; its session span is the vocabulary's
// (rulefmt.OpenLLMetrySessionSpan, vocabulary_builtin.go).
const (
	openllmetryToolSuffix = ".tool"
	openllmetryMCPSuffix  = ".mcp"
)

// resEvidence is what one resource's spans show of each vocabulary: counts
// only, so evidence from any number of observations merges by adding.
type resEvidence struct {
	spans       int // every span of the resource
	pool        int // plugin.mcp.* spans: invoke, acquire, handshake, call_tool
	hitTrue     int // acquires with plugin.mcp.cache_hit = true
	bareInvokes int // invokes without an acquire child
	semconv     int // spans with mcp.method.name named {method} [target], any kind
	sentry      int // of those, Sentry's MCP server spans (sentry.origin)
	openllmetry int // OpenLLMetry's session, tool and request spans
	mastra      int // Mastra's MCP tool call spans (mastra.span.type)
}

func (e *resEvidence) add(o *resEvidence) {
	e.spans += o.spans
	e.pool += o.pool
	e.hitTrue += o.hitTrue
	e.bareInvokes += o.bareInvokes
	e.semconv += o.semconv
	e.openllmetry += o.openllmetry
	e.sentry += o.sentry
	e.mastra += o.mastra
}

// signature is one built-in vocabulary as detection sees it: whether a
// resource's evidence shows it, how many of its spans it reads, and the
// profile of the built-in Vocabulary (vocabulary_builtin.go) the measures
// read it with. The Vocabulary's Detect selectors say only which spans mark
// a writer; the counts, tiers and ties that choose between writers a
// resource shows are here.
type signature struct {
	Name       string
	tier       int // lower wins over any count
	shows      func(e *resEvidence) bool
	recognised func(e *resEvidence) int
	profile    rulefmt.Profile
}

// outranks reports whether s, recognising n spans, is chosen over best,
// recognising bestN, met earlier in BuiltinSignatures: within a tier the
// most spans win, ties going to the earlier entry. BuiltinSignatures is in
// tier order, so best is never of a higher tier than s, and an s of a
// higher tier never wins, whatever its count.
func (s signature) outranks(n int, best signature, bestN int) bool {
	return s.tier == best.tier && n > bestN
}

// BuiltinSignatures lists the built-in vocabularies in precedence order,
// lower tiers first (outranks relies on it): ties within a tier go to the
// earlier entry.
var BuiltinSignatures = []signature{
	{
		// Ours: an acquire on every call (a cache_hit=true acquire proves
		// hits are written), or invocations each with an acquire child.
		Name: report.VocabMcptrace, tier: 0, profile: rulefmt.ProfileDefault,
		shows:      func(e *resEvidence) bool { return e.pool > 0 && (e.hitTrue > 0 || e.bareInvokes == 0) },
		recognised: func(e *resEvidence) int { return e.pool + e.semconv },
	},
	{
		// The gateway's later generation: an acquire only on a miss, so
		// some invocations have none, and no acquire says cache_hit=true.
		Name: report.VocabAcquireOnMiss, tier: 0, profile: rulefmt.ProfileAcquireOnMiss,
		shows:      func(e *resEvidence) bool { return e.bareInvokes > 0 && e.hitTrue == 0 },
		recognised: func(e *resEvidence) int { return e.pool + e.semconv },
	},
	{
		// Sentry reads the spans semconv reads, in a resource where its MCP
		// wrapper marked some: listed first, it wins the tie.
		Name: report.VocabSentry, tier: 1, profile: rulefmt.ProfileSentry,
		shows:      func(e *resEvidence) bool { return e.sentry > 0 },
		recognised: func(e *resEvidence) int { return e.semconv },
	},
	{
		Name: report.VocabSemconv, tier: 1, profile: rulefmt.ProfileSemconv,
		shows:      func(e *resEvidence) bool { return e.semconv > 0 },
		recognised: func(e *resEvidence) int { return e.semconv },
	},
	{
		Name: report.VocabOpenLLMetry, tier: 1, profile: rulefmt.ProfileOpenLLMetry,
		shows:      func(e *resEvidence) bool { return e.openllmetry > 0 },
		recognised: func(e *resEvidence) int { return e.openllmetry },
	},
	{
		Name: report.VocabMastra, tier: 1, profile: rulefmt.ProfileMastra,
		shows:      func(e *resEvidence) bool { return e.mastra > 0 },
		recognised: func(e *resEvidence) int { return e.mastra },
	},
}

// signatureOf returns the built-in signature named name.
func signatureOf(name string) (signature, bool) {
	for _, s := range BuiltinSignatures {
		if s.Name == name {
			return s, true
		}
	}
	return signature{}, false
}

// vocabOfProfile names the vocabulary an explicit profile reads.
func vocabOfProfile(p rulefmt.Profile) string {
	switch p {
	case rulefmt.ProfileAcquireOnMiss:
		return report.VocabAcquireOnMiss
	case rulefmt.ProfileSemconv:
		return report.VocabSemconv
	case rulefmt.ProfileOpenLLMetry:
		return report.VocabOpenLLMetry
	case rulefmt.ProfileSentry:
		return report.VocabSentry
	case rulefmt.ProfileMastra:
		return report.VocabMastra
	}
	return report.VocabMcptrace
}

// Decide returns the vocabulary e shows, VocabNone when it shows none: the
// lowest tier among the signatures shown, then the most spans recognised,
// then the order of builtinSignatures.
func Decide(e *resEvidence) string {
	best, bestN, found := signature{}, 0, false
	for _, s := range BuiltinSignatures {
		if !s.shows(e) {
			continue
		}
		n := s.recognised(e)
		if !found || s.outranks(n, best, bestN) {
			best, bestN, found = s, n, true
		}
	}
	if !found {
		return report.VocabNone
	}
	return best.Name
}

// isOpenLLMetrySpan reports whether a span of the given name and kind is
// one of @traceloop/instrumentation-mcp's.
func isOpenLLMetrySpan(name string, kind uint8) bool {
	if name == rulefmt.OpenLLMetrySessionSpan {
		return true
	}
	rpc := kind == uint8(ptrace.SpanKindClient) || kind == uint8(ptrace.SpanKindServer)
	return rpc && len(name) > len(openllmetryToolSuffix) &&
		(strings.HasSuffix(name, openllmetryToolSuffix) || strings.HasSuffix(name, openllmetryMCPSuffix))
}

// Detection is the evidence of a set of traces: per resource, and the
// counts of the span names no vocabulary recognises.
type Detection struct {
	Res   map[string]*resEvidence
	names map[string]int
	// namesLeftOut counts the spans of names left out of names by
	// maxNameCounts.
	namesLeftOut int
}

// NewDetection returns an empty detection, which observations' detections
// merge into.
func NewDetection() *Detection { return newDetection(0) }

// newDetection returns an empty detection with room for the evidence of
// resources resources.
func newDetection(resources int) *Detection {
	return &Detection{Res: make(map[string]*resEvidence, resources), names: map[string]int{}}
}

// Detect returns the evidence of every trace of the finished index x,
// polling p (nil never stops) in its loop over the spans. It reads each
// span once: a stream or a speculative run detects every finalized batch
// of traces, so what Detect costs beyond its spans (a second pass, maps
// grown key by key) is paid hundreds of times a run.
func Detect(x *index.Index, p *poll.Poll) *Detection {
	x.Finish()
	m := newSpanMarks(x)
	perRes := make([]resEvidence, len(x.Resources))
	unrecognised := make([]int, len(x.Names))
	for _, i := range x.Order {
		if p.Stop() {
			break
		}
		s := x.Span(i)
		perRes[s.Res].spans++
		if !m.observe(x, s, perRes) {
			unrecognised[s.Name]++
		}
	}
	d := newDetection(len(perRes))
	for r := range perRes {
		if perRes[r].spans == 0 {
			continue
		}
		key := x.ResourceText(int32(r))
		if mine, ok := d.Res[key]; ok {
			mine.add(&perRes[r])
		} else {
			d.Res[key] = &perRes[r]
		}
	}
	d.addNames(x.Names, unrecognised)
	return d
}

// spanMarks are what detection looks for in one index: the ids of our
// span names and of the attribute keys that mark a writer, and which spans
// have had an acquire child read.
type spanMarks struct {
	invoke, acquire, handshake, call  int32
	kHit, kMethod, kOrigin, kType     uint16
	okHit, okMethod, okOrigin, okType bool
	acquireSeen                       []bool
}

// newSpanMarks looks up, once per index, what observe compares spans with.
func newSpanMarks(x *index.Index) *spanMarks {
	m := &spanMarks{
		invoke: x.NameID(spans.SpanInvoke), acquire: x.NameID(spans.SpanAcquire),
		handshake: x.NameID(spans.SpanHandshake), call: x.NameID(spans.SpanCallTool),
	}
	if m.acquire >= 0 {
		m.acquireSeen = make([]bool, x.NumSpans)
	}
	m.kHit, m.okHit = x.LookupKey(spans.AttrCacheHit)
	m.kMethod, m.okMethod = x.LookupKey(spans.AttrMethodName)
	m.kOrigin, m.okOrigin = x.LookupKey(rulefmt.SentryOriginAttr)
	m.kType, m.okType = x.LookupKey(rulefmt.MastraSpanTypeAttr)
	return m
}

// observe adds span s to the evidence of its resource (perRes, by
// resource index) and reports whether a vocabulary recognises it.
func (m *spanMarks) observe(x *index.Index, s *index.Span, perRes []resEvidence) bool {
	e := &perRes[s.Res]
	if m.observePool(x, s, perRes) {
		e.pool++
		return true
	}
	// Any kind: Shinzo's and Sentry's server spans are internal, named and
	// attributed as the conventions say; Sentry's also carry its origin.
	if v, ok := m.attr(x, s, m.kMethod, m.okMethod); ok && rulefmt.IsSemconvName(x.Names[s.Name], v) {
		e.semconv++
		if v, ok := m.attr(x, s, m.kOrigin, m.okOrigin); ok && (v == rulefmt.SentryMCPServerOrigin || v == rulefmt.SentryMCPNotificationOrigin) {
			e.sentry++
		}
		return true
	}
	if v, ok := m.attr(x, s, m.kType, m.okType); ok && v == rulefmt.MastraMCPToolCall {
		e.mastra++
		return true
	}
	if isOpenLLMetrySpan(x.Names[s.Name], s.Kind) {
		e.openllmetry++
		return true
	}
	return false
}

// observePool tells whether span s is one of our pool's spans, and
// counts what an invoke and an acquire show: an invoke is bare until its
// first acquire child is read, before or after it in x.Order.
func (m *spanMarks) observePool(x *index.Index, s *index.Span, perRes []resEvidence) bool {
	switch s.Name {
	case m.invoke:
		perRes[s.Res].bareInvokes++
	case m.acquire:
		if v, ok := m.attr(x, s, m.kHit, m.okHit); ok && v == "true" {
			perRes[s.Res].hitTrue++
		}
		// A parent is always a span of x.Order, so the invoke this takes
		// back is, or will be, counted.
		if p := s.Parent; p >= 0 && !m.acquireSeen[p] {
			m.acquireSeen[p] = true
			if up := x.Span(p); up.Name == m.invoke {
				perRes[up.Res].bareInvokes--
			}
		}
	case m.handshake, m.call:
	default:
		return false
	}
	return true
}

// attr returns span s's value of key k when the index has the key.
func (m *spanMarks) attr(x *index.Index, s *index.Span, k uint16, has bool) (string, bool) {
	if !has {
		return "", false
	}
	v, ok := index.AttrIn(x.AttrsOf(s), k)
	if !ok {
		return "", false
	}
	return x.Vals[v], true
}

// addNames adds the counts of names (per name id) to d, keeping at most
// maxNameCounts names: the most frequent.
func (d *Detection) addNames(names []string, counts []int) {
	ids := make([]int, 0, len(counts))
	for id, n := range counts {
		if n > 0 {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b int) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(names[a], names[b])) })
	for _, id := range ids {
		d.addName(names[id], counts[id])
	}
}

// addName adds n spans of name, or counts them as left out once d holds
// maxNameCounts other names.
func (d *Detection) addName(name string, n int) {
	if _, ok := d.names[name]; ok || len(d.names) < record.MaxNameCounts {
		d.names[name] += n
		return
	}
	d.namesLeftOut += n
}

// Merge adds o's evidence to d.
func (d *Detection) Merge(o *Detection) {
	if o == nil {
		return
	}
	for k, e := range o.Res {
		if mine, ok := d.Res[k]; ok {
			mine.add(e)
		} else {
			c := *e
			d.Res[k] = &c
		}
	}
	type nc struct {
		name string
		n    int
	}
	list := make([]nc, 0, len(o.names))
	for name, n := range o.names {
		list = append(list, nc{name, n})
	}
	slices.SortFunc(list, func(a, b nc) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.name, b.name)) })
	for _, c := range list {
		d.addName(c.name, c.n)
	}
	d.namesLeftOut += o.namesLeftOut
}

// Decisions returns the vocabulary of each resource of d: profile's when
// explicit, else the one its evidence shows; sticky, when not nil, holds
// decisions already made (a stream's), which win.
func (d *Detection) Decisions(profile rulefmt.Profile, sticky map[string]string) map[string]string {
	out := make(map[string]string, len(d.Res))
	for k, e := range d.Res {
		switch v, ok := sticky[k]; {
		case ok:
			out[k] = v
		case profile != rulefmt.ProfileAuto:
			out[k] = vocabOfProfile(profile)
		default:
			out[k] = Decide(e)
		}
	}
	return out
}

// EffectiveProfile returns the profile the measures read the whole dump
// with, given each resource's vocabulary: the measures read one vocabulary
// per observation until they read events per resource (the event model),
// so a mixed dump is read with the vocabulary its resources' spans show
// most of, our own tier first, as decide chooses within a resource.
// Nothing readable gives ProfileDefault, which reads nothing there.
func (d *Detection) EffectiveProfile(dec map[string]string) rulefmt.Profile {
	sum := map[string]*resEvidence{}
	for k, v := range dec {
		if sum[v] == nil {
			sum[v] = &resEvidence{}
		}
		sum[v].add(d.Res[k])
	}
	best, bestN, found := signature{}, 0, false
	for _, s := range BuiltinSignatures {
		e, ok := sum[s.Name]
		if !ok || s.profile == "" {
			continue
		}
		n := s.recognised(e)
		if !found || s.outranks(n, best, bestN) {
			best, bestN, found = s, n, true
		}
	}
	if !found {
		return rulefmt.ProfileDefault
	}
	return best.profile
}

// Bounds of a RecognitionReport's lists.
const (
	MaxUnrecognisedNames = 10
	MaxExampleResources  = 5
	// MaxRecognitionText is the most runes of a span name or a resource's
	// text the report keeps ("…" marks a cut): a hostile 1 MB name costs
	// the JSON no more than this.
	MaxRecognitionText = 256
)

// Report turns d and the resources' vocabularies into the report's
// recognition section and settings.vocabulary.
func (d *Detection) Report(dec map[string]string) (report.RecognitionReport, string) {
	r := report.RecognitionReport{Vocabularies: []report.VocabularyUse{}, UnrecognisedNames: []report.NameCount{}}
	uses := map[string]*report.VocabularyUse{}
	keys := make([]string, 0, len(d.Res))
	for k := range d.Res {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e, v := d.Res[k], dec[k]
		u := uses[v]
		if u == nil {
			u = &report.VocabularyUse{Vocabulary: v, ExampleResources: []string{}}
			uses[v] = u
		}
		u.Resources++
		u.Spans += e.spans
		if s, ok := signatureOf(v); ok {
			u.RecognisedSpans += s.recognised(e)
		}
		if len(u.ExampleResources) < MaxExampleResources {
			u.ExampleResources = append(u.ExampleResources, textfmt.ClipTo(k, MaxRecognitionText))
		}
	}
	read := []string{}
	for _, u := range uses {
		r.Vocabularies = append(r.Vocabularies, *u)
		r.RecognisedSpans += u.RecognisedSpans
		r.UnrecognisedSpans += u.Spans - u.RecognisedSpans
		if u.Vocabulary != report.VocabNone && u.RecognisedSpans > 0 {
			read = append(read, u.Vocabulary)
		}
	}
	slices.SortFunc(r.Vocabularies, func(a, b report.VocabularyUse) int {
		return cmp.Or(cmp.Compare(b.Spans, a.Spans), cmp.Compare(a.Vocabulary, b.Vocabulary))
	})
	for name, n := range d.names {
		r.UnrecognisedNames = append(r.UnrecognisedNames, report.NameCount{Name: name, Spans: n})
	}
	slices.SortFunc(r.UnrecognisedNames, func(a, b report.NameCount) int {
		return cmp.Or(cmp.Compare(b.Spans, a.Spans), cmp.Compare(a.Name, b.Name))
	})
	if len(r.UnrecognisedNames) > MaxUnrecognisedNames {
		r.UnrecognisedNames = r.UnrecognisedNames[:MaxUnrecognisedNames]
	}
	for i := range r.UnrecognisedNames {
		r.UnrecognisedNames[i].Name = textfmt.ClipTo(r.UnrecognisedNames[i].Name, MaxRecognitionText)
	}
	switch len(read) {
	case 0:
		return r, report.VocabNone
	case 1:
		return r, read[0]
	}
	return r, report.VocabMixed
}

// Resolve returns p, or for ProfileAuto the profile the measures read the
// traces of d with (effectiveProfile over every resource's decision).
func (d *Detection) Resolve(p rulefmt.Profile) rulefmt.Profile {
	if p != rulefmt.ProfileAuto {
		return p
	}
	return d.EffectiveProfile(d.Decisions(rulefmt.ProfileAuto, nil))
}

// Resolve returns c with ProfileAuto replaced by the profile x's spans
// show (a config's own vocabulary block is never replaced): what every
// reader of one finished index (the vocabulary stage, the rules) uses, so
// they all read the same vocabulary.
func Resolve(c rulefmt.Config, x *index.Index) rulefmt.Config {
	if c.Profile == rulefmt.ProfileAuto && c.Vocabulary == nil {
		c.Profile = Detect(x, nil).Resolve(rulefmt.ProfileAuto)
	}
	return c
}
