package report

// Analysis is the one value the gate reads for a dump: the Report (the
// figures and the inputs) and, for each rule to judge, what its scopes hold
// (the counts, distinct values, sessions and offending spans the index
// gave). Everything in it is a plain value: judging it needs no index.
type Analysis struct {
	// Report is the analysis of the dump.
	Report *Report
	// Rules are the observations of the rules given, in their order.
	Rules []RuleObservation
}
