// Package selector compiles a rule's or a vocabulary's span selector
// (rulefmt.Selector) against one finished index, so that matching a span
// costs a few table lookups instead of string comparisons. The vocabulary
// stage, the measures and the rule observation all match spans through it,
// and none of them re-implements what a selector means.
package selector
