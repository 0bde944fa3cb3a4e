package mcptraceconnector

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine running (the
// sweep goroutine must stop on Shutdown).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
