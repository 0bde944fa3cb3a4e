package pool

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestARecycledCallBufferKeepsNothingOfTheCaller pins that the buffer a
// call lends the SDK is emptied of the caller's params when the call
// ends, so nothing of them (a tool's arguments may hold secrets) outlives
// the call; a buffer with a large _meta is emptied too, though it is not
// kept for reuse.
func TestARecycledCallBufferKeepsNothingOfTheCaller(t *testing.T) {
	b := &callBuf{meta: make(mcp.Meta)}
	for i := range maxRecycledMeta + 1 { // too large to recycle: b stays this test's own
		b.meta[fmt.Sprint("k", i)] = i
	}
	b.params = mcp.CallToolParams{Name: "tool", Arguments: map[string]any{"password": "hunter2"}, Meta: b.meta}
	putCallBuf(b)
	if b.params.Name != "" || b.params.Arguments != nil || b.params.Meta != nil {
		t.Errorf("params after the call: %+v, want empty", b.params)
	}
}
