package conformance

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a worker or a runner's process wait
// outlives its test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
