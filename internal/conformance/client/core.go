//lint:file-ignore SA1019 request-metadata declares sampling (deprecated from 2026-07-28 on, still served) to have its capability checked

package client

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/pool"
)

// The scenarios of the protocol's core: the handshake, tool calls,
// server-initiated requests, streams, per-request metadata, schemas and
// headers.
func init() {
	scenarios["initialize"] = scenario{run: listTools}
	scenarios["tools_call"] = scenario{run: addNumbers}
	// The scenario's server (TypeScript SDK 1.x) sends elicitation/create
	// untied to the call, so on the standalone SSE stream, which pooled
	// sessions go without unless asked.
	scenarios["elicitation-sep1034-client-defaults"] = scenario{
		options: elicitOptions(map[string]any{}, true), run: callOne("test_client_elicitation_defaults"),
	}
	scenarios["sse-retry"] = scenario{run: callOne("test_reconnection")}
	// With handlers of elicitation and sampling, so the runner sees both
	// capabilities in every request's _meta as well as roots.
	scenarios["request-metadata"] = scenario{options: everyCapability, run: acquireOnly}
	scenarios["json-schema-ref-no-deref"] = scenario{run: listTools}
	scenarios["json-schema-2020-12-preservation"] = scenario{run: echoSchema}
	scenarios["sep-2322-client-request-state"] = scenario{
		options: elicitOptions(map[string]any{"confirmed": true}, false), run: multiRound,
	}
	scenarios["http-standard-headers"] = scenario{run: everyVerb}
	scenarios["http-custom-headers"] = scenario{run: contextCalls}
	scenarios["http-invalid-tool-headers"] = scenario{run: callSurvivors}
}

// elicitOptions answers every elicitation with accept and content; the Go
// SDK fills in the requested schema's defaults for fields content omits
// (SEP-1034). standalone opens the standalone SSE stream.
func elicitOptions(content map[string]any, standalone bool) func(*env) (pool.Options, error) {
	return func(*env) (pool.Options, error) {
		return pool.Options{StandaloneSSE: standalone, ClientOptions: &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: content}, nil
			},
		}}, nil
	}
}

// everyCapability declares elicitation and sampling (with handlers that
// answer them) besides the SDK's default roots.
func everyCapability(*env) (pool.Options, error) {
	return pool.Options{ClientOptions: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "none", Role: "assistant", Content: &mcp.TextContent{Text: "no model here"}}, nil
		},
	}}, nil
}

// withLease runs f on one leased session and releases it with f's error, so
// a failure drops the session as the pool's contract says.
func withLease(ctx context.Context, p *pool.Pool, t *pool.Target, f func(pool.Lease) error) error {
	l, err := p.Acquire(ctx, t)
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	err = f(l)
	l.Release(err)
	return err
}

// acquireOnly makes the handshake and nothing else.
func acquireOnly(ctx context.Context, p *pool.Pool, t *pool.Target, _ *env) error {
	return withLease(ctx, p, t, func(pool.Lease) error { return nil })
}

// listTools makes the handshake and lists the tools on the leased session.
func listTools(ctx context.Context, p *pool.Pool, t *pool.Target, _ *env) error {
	return withLease(ctx, p, t, func(l pool.Lease) error {
		_, err := l.Session().ListTools(ctx, nil)
		return err
	})
}

// addNumbers calls add_numbers through the pool's one-call verb.
func addNumbers(ctx context.Context, p *pool.Pool, t *pool.Target, _ *env) error {
	return checkResult(p.CallTool(ctx, t, &mcp.CallToolParams{
		Name: "add_numbers", Arguments: map[string]any{"a": 5, "b": 3},
	}))
}

// callOne returns a scenario that calls one tool, with no arguments, in an
// execution.
func callOne(tool string) func(context.Context, *pool.Pool, *pool.Target, *env) error {
	return func(ctx context.Context, p *pool.Pool, t *pool.Target, _ *env) error {
		ex := p.Execution()
		defer ex.Close()
		return checkResult(ex.CallTool(ctx, t, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}))
	}
}

// checkResult turns an isError tool result into an error.
func checkResult(res *mcp.CallToolResult, err error) error {
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool answered isError: %v", res.Content)
	}
	return nil
}

