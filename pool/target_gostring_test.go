package pool_test

import (
	"fmt"
	"testing"

	"github.com/mcptrace/mcptrace/pool"
)

// TestATargetPrintedWithHashVShowsItsEndpointAndKey pins %#v of a Target:
// the endpoint as shown (its query's secret redacted) and the key, the
// two things a reader needs to tell targets apart, and nothing else.
func TestATargetPrintedWithHashVShowsItsEndpointAndKey(t *testing.T) {
	tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: "https://mcp.example.test/mcp?api_key=s3cret", ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("pool.Target{Endpoint: %q, Key: %q}", tg.Endpoint(), tg.Key())
	if got := fmt.Sprintf("%#v", tg); got != want || tg.Endpoint() == "" {
		t.Errorf("%%#v = %s, want %s", got, want)
	}
}
