package report

// ProtocolReport is the pool's headline figures for the spans that spoke one
// MCP protocol revision (mcp.protocol.version on the acquire, handshake and
// call spans). MCP 2026-07-28 has no protocol sessions, so its executions are
// never judged by the session rules; their cost is the cold start (the
// discover round trip a miss pays), reported here instead.
type ProtocolReport struct {
	// ProtocolVersion is the revision; "" groups spans without one (a pool
	// that does not record it).
	ProtocolVersion string `json:"protocol_version"`
	// Sessionless is true for a revision without protocol sessions
	// (2026-07-28 or later), or when no call of the revision carried an
	// mcp.session.id.
	Sessionless bool `json:"sessionless"`
	// Traces counts the traces holding a call of this revision; Calls the
	// tool calls.
	Traces int `json:"traces"`
	Calls  int `json:"calls"`
	// Acquires, Hits and Misses count acquire spans of the revision, and
	// HitRate is hits / acquires (null without acquires).
	Acquires int      `json:"acquires"`
	Hits     int      `json:"hits"`
	Misses   int      `json:"misses"`
	HitRate  *float64 `json:"hit_rate"`
	// ColdStart is the duration of the revision's handshake spans (a
	// handshake under an acquire counts with the acquire's revision): the
	// cost of a miss.
	ColdStart Percentiles `json:"cold_start_ms"`
}
