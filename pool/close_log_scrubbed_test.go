package pool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

// TestAFailedCloseOfAnIdleSessionLogsNoSecret pins that the debug log of
// an idle session whose close failed (its server gone, so the DELETE's
// error names the endpoint's full URL) carries the endpoint redacted: the
// secret in its query never reaches the log.
func TestAFailedCloseOfAnIdleSessionLogsNoSecret(t *testing.T) {
	const secret = "s3cret-of-the-close"
	h := newHarness(t, harnessOpts{})
	tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: h.srv.URL() + "?api_key=" + secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.pool.CallTool(context.Background(), tg, &mcp.CallToolParams{Name: fixtures.ToolEcho}); err != nil {
		t.Fatal(err)
	}
	_ = h.srv.Close() // the idle session's DELETE now fails to connect
	_ = h.pool.Close()
	logs := h.logs.String()
	if !strings.Contains(logs, "mcp pool: close session") {
		t.Fatalf("no failed close logged; logs:\n%s", logs)
	}
	if strings.Contains(logs, secret) {
		t.Errorf("the log of a failed close holds the endpoint's secret:\n%s", logs)
	}
}
