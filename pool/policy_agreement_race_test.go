//go:build race

package pool_test

// agreeCases under the race detector, which slows every dial tenfold: the
// plain run holds the property's 200, -short the same 40.
const agreeCases = shortAgreeCases
