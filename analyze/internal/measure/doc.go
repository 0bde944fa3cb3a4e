// Package measure computes the analyzer's figures from the MCP events of
// package record: the pair stage that attributes every miss to its cause
// by replaying each pool scope through the pool's own idle core, hit rates
// and miss causes per scope, latency sketches and their percentiles,
// sessions per execution, reads per request, the per-revision figures and
// the evidence of which side wrote the spans. It reads events, never the
// spans' attribute names, so a figure means the same whoever wrote the
// trace; the engine decides what to measure and merges the results.
package measure
