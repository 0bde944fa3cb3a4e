package fleetdash_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if the connector, the exporter or the
// Prometheus client leave a goroutine running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
