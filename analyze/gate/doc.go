// Package gate is mcptrace's CI gate over an analysis: the verdict of a
// check (rules judged, regressions against a baseline, the exit code) and
// its reports for people and for CI (table, JSON mcptrace.check/v1,
// Markdown, JUnit XML, GitHub annotations), baselines, and `mcptrace diff`.
//
// The gate reads the analysis value, never the span index: the
// [report.Analysis] of a dump, its [report.Report] and what each rule's
// scopes hold ([report.RuleObservation]); [Evaluate] turns those into
// verdicts, examples and texts. Which figures it compares, and in which
// direction a change is a regression, come from the table of measures
// ([report.Measures]), so a new measure needs no edit here.
//
// Of ours it imports analyze/report, analyze/rulefmt (rules, tolerances),
// analyze/ingest (only to name a bad input's file and line, ReadError) and
// spans; never analyze, so the compiler keeps it off the engine and the
// index (internal/archtest checks the arrow against docs/architecture.md).
package gate
