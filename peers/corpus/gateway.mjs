// The corpus's gateway: tool calls to one MCP server through the
// TypeScript SDK 1.x client (Client + StreamableHTTPClientTransport), in
// one of three modes:
//
//   pooled    one client session, opened on the first call and reused by
//             every later call, closed when the gateway closes;
//   per-call  a new client and session for every call, closed after it;
//   forget    pooled, and when a call is refused with HTTP 404 (the server
//             forgot the session) the gateway closes that client, opens a
//             new session and sends the call once more: the MCP spec's
//             MUST (start a new session on 404), redialed once per call.
//
// The gateway also records, per session it opened, the execution that
// opened it and the one that closed it (0: closed after the last one), so
// a golden can say whether a session-scoped span outlives its execution.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const MODES = ['pooled', 'per-call', 'forget'];

/** Gateway runs tool calls in a mode; current names the running execution. */
export class Gateway {
  constructor({ url, mode }) {
    if (!MODES.includes(mode)) throw new Error(`gateway: mode ${JSON.stringify(mode)}: expected one of ${MODES.join(', ')}`);
    this.url = new URL(url);
    this.mode = mode;
    this.pooled = null; // { client, transport, rec }
    this.current = 0; // the execution running, 1-based
    this.sessions = []; // { session_id, opened_in, closed_in }
  }

  async open() {
    const client = new Client({ name: 'mcptrace-corpus-gateway', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(this.url);
    await client.connect(transport);
    const rec = { session_id: transport.sessionId || '', opened_in: this.current, closed_in: 0 };
    this.sessions.push(rec);
    return { client, transport, rec };
  }

  async shut(conn) {
    conn.rec.closed_in = this.current;
    await conn.client.close();
  }

  /** sessionId is the pooled session's Mcp-Session-Id, "" for none. */
  sessionId() {
    return this.pooled ? this.pooled.transport.sessionId || '' : '';
  }

  /** call sends one tools/call and returns its result. */
  async call(name, args) {
    if (this.mode === 'per-call') {
      const conn = await this.open();
      try {
        return await conn.client.callTool({ name, arguments: args });
      } finally {
        await this.shut(conn);
      }
    }
    if (!this.pooled) this.pooled = await this.open();
    try {
      return await this.pooled.client.callTool({ name, arguments: args });
    } catch (err) {
      if (this.mode !== 'forget' || !(err instanceof StreamableHTTPError) || err.code !== 404) throw err;
      // The server forgot the session: the request was refused before any
      // tool ran, so sending it again on a new session runs it once.
      const old = this.pooled;
      this.pooled = null;
      await this.shut(old);
      this.pooled = await this.open();
      return await this.pooled.client.callTool({ name, arguments: args });
    }
  }

  /** close ends the pooled session, if any. */
  async close() {
    this.current = 0;
    if (this.pooled) await this.shut(this.pooled);
    this.pooled = null;
  }
}
