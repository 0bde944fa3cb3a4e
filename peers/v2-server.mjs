// An MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server and
// @modelcontextprotocol/node), wired the way its documentation does:
// createMcpHandler with a server factory, adapted to node:http by
// toNodeHandler. It speaks 2026-07-28 (server/discover, per-request _meta,
// no sessions) and, by the SDK's default legacy posture ('stateless'),
// answers 2025-era requests statelessly: no Mcp-Session-Id either way, so
// get_workspace never sees a selection, and GET/DELETE are answered 405.
// PEER_LEGACY=reject serves 2026-07-28 only (the SDK's strict posture).
//
// Tools, ledger and hooks: lib/peer.mjs (no session hooks: there are no
// sessions). Started by internal/peers.
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { ToolState, servePeer } from './lib/peer.mjs';

const state = new ToolState();

function newServer() {
  const server = new McpServer({ name: 'mcptrace-peer-ts-sdk-v2', version: '1.0.0' });
  const t = state.tools();
  server.registerTool('select_workspace', { description: 'Select a workspace (kept nowhere: no sessions).', inputSchema: z.object({ workspace: z.string().optional() }) },
    async (args) => t.select_workspace(args, ''));
  server.registerTool('get_workspace', { description: 'Tell the selected workspace (none: no sessions).' },
    async () => t.get_workspace({}, ''));
  server.registerTool('side_effect', { description: 'Increment a server-wide counter.' },
    async () => t.side_effect({}, ''));
  server.registerTool('echo', { description: 'Answer the text argument.', inputSchema: z.object({ text: z.string().optional() }) },
    async (args) => t.echo(args, ''));
  server.registerTool('fail', { description: 'Always answer a tool error (isError: true).' },
    async () => t.fail({}, ''));
  return server;
}

const legacy = process.env.PEER_LEGACY === 'reject' ? 'reject' : 'stateless';
const handler = createMcpHandler(() => newServer(), { legacy });
const node = toNodeHandler(handler);

servePeer({
  name: 'ts-sdk-v2',
  state,
  handle: (req, res, body) => node(req, res, body),
});
