// The corpus's gateway under Mastra (@mastra/mcp's MCPClient, tools run by a
// @mastra/core Agent, spans through @mastra/otel-exporter): the same tool
// calls and modes as gateway.mjs, as a Mastra application makes them.
//
// An execution is one Agent.generate: Mastra's own agent run span
// (exported as "invoke_agent gateway") is its root. The agent's model is a
// scripted stand-in (an AI SDK v2 LanguageModel: the interface Mastra
// runs models through) that asks for the execution's three tool calls in
// order, one per step, then answers; nothing leaves the machine. The
// tools are the MCPClient's (listTools: "corpus_<tool>"), so every call
// goes through Mastra's MCP tool path and its mcp_tool_call span.
//
//   pooled    one MCPClient: its session is opened by the first
//             execution's listTools and reused by every later call,
//             disconnected after the last execution;
//   per-call  after every tool call the gateway has Mastra reconnect the
//             server (MCPClient.reconnectServer: the session is closed and
//             a new one opened at once), so each call runs on a session of
//             its own; the one opened after the last call is never used;
//   forget    pooled; the server forgets the session after the first call
//             of the forget execution. The next call is refused 404; Mastra
//             does not retry it (its isReconnectableMCPError looks for
//             "http 404" in the message, which the SDK 2.0 client's error
//             does not carry), and the agent gets the error as the tool's
//             result. The gateway then has Mastra reconnect
//             (reconnectServer: a new session) and the model asks for the
//             call again, once: a second tool span.
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { MCPClient } from '@mastra/mcp';

/** SERVER_KEY is the MCPClient's key of the corpus server: Mastra's server.address. */
export const SERVER_KEY = 'corpus';
const AGENT = 'gateway';

// SESSION_GONE is how a call refused 404 (the server forgot the session)
// reaches the agent: Mastra turns the SDK's error into the tool result's
// error text, the server's JSON-RPC error message.
const SESSION_GONE = /Session not found/;

// toolResults lists the tool results in a model prompt, in order.
function toolResults(prompt) {
  return prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content.filter((c) => c.type === 'tool-result'));
}

// scriptedModel asks, step by step, for the calls of the execution
// running (current().calls), then answers with text. The next call is the
// first without a successful result; a result refused because the session
// is gone is asked for again, once, after current().onStep has had the
// gateway reconnect. Any other failed result fails the run.
function scriptedModel(current) {
  const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
  return {
    specificationVersion: 'v2',
    provider: 'mcptrace-corpus',
    modelId: 'scripted',
    supportedUrls: {},
    async doGenerate(opts) {
      const cur = current();
      const results = toolResults(opts.prompt);
      const failed = results.filter((r) => r.output.type === 'error-text' || r.output.type === 'error-json');
      const refused = failed.filter((r) => SESSION_GONE.test(JSON.stringify(r.output.value)));
      if (failed.length > refused.length || refused.length > 1) throw new Error(`mastra gateway: execution ${cur.e}: tool failed: ${JSON.stringify(failed.map((r) => r.output))}`);
      const gone = refused.length > 0 && results.at(-1) === refused[0];
      if (results.length > 0) await cur.onStep(results.length - failed.length, gone);
      const next = results.length - failed.length;
      if (next < cur.calls.length) {
        const [name, args] = cur.calls[next];
        return {
          content: [{ type: 'tool-call', toolCallId: `e${cur.e}-s${results.length + 1}`, toolName: `${SERVER_KEY}_${name}`, input: JSON.stringify(args) }],
          finishReason: 'tool-calls', usage, warnings: [],
        };
      }
      return { content: [{ type: 'text', text: `execution ${cur.e} done` }], finishReason: 'stop', usage, warnings: [] };
    },
    async doStream() {
      throw new Error('mastra gateway: the scripted model only generates');
    },
  };
}

/** MastraGateway runs executions as Mastra agent runs against url. */
export class MastraGateway {
  constructor({ url, mode, endpoint, serviceName }) {
    this.url = new URL(url);
    this.mode = mode;
    this.mcp = null;
    this.tools = null;
    this.cur = null;
    const exporter = new OtelExporter({ provider: { custom: { endpoint, protocol: 'http/json' } } });
    const agent = new Agent({
      id: AGENT,
      name: AGENT,
      instructions: 'Run the tool calls you are asked for.',
      model: scriptedModel(() => this.cur),
      tools: async () => this.tools,
    });
    this.mastra = new Mastra({
      agents: { [AGENT]: agent },
      logger: false,
      observability: new Observability({ configs: { otel: { serviceName, exporters: [exporter] } } }),
    });
  }

  client() {
    if (!this.mcp) this.mcp = new MCPClient({ id: `mcptrace-corpus-${this.mode}`, servers: { [SERVER_KEY]: { url: this.url } } });
    return this.mcp;
  }

  /**
   * execution runs execution e's calls as one agent run; before the step
   * after call i (1-based) it awaits between(i). Returns each call's
   * answer text.
   */
  async execution(e, calls, between) {
    if (!this.tools) this.tools = await this.client().listTools();
    this.cur = {
      e,
      calls,
      // onStep runs before every step after a tool result: done calls
      // answered, gone when the last was refused for a forgotten session.
      onStep: async (done, gone) => {
        if (this.mode === 'per-call' || (this.mode === 'forget' && gone)) await this.mcp.reconnectServer(SERVER_KEY);
        if (!gone) await between(done);
      },
    };
    const res = await this.mastra.getAgent(AGENT).generate(`Run execution ${e}.`, { maxSteps: calls.length + 2 });
    const results = res.steps.flatMap((s) => s.toolResults || []).filter((r) => !(r.payload ? r.payload.isError : r.isError));
    if (results.length !== calls.length) throw new Error(`mastra gateway: execution ${e}: ${results.length} tool results, want ${calls.length}`);
    return results.map((r) => {
      const out = r.payload ? r.payload.result : r.output ?? r.result;
      if (!out || out.isError) throw new Error(`mastra gateway: execution ${e}: ${r.payload?.toolName || r.toolName} answered ${JSON.stringify(out)}`);
      return (out.content || []).map((c) => c.text).join('');
    });
  }

  /** close disconnects the client and flushes Mastra's exporters. */
  async close() {
    if (this.mcp) await this.mcp.disconnect();
    await this.mastra.shutdown();
  }
}
