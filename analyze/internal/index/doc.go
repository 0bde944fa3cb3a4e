// Package index is the analyzer's span index: what the measures need of a
// dump's spans and nothing more, in a compact form (about 80 bytes a span:
// names and attribute values interned, trace ids stored once per trace,
// attributes kept only when a vocabulary, a configuration or a rule reads
// them).
//
// The readers (analyze/ingest) push pdata batches or the projection
// decoders' compact ones into an [Index], which is their sink; [Index.Finish]
// groups the spans by trace, drops duplicate copies and links each span to
// its parent, breaking parent cycles. The engine (analyze/internal/engine)
// reads it by span number: [Index.Span], attribute values by key id
// ([Index.AttrVal], [Index.ResAttrVal]), the span tree's subtrees and
// ancestors ([Index.Tree]).
//
// It is internal to package analyze: no caller outside the analyzer holds
// an index, only the opaque analyze.Dump around one.
package index
