package rulefmt

import (
	"regexp"

	"github.com/mcptrace/mcptrace/spans"
)

// The built-in vocabularies, one value each: what `--profile NAME` and a
// connector's `profile:` read (BuiltinVocabulary hands out copies).
// docs/vocabularies.md says, for each, what it reads and what it cannot
// know.

// poolAttributes are the attribute keys of this pool and the production
// gateway (spans/vocab.go), which follow the OpenTelemetry MCP conventions
// where they exist.
var poolAttributes = VocabularyAttributes{
	Hit:        spans.AttrCacheHit,
	Key:        spans.AttrCacheKey,
	Attempt:    spans.AttrAttempt,
	MissReason: spans.AttrMissReason,
	PoolID:     spans.AttrPoolID,
	Tool:       spans.AttrGenAIToolName,
	Revision:   spans.AttrProtocolVersion,
	ErrorType:  spans.AttrErrorType,
	ToolError:  spans.ErrTypeToolError,
	// ServerAddress and ServerPort stay empty: the cache key is the key.
}

// poolNames are the span names of this pool's vocabulary, as reports list
// them.
var poolNames = []string{spans.SpanInvoke, spans.SpanAcquire, spans.SpanHandshake, spans.SpanCallTool}

// semconvCall matches a span named by the OpenTelemetry MCP conventions for
// tools/call: "tools/call" or "tools/call {target}".
var semconvCall = regexp.MustCompile(`^` + regexp.QuoteMeta(spans.MethodToolsCall) + `( |$)`)

// semconvHandshake matches the conventions' spans of the requests that open
// a session: initialize, and 2026-07-28's server/discover, by span name or
// by mcp.method.name.
var (
	semconvHandshake       = regexp.MustCompile(`^(initialize|server/discover)( |$)`)
	semconvHandshakeMethod = regexp.MustCompile(`^(initialize|server/discover)$`)
)

// vocabularyMcptrace is this pool's vocabulary (and the production
// gateway's first generation): an acquire span on every call, hit or miss,
// with plugin.mcp.cache_hit (or a handshake child on a miss), under a
// plugin.mcp.invoke span. Its calls are plugin.mcp.client.call_tool spans,
// or, with the pool's Options.SemconvCallSpans, client spans named by the
// conventions (tools/call <tool>).
var vocabularyMcptrace = Vocabulary{
	Name:        string(ProfileMcptrace),
	Calls:       []Selector{{Name: spans.SpanCallTool}, {NameRegex: semconvCall, Kind: "client"}},
	Invocations: []Selector{{Name: spans.SpanInvoke}},
	Acquires:    []Selector{{Name: spans.SpanAcquire}},
	Handshakes:  []Selector{{Name: spans.SpanHandshake}},
	Attributes:  poolAttributes,
	Session:     SessionSource{Attribute: spans.AttrSessionID},
	Detect:      []Selector{{Name: spans.SpanAcquire}, {Name: spans.SpanInvoke}},
	Names:       poolNames,
	// The pool is the client, and its acquire spans carry its settings.
	Capabilities: Capabilities{Side: SideClient, Parenting: ParentCaller, PoolSettings: true},
}

// vocabularyAcquireOnMiss is the production gateway's later generation: the
// same spans, but the acquire span only on a miss, so a hit is an
// invocation without an acquire child (seen only by the absence).
var vocabularyAcquireOnMiss = func() Vocabulary {
	v := vocabularyMcptrace
	v.Name = string(ProfileAcquireOnMiss)
	v.AcquireOnMiss = true
	return v
}()

// vocabularySemconv reads spans written by the OpenTelemetry MCP semantic
// conventions (v1.39, client or server kind): calls named
// `{mcp.method.name} {target}` or carrying mcp.method.name tools/call, the
// session in mcp.session.id, the server in server.address and server.port.
// There are no pool spans: a call on a session not seen before is the miss
// that opened it, later calls on it hits. A call without mcp.session.id
// (always so on 2026-07-28, which has no sessions) is no acquire. The
// initialize and server/discover spans, where the writer emits them, are
// handshakes: their latency is the cold start (the count stays the
// sessions' first calls, which every writer shows).
var vocabularySemconv = Vocabulary{
	Name: string(ProfileSemconv),
	Calls: []Selector{
		{NameRegex: semconvCall},
		{Attributes: []AttrMatch{{Key: spans.AttrMethodName, Op: OpEquals, Value: spans.MethodToolsCall}}},
	},
	Attributes: VocabularyAttributes{
		PoolID:        spans.AttrPoolID,
		Tool:          spans.AttrGenAIToolName,
		Revision:      spans.AttrProtocolVersion,
		ErrorType:     spans.AttrErrorType,
		ToolError:     spans.ErrTypeToolError,
		ServerAddress: spans.AttrServerAddress,
		ServerPort:    spans.AttrServerPort,
		ClientAddress: spans.AttrClientAddress,
	},
	// Client or server kind: the side is what the calls show (a
	// server-side call carries client.address), resolved per analysis.
	Capabilities: Capabilities{Side: SideUnknown, Parenting: ParentCaller},
	Handshakes: []Selector{
		{NameRegex: semconvHandshake},
		{Attributes: []AttrMatch{{Key: spans.AttrMethodName, Op: OpRegex, Regex: semconvHandshakeMethod}}},
	},
	Session: SessionSource{Attribute: spans.AttrSessionID},
	Detect: []Selector{
		{NameRegex: semconvCall},
		{Attributes: []AttrMatch{{Key: spans.AttrMethodName, Op: OpEquals, Value: spans.MethodToolsCall}}},
	},
	Names: append([]string{spans.MethodToolsCall + " <tool>"}, poolNames...),
}

