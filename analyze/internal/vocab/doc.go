// Package vocab is the vocabulary stage: it recognises which writer's
// vocabulary an index's spans speak (Detect, Resolve: our pool, the MCP
// semantic conventions, OpenLLMetry, Sentry, Mastra or a user's own
// vocabulary block), compiles that vocabulary against the index (Compile)
// and turns the spans into the MCP events of package record (Stage). It is
// the only code that reads span names and attribute keys for the measures,
// so a new writer is a new vocabulary and no measure changes.
package vocab