// echoSchema lists the tools and sends the focal tool's input schema back
// through json_schema_echo, so the runner sees which JSON Schema 2020-12
// keywords survived the client's parse.
func echoSchema(ctx context.Context, p *pool.Pool, t *pool.Target, _ *env) error {
	return withLease(ctx, p, t, func(l pool.Lease) error {
		tools, err := l.Session().ListTools(ctx, nil)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == "json_schema_2020_12_tool" })
		if i < 0 {
			return errors.New(`tools/list has no "json_schema_2020_12_tool"`)
		}
		return checkResult(l.CallTool(ctx, &mcp.CallToolParams{
			Name: "json_schema_echo", Arguments: map[string]any{"schema": tools.Tools[i].InputSchema},
		}))
	})
}

// multiRound calls the SEP-2322 tools in one execution; the SDK's
// multi-round-trip support answers their input requests through the
// elicitation handler and echoes requestState. Some are meant to be
// refused by the client, so their errors are logged, not returned.
func multiRound(ctx context.Context, p *pool.Pool, t *pool.Target, _ *env) error {
	ex := p.Execution()
	defer ex.Close()
	for _, tool := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		if err := checkResult(ex.CallTool(ctx, t, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})); err != nil {
			logger.Printf("call %s: %v", tool, err)
		}
	}
	return nil
}

// everyVerb lists and uses one tool, one resource and one prompt, so the
// runner sees the Mcp-Method and Mcp-Name headers on every verb.
func everyVerb(ctx context.Context, p *pool.Pool, t *pool.Target, _ *env) error {
	return withLease(ctx, p, t, func(l pool.Lease) error {
		s := l.Session()
		tools, err := s.ListTools(ctx, nil)
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		if len(tools.Tools) > 0 {
			if _, err := l.CallTool(ctx, &mcp.CallToolParams{Name: tools.Tools[0].Name, Arguments: map[string]any{}}); err != nil {
				logger.Printf("call %s: %v", tools.Tools[0].Name, err)
			}
		}
		if res, err := s.ListResources(ctx, nil); err == nil && len(res.Resources) > 0 {
			_, _ = s.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.Resources[0].URI})
		}
		if pr, err := s.ListPrompts(ctx, nil); err == nil && len(pr.Prompts) > 0 {
			_, _ = s.GetPrompt(ctx, &mcp.GetPromptParams{Name: pr.Prompts[0].Name, Arguments: map[string]string{}})
		}
		return nil
	})
}

// contextCalls lists the tools (the SDK reads their x-mcp-header
// annotations from the list) and makes the calls the runner lists in the
// context's toolCalls, on the same leased session.
func contextCalls(ctx context.Context, p *pool.Pool, t *pool.Target, e *env) error {
	calls, err := toolCalls(e.context)
	if err != nil {
		return err
	}
	return withLease(ctx, p, t, func(l pool.Lease) error {
		if _, err := l.Session().ListTools(ctx, nil); err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		for _, c := range calls {
			if _, err := l.CallTool(ctx, c); err != nil {
				logger.Printf("call %s: %v", c.Name, err)
			}
		}
		return nil
	})
}

// callSurvivors lists the tools (the SDK drops those whose header
// annotations are invalid) and calls every one that is left.
func callSurvivors(ctx context.Context, p *pool.Pool, t *pool.Target, _ *env) error {
	return withLease(ctx, p, t, func(l pool.Lease) error {
		tools, err := l.Session().ListTools(ctx, nil)
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		for _, tool := range tools.Tools {
			if _, err := l.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: map[string]any{"region": "us-west1"}}); err != nil {
				logger.Printf("call %s: %v", tool.Name, err)
			}
		}
		return nil
	})
}

// toolCalls reads the context's toolCalls: [{"name": ..., "arguments": {...}}].
func toolCalls(c map[string]any) ([]*mcp.CallToolParams, error) {
	raw, ok := c["toolCalls"].([]any)
	if !ok {
		return nil, errors.New(`MCP_CONFORMANCE_CONTEXT has no "toolCalls" array`)
	}
	out := make([]*mcp.CallToolParams, 0, len(raw))
	for i, item := range raw {
		obj, ok := item.(map[string]any)
		name, _ := obj["name"].(string)
		if !ok || name == "" {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT toolCalls[%d]: expected an object with a name", i)
		}
		args, _ := obj["arguments"].(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		out = append(out, &mcp.CallToolParams{Name: name, Arguments: args})
	}
	return out, nil
}
