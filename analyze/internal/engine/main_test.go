package engine

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: the
// readers decode in parallel and must stop their workers on every path.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
