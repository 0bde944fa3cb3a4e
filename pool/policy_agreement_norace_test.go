//go:build !race

package pool_test

// agreeCases is how many random cases the agreement property runs.
const agreeCases = 200
