package report

import "github.com/mcptrace/mcptrace/spans"

// PoolReport is the pool measure: how often acquires reused an idle session,
// how close the misses are to the cold-start floor, and why each miss
// happened.
type PoolReport struct {
	// Acquires counts acquires: acquire spans, plus under acquire-on-miss the
	// invocations without one (hits), or for a vocabulary without pool spans
	// (semconv, openllmetry) the tool calls with a session identity.
	Acquires int `json:"acquires"`
	// Hits and Misses split Acquires.
	Hits   int `json:"hits"`
	Misses int `json:"misses"`
	// HitRate is Hits / Acquires; null without acquires.
	HitRate *float64 `json:"hit_rate"`
	// Handshakes counts new sessions: handshake spans (without pool spans:
	// distinct sessions, each one's first call).
	Handshakes int `json:"handshakes"`
	// AcquiresPerHandshake is Acquires / Handshakes; null without handshakes.
	AcquiresPerHandshake *float64 `json:"acquires_per_handshake"`
	// Scopes counts distinct pool scopes; Keys distinct (scope, key) pairs.
	Scopes int `json:"scopes"`
	Keys   int `json:"keys"`
	// ColdStartFloor is Keys / Acquires: the miss rate no pool can beat,
	// since the first acquire of each pair must dial. Null without acquires.
	ColdStartFloor *float64 `json:"cold_start_floor"`
	// ExcessMisses is Misses - Keys, at least 0: misses above the floor.
	ExcessMisses int `json:"excess_misses"`
	// UnexplainedMisses counts the misses of no explained cause
	// (Unexplained of MissReasons: unexplained and evicted).
	UnexplainedMisses int `json:"unexplained_misses"`
	// MissReasons counts misses by attributed cause, one key per entry of
	// spans.MissReasons (cold, concurrent, ttl, redial, after_failure,
	// health_check, evicted, unexplained); every key is always present,
	// each a figure of its own (MissCauseFigure: null in the JSON where
	// it is not measurable).
	MissReasons map[string]int `json:"miss_reasons"`
	// UnexplainedExamples are trace ids holding an unexplained miss, sorted,
	// at most MaxExamples; null in the JSON where the unexplained misses
	// are not measurable (breakdownTable).
	UnexplainedExamples []string `json:"unexplained_examples"`
	// Latency holds duration percentiles in milliseconds.
	Latency LatencyReport `json:"latency_ms"`
	// ByScope breaks the figures down per pool scope, sorted by scope.
	ByScope []ScopeReport `json:"by_scope"`
}

// ScopeReport is the pool measure for one pool scope.
type ScopeReport struct {
	// Scope is the scope's name; "" for acquires nothing names.
	Scope          string         `json:"scope"`
	Acquires       int            `json:"acquires"`
	Hits           int            `json:"hits"`
	Misses         int            `json:"misses"`
	HitRate        *float64       `json:"hit_rate"`
	Handshakes     int            `json:"handshakes"`
	Keys           int            `json:"keys"`
	ColdStartFloor *float64       `json:"cold_start_floor"`
	ExcessMisses   int            `json:"excess_misses"`
	MissReasons    map[string]int `json:"miss_reasons"`
	// Settings is recorded or assumed: whose idle settings the scope's
	// misses were attributed under; IdleTTLSeconds is their idle TTL.
	Settings       string  `json:"settings"`
	IdleTTLSeconds float64 `json:"idle_ttl_seconds"`
}

// MaxExamples caps every list of example trace ids in a report.
const MaxExamples = 10

// Unexplained counts the misses among reasons (a MissReasons map) whose
// cause is none of spans.ExplainedMissReasons: unexplained, and evicted
// (the idle caps closed a session its key needed again). The one count of
// them: the unexplained_misses measure, the tables, the HTML report and
// the demo all ask it.
func Unexplained(reasons map[string]int) int {
	n := 0
	for r, c := range reasons {
		if !spans.IsExplainedMiss(r) {
			n += c
		}
	}
	return n
}
