// Package events holds a dump's events as plain values: every acquire with
// the cause the analyzer's one miss attribution gave it and the session its
// lease used, every handshake, every call's times, and the acquires as a
// replay of the pool reads them with the settings their scope recorded.
//
// It is data only and links no analyzer: the HTML report (analyze/htmlreport)
// draws these values and the what-if replay (analyze/whatif) reads them, and
// neither links the engine or the span index that made them. Package analyze
// builds them (analyze.NewReportEvents, analyze.ReadAcquires,
// analyze.AnalyzeDumps with RunOptions.Events).
package events
