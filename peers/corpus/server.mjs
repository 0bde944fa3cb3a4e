// The corpus's MCP server: a session-stateful server on the TypeScript SDK
// 1.x, as peers/ts1-server.mjs (one McpServer and one
// StreamableHTTPServerTransport per session), behind the peers' ledger and
// hooks (lib/peer.mjs), with two differences the corpus needs:
//
//   - Session ids are deterministic (corpus-session-1, -2, ...), so a
//     golden's figures and a ledger read the same on every regeneration.
//   - Tools are registered with McpServer.tool(), the only registration
//     @shinzolabs/instrumentation-mcp 1.1.0 wraps (it never sees
//     registerTool).
//
// With CORPUS_SHINZO_ENDPOINT set (an OTLP/HTTP base URL on 127.0.0.1, the
// gateway's receiver) every session's McpServer is instrumented by
// Shinzo's documented instrumentServer(server, config), exporting there.
// With CORPUS_SENTRY_ENDPOINT set (and sentry-instrument.mjs loaded by
// node --import, which initialises @sentry/node and exports there) every
// session's McpServer is wrapped by Sentry's wrapMcpServerWithSentry.
//
// Besides the HTTP-layer ledger (GET /_peer/requests), the server prints one
// line per request that reached the SDK's handler, on stdout:
//   CORPUS_HANDLED {"http_method":"POST","session_id":"...","rpc_method":"tools/call","tool":"echo","traceparent":true}
// (traceparent: the request's params._meta carried W3C trace context).
// A request in the ledger without such a line was refused before the
// handler (an unknown session, answered 404 by lib/peer.mjs): what a
// server-side instrumentation can never see. Started by corpus/gateway.mjs.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { ToolState, servePeer } from '../lib/peer.mjs';

const HANDLED = 'CORPUS_HANDLED ';
const shinzoEndpoint = process.env.CORPUS_SHINZO_ENDPOINT || '';
const shinzo = shinzoEndpoint ? await import('@shinzolabs/instrumentation-mcp') : null;
// With CORPUS_SENTRY_ENDPOINT, Sentry was initialised by
// sentry-instrument.mjs (node --import); every session's McpServer is
// wrapped by its documented wrapMcpServerWithSentry(server).
const sentry = process.env.CORPUS_SENTRY_ENDPOINT ? await import('@sentry/node') : null;

const state = new ToolState();
const sessions = new Map(); // session id -> { server, transport, telemetry }
let issued = 0;

function newServer() {
  const plain = new McpServer({ name: 'mcptrace-corpus-server', version: '1.0.0' });
  // Sentry wraps connect, so it must be applied before the transport is.
  const server = sentry ? sentry.wrapMcpServerWithSentry(plain) : plain;
  // Shinzo wraps server.tool, so it must be applied before the tools are.
  const telemetry = shinzo
    ? shinzo.instrumentServer(server, {
        serverName: 'mcptrace-corpus-server',
        serverVersion: '1.0.0',
        exporterEndpoint: shinzoEndpoint,
        exporterType: 'otlp-http',
        enableMetrics: false, // the corpus keeps traces only
      })
    : null;
  const t = state.tools();
  // Shinzo's wrapper calls the handler with the arguments only (it drops
  // the SDK's extra), so under Shinzo sid() is always "": noted in
  // docs/corpus.md.
  const sid = (extra) => (extra && extra.sessionId) || '';
  server.tool('select_workspace', 'Select a workspace for this session.', { workspace: z.string().optional() },
    async (args, extra) => t.select_workspace(args, sid(extra)));
  server.tool('get_workspace', 'Tell the workspace this session selected.',
    async (extra) => t.get_workspace({}, sid(extra)));
  server.tool('echo', 'Answer the text argument.', { text: z.string().optional() },
    async (args, extra) => t.echo(args, sid(extra)));
  return { server, telemetry };
}

// drop forgets a session at once and closes its instance on the next turn,
// after any answer being written (as ts1-server.mjs).
function drop(id) {
  const s = sessions.get(id);
  if (!s) return;
  sessions.delete(id);
  setImmediate(() => {
    s.transport.close().catch(() => {});
    s.server.close().catch(() => {});
  });
}

function handled(req, body) {
  const msg = Array.isArray(body) ? body[0] : body;
  const rec = { http_method: req.method };
  const id = req.headers['mcp-session-id'];
  if (id) rec.session_id = String(id);
  if (msg && typeof msg.method === 'string') rec.rpc_method = msg.method;
  if (rec.rpc_method === 'tools/call' && msg.params && typeof msg.params.name === 'string') rec.tool = msg.params.name;
  if (msg && msg.params && msg.params._meta && typeof msg.params._meta.traceparent === 'string') rec.traceparent = true;
  process.stdout.write(HANDLED + JSON.stringify(rec) + '\n');
}

servePeer({
  name: 'corpus-server',
  state,
  isLive: (id) => sessions.has(id),
  forget: drop,
  sessionIds: () => [...sessions.keys()],
  async handle(req, res, body) {
    handled(req, body);
    const id = req.headers['mcp-session-id'];
    if (id) {
      await sessions.get(id).transport.handleRequest(req, res, body);
      return;
    }
    const { server, telemetry } = newServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => `corpus-session-${++issued}`,
      onsessioninitialized: (sid) => sessions.set(sid, { server, transport, telemetry }),
      onsessionclosed: (sid) => drop(sid),
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    if (!transport.sessionId) {
      await transport.close();
      await server.close();
    }
  },
});
