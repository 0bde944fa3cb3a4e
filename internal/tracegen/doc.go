// Package tracegen builds deterministic trace dumps for mcptrace's tests,
// golden files and benchmarks, and writes them in every format the analyzer
// reads.
//
// Each scenario ([Scenarios]) is one of the seed stories told in spans of the
// vocabulary in package spans: pool scopes with their cold misses, TTL and
// redial misses, an unexplained miss, a concurrent miss, the per-call dial
// regression and its pooled fix, the cold-init organizations reads, and the
// other vocabulary profiles. A scenario always builds the same spans (fixed
// random seed, fixed base time, times in whole microseconds so Jaeger's
// microsecond clock round-trips them exactly), and its doc comment states the
// figures an analyzer must find in it.
//
// The encoders ([Encodings]) write a [ptrace.Traces] as OTLP JSON lines, one
// OTLP JSON document, the Collector file exporter's length-prefixed protobuf
// (plain and with per-record zstd frames), gzip and zstd streams, Jaeger's
// /api/traces JSON and both shapes of Grafana Tempo's trace JSON.
//
// The dumps under testdata/traces are written by [Files] through the
// generator in ./gen, never by hand (its subdirectories hold dumps other
// writers made: corpus/, third-party instrumentations, docs/corpus.md;
// seeded/, the real pool through the seeded demo, its README.md):
//
//	go generate ./internal/tracegen
//
// A test re-runs the generator in memory and fails when a committed dump
// differs from what it would write.
package tracegen

//go:generate go run ./gen -out ../../testdata/traces
