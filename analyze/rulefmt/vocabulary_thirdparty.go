package rulefmt

import "github.com/mcptrace/mcptrace/spans"

// Built-in vocabularies of third-party writers that name their spans by
// the conventions but read differently from semconv: each says, in
// docs/vocabularies.md, what it reads and what it cannot know. Their
// shapes are pinned by the corpus (docs/corpus.md).

// The profiles of the writers in this file (config.go lists them).
const (
	// ProfileSentry: @sentry/node's wrapMcpServerWithSentry, server side.
	ProfileSentry Profile = "sentry"
	// ProfileMastra: @mastra/mcp's client tool calls, exported by
	// @mastra/otel-exporter.
	ProfileMastra Profile = "mastra"
)

// Attribute keys and values these writers mark their spans with.
const (
	// attrGenAIOperation is the GenAI conventions' operation name; an
	// agent run (an execution's root) is invoke_agent.
	attrGenAIOperation = "gen_ai.operation.name"
	opInvokeAgent      = "invoke_agent"
	// SentryOriginAttr holding SentryMCPServerOrigin (a request span) or
	// SentryMCPNotificationOrigin (a notification's) marks a span written
	// by Sentry's MCP server wrapper: what detection looks for.
	SentryOriginAttr            = "sentry.origin"
	SentryMCPServerOrigin       = "auto.function.mcp_server"
	SentryMCPNotificationOrigin = "auto.mcp.notification"
	// MastraSpanTypeAttr and MastraMCPToolCall mark Mastra's MCP tool call
	// span (mastra.span.type, the exporter's copy of its span type): what
	// detection looks for.
	MastraSpanTypeAttr = "mastra.span.type"
	MastraMCPToolCall  = "mcp_tool_call"
)

// invokeAgentRoot selects an agent run, the GenAI conventions' execution:
// both writers' executions are invoke_agent spans (Mastra's own agent run;
// the application's, around a server Sentry instruments).
var invokeAgentRoot = Selector{Attributes: []AttrMatch{{Key: attrGenAIOperation, Op: OpEquals, Value: opInvokeAgent}}}

// methodIs selects the spans whose mcp.method.name is method.
func methodIs(method string) Selector {
	return Selector{Attributes: []AttrMatch{{Key: spans.AttrMethodName, Op: OpEquals, Value: method}}}
}

// vocabularySentry reads @sentry/node's wrapMcpServerWithSentry: one
// internal-kind span per JSON-RPC message the server's handler received
// (`tools/call <tool>`, `initialize`), with mcp.method.name,
// mcp.tool.name and mcp.session.id, the real Mcp-Session-Id. It is server
// side: a call refused before the handler (404 to a forgotten session) is
// only Sentry's HTTP server span, which does not say it was a tools/call,
// so acquires and hits are lower bounds. The MCP spans sit under that
// HTTP span, never under the client's execution (nothing carries its
// context to the server): executions are the invoke_agent roots, and a
// call under none belongs to no execution.
var vocabularySentry = Vocabulary{
	Name:       string(ProfileSentry),
	Executions: &invokeAgentRoot,
	Calls:      []Selector{methodIs(spans.MethodToolsCall)},
	Handshakes: []Selector{methodIs("initialize")},
	Attributes: VocabularyAttributes{
		PoolID:    spans.AttrPoolID,
		Tool:      spans.AttrToolName,
		Revision:  spans.AttrProtocolVersion,
		ErrorType: spans.AttrErrorType,
		ToolError: spans.ErrTypeToolError,
	},
	Session: SessionSource{Attribute: spans.AttrSessionID},
	Detect: []Selector{
		{Attributes: []AttrMatch{{Key: SentryOriginAttr, Op: OpEquals, Value: SentryMCPServerOrigin}}},
		{Attributes: []AttrMatch{{Key: SentryOriginAttr, Op: OpEquals, Value: SentryMCPNotificationOrigin}}},
	},
	Names: []string{spans.MethodToolsCall + " <tool>", "initialize"},
	// The server: a call refused before the handler never reaches it.
	Capabilities: Capabilities{Side: SideServer, Parenting: ParentCaller},
}

// vocabularyMastra reads @mastra/mcp's tool calls as @mastra/otel-exporter
// writes them: client spans `execute_tool <server>_<tool>` with
// mastra.span.type mcp_tool_call, gen_ai.tool.name and server.address (the
// client's key of the server), under Mastra's invoke_agent root. No span
// carries a session identity and the handshake is not traced, so there is
// no acquire, hit or miss to read and sessions per execution are not
// measurable; the target is known (server.address).
var vocabularyMastra = Vocabulary{
	Name:       string(ProfileMastra),
	Executions: &invokeAgentRoot,
	Calls:      []Selector{{Attributes: []AttrMatch{{Key: MastraSpanTypeAttr, Op: OpEquals, Value: MastraMCPToolCall}}, Kind: "client"}},
	Attributes: VocabularyAttributes{
		PoolID:        spans.AttrPoolID,
		Tool:          spans.AttrGenAIToolName,
		ErrorType:     spans.AttrErrorType,
		ServerAddress: spans.AttrServerAddress,
	},
	Detect: []Selector{{Attributes: []AttrMatch{{Key: MastraSpanTypeAttr, Op: OpEquals, Value: MastraMCPToolCall}}}},
	Names:  []string{"execute_tool <tool>", "invoke_agent <agent>"},
	// The client, retrying a call it takes for a lost connection inside
	// the same span.
	Capabilities: Capabilities{Side: SideClient, Parenting: ParentCaller, RetriesInOneSpan: true},
}
