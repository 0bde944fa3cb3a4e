// A session-stateful MCP server on the TypeScript SDK 1.x
// (@modelcontextprotocol/sdk, the most deployed server SDK), wired the way
// its documentation does: one McpServer and one StreamableHTTPServerTransport
// with a session id generator per session, found by Mcp-Session-Id.
//
// A request without a session id gets a fresh server and transport, and the
// SDK decides: initialize opens a session; anything else (a 2026-07-28
// client's server/discover probe) is answered by the SDK itself, 400
// "Bad Request: Server not initialized", and the instance is discarded. A
// request carrying an id no live session has is answered 404 with the SDK's
// own "Session not found" body.
//
// Tools, ledger and hooks: lib/peer.mjs. Started by internal/peers.
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { ToolState, servePeer } from './lib/peer.mjs';

const state = new ToolState();
const sessions = new Map(); // session id -> { server, transport }

function newServer() {
  const server = new McpServer({ name: 'mcptrace-peer-ts-sdk-1', version: '1.0.0' });
  const t = state.tools();
  const sid = (extra) => extra.sessionId || '';
  server.registerTool('select_workspace', { description: 'Select a workspace for this session.', inputSchema: { workspace: z.string().optional() } },
    async (args, extra) => t.select_workspace(args, sid(extra)));
  server.registerTool('get_workspace', { description: 'Tell the workspace this session selected.' },
    async (extra) => t.get_workspace({}, sid(extra)));
  server.registerTool('side_effect', { description: 'Increment a server-wide counter.' },
    async (extra) => t.side_effect({}, sid(extra)));
  server.registerTool('echo', { description: 'Answer the text argument.', inputSchema: { text: z.string().optional() } },
    async (args, extra) => t.echo(args, sid(extra)));
  server.registerTool('fail', { description: 'Always answer a tool error (isError: true).' },
    async (extra) => t.fail({}, sid(extra)));
  return server;
}

// drop forgets a session at once (later requests with its id are unknown)
// and closes its instance on the next turn, after any answer being written.
function drop(id) {
  const s = sessions.get(id);
  if (!s) return;
  sessions.delete(id);
  setImmediate(() => {
    s.transport.close().catch(() => {});
    s.server.close().catch(() => {});
  });
}

servePeer({
  name: 'ts-sdk-1',
  state,
  isLive: (id) => sessions.has(id),
  forget: drop,
  sessionIds: () => [...sessions.keys()],
  async handle(req, res, body) {
    const id = req.headers['mcp-session-id'];
    if (id) {
      await sessions.get(id).transport.handleRequest(req, res, body);
      return;
    }
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, { server, transport }),
      onsessionclosed: (sid) => drop(sid),
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    if (!transport.sessionId) {
      // Not an initialize: the SDK answered (400) and this instance serves
      // nobody.
      await transport.close();
      await server.close();
    }
  },
});
