// Package htmlreport draws the self-contained HTML report of `mcptrace
// analyze --format html` and `mcptrace check --html`: the headline tiles,
// the miss causes, latency distributions, a session timeline per pool scope
// and the offenders, each linked to its trace.
//
// It sits on top of the analyzer: it takes the analysis value
// ([report.Report], with a check's [report.HTMLCheck] when there is one) and
// the dump's events ([events.ReportEvents], built by analyze from its
// index), and never the index itself, nor does it run a measure again: every
// figure it shows is the report's or the events'. [New] computes the page's
// data (its JSON, schema [Schema], is what the golden tests pin), bounded on
// long dumps as [Sampling] says; [Report.Render] writes the page, with its
// style, script and data inline and a Content-Security-Policy that forbids
// every fetch. Text from a dump is drawn as text, never markup, and shown
// with its controls escaped.
package htmlreport