// OpenLLMetry's span names (@traceloop/instrumentation-mcp): a client
// session span opened by Client.connect and ended by close, a span per
// request named `{tool}.tool` for tools/call and `{method}.mcp` otherwise,
// each parented to the session span.
const (
	// OpenLLMetrySessionSpan is the client session span: the enclosing span
	// that gives a call its session, and what detection looks for.
	OpenLLMetrySessionSpan = "mcp.client.session"
	openllmetryInitialize  = "initialize.mcp"
)

// vocabularyOpenLLMetry reads @traceloop/instrumentation-mcp: tool calls are
// client spans named `{tool}.tool`, parented to a long-lived
// mcp.client.session span, which is the only session identity there is (no
// mcp.session.id, no server address, no pool spans). A session's first call
// is the miss that opened it. A tool's isError answer sets status error like
// a transport failure, so a failed call cannot be told from a tool's error.
// Since calls hang under the session span, not under the execution that
// made them, an execution's calls are in the first execution's trace.
var vocabularyOpenLLMetry = Vocabulary{
	Name:       string(ProfileOpenLLMetry),
	Calls:      []Selector{{NameRegex: regexp.MustCompile(`\.tool$`), Kind: "client"}},
	Handshakes: []Selector{{Name: openllmetryInitialize}},
	Session:    SessionSource{Enclosing: &Selector{Name: OpenLLMetrySessionSpan}},
	Attributes: VocabularyAttributes{PoolID: spans.AttrPoolID},
	Detect:     []Selector{{Name: OpenLLMetrySessionSpan}},
	Names:      []string{"<tool>.tool", OpenLLMetrySessionSpan, openllmetryInitialize},
	// A client instrumentation that parents request spans to its session
	// span, not to the caller's context.
	Capabilities: Capabilities{Side: SideClient, Parenting: ParentSession},
}

// builtinVocabularies maps every name --profile takes to its vocabulary;
// default is mcptrace's old name, kept for the flags, configs and tests
// that pass it.
var builtinVocabularies = map[Profile]*Vocabulary{
	ProfileDefault:       &vocabularyMcptrace,
	ProfileMcptrace:      &vocabularyMcptrace,
	ProfileAcquireOnMiss: &vocabularyAcquireOnMiss,
	ProfileSemconv:       &vocabularySemconv,
	ProfileOpenLLMetry:   &vocabularyOpenLLMetry,
	ProfileSentry:        &vocabularySentry, // vocabulary_thirdparty.go
	ProfileMastra:        &vocabularyMastra,
}

// BuiltinVocabulary returns the built-in vocabulary named p (default is an
// alias of mcptrace), and false for a name it does not know. The value and
// its role lists are copies (the built-ins themselves are unexported, so no
// caller can change what an analysis reads); treat the selectors in them as
// read-only.
func BuiltinVocabulary(p Profile) (Vocabulary, bool) {
	if p == "" {
		p = ProfileDefault
	}
	v, ok := builtinVocabularies[p]
	if !ok {
		return Vocabulary{}, false
	}
	return v.clone(), true
}

// BuiltinVocabularies returns copies of the built-in vocabularies in
// documentation order, each once (default, mcptrace's alias, is not
// listed): what detection tries, by their Detect selectors.
func BuiltinVocabularies() []Vocabulary {
	out := make([]Vocabulary, 0, len(Profiles))
	for _, p := range Profiles {
		v, ok := builtinVocabularies[p]
		if p == ProfileDefault || !ok { // an alias, or auto, which picks one of the others
			continue
		}
		out = append(out, v.clone())
	}
	return out
}
