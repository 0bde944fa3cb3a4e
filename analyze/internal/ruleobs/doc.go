// Package ruleobs observes rules: it reads one finished index for what each
// rule's scopes hold (counts, distinct values, sessions per execution, lost
// sessions, offending spans) and returns plain values, report.RuleObservation.
// Judging them (verdicts, examples, texts) is the gate's (package
// analyze/gate), which never reads the index; a rule that reads a measure
// gets it from the vocabulary stage and the measures, never from a second
// notion of its own.
package ruleobs
