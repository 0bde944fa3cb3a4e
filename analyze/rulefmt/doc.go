// Package rulefmt parses what a user writes to tell mcptrace what to read
// and what to check, and knows nothing of evaluating it: the analysis
// configuration ([Config], its reads-per-request measures), span selectors
// as parsed values ([Selector]), the CI gate's rules and tolerances
// ([GateConfig], [Rule], [Tolerances]), the built-in rules
// ([BuiltinRules]), the vocabularies that say who wrote the spans
// ([Vocabulary], the built-ins, the vocabulary: YAML block), and how a
// selector reads as a Grafana Tempo TraceQL query.
//
// Like Prometheus's model/rulefmt beside its rules and promql, it sits
// below the engine: it imports spans (and analyze's internal text
// helpers) only, never the span index, so a configuration is checked,
// with every mistake of a file at once and each with its line and column,
// before any trace is read. [IndexOptions] names the attributes a
// configuration reads, for the engine's index to keep.
//
// # Mistakes
//
// The parsers return [ConfigErrors], every mistake of a file in file order,
// each a [*ConfigError] with file, line and column: an unknown name carries
// every valid name (Valid) and the nearest ([ConfigError.DidYouMean]), an
// empty file wraps [ErrEmptyConfig]. A parser goes on past a mistake but
// never judges a part it refused (a rule whose scope was refused is not
// also told its measure needs scope: dump), so each mistake is reported
// once. Rendering is bounded (the first 20, then how many more) and
// escaped (nothing from the file reaches a terminal as a control
// character); the work is linear in the file.
package rulefmt
