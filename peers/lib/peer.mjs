// Shared serving code of the Node peers mcptrace's Go tests start: an HTTP
// server on 127.0.0.1 (port 0 unless PEER_PORT says otherwise), a ledger of
// every request to the MCP endpoint, one-shot rejections, session hooks and a
// control API under /_peer/. The MCP serving itself is the SDK's: each peer
// script hands its SDK handler to servePeer.
//
// Control API (never recorded, never rejected):
//   GET  /_peer/requests                        the ledger, a JSON array
//   GET  /_peer/stats                           {"side_effects","initializes","session_ids","sessions"}
//   POST /_peer/reset                           empty the ledger
//   POST /_peer/clear-hooks                     drop queued rejections and forget-next
//   POST /_peer/forget[?session=ID]             forget one session, or all
//   POST /_peer/forget-next?n=N                 forget the next N sessions right after their handshake
//   POST /_peer/reject?status=N[&scope=session][&method=M][&after=1]
//                                               answer the next matching request with N, once;
//                                               with after=1 the request is served first (the tool
//                                               runs) and its answer replaced: a lost answer
//
// Ledger entries use the Go fixtures' field names (fixtures.Request), so the
// Go side reads both the same way.
import { createServer } from 'node:http';

/** The MCP endpoint's path, as in the Go fixtures. */
export const MCP_PATH = '/mcp';
const CONTROL = '/_peer/';
const READY = 'MCPTRACE_PEER_READY ';
const MAX_BODY = 4 << 20;

/** Tool names and answers, the Go fixtures' (fixtures/tools.go). */
export const NO_WORKSPACE = 'no workspace selected';
export const DEFAULT_WORKSPACE = 'ws-e2e';
export const FAIL_MESSAGE = 'peer: the fail tool always fails';

// The SDK's own body for an unknown session (webStandardStreamableHttp.js,
// createJsonErrorResponse(404, -32001, 'Session not found')).
const SESSION_NOT_FOUND = JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });

/**
 * State shared by a peer's tools: per-session workspaces and the
 * server-wide side-effect counter.
 */
export class ToolState {
  constructor() {
    this.workspaces = new Map();
    this.sideEffects = 0;
  }

  /**
   * The tool bodies, independent of SDK: each takes the arguments and the
   * session id ("" for none) and returns a CallToolResult.
   */
  tools() {
    const text = (t) => ({ content: [{ type: 'text', text: t }] });
    return {
      select_workspace: (args, sid) => {
        const ws = (args && args.workspace) || DEFAULT_WORKSPACE;
        if (sid) this.workspaces.set(sid, ws);
        return text(`selected:${ws}`);
      },
      get_workspace: (_args, sid) => {
        const ws = sid ? this.workspaces.get(sid) : undefined;
        return text(ws === undefined ? NO_WORKSPACE : `workspace:${ws}`);
      },
      side_effect: () => text(`count:${++this.sideEffects}`),
      echo: (args) => text(String((args && args.text) || '')),
      fail: () => ({ ...text(FAIL_MESSAGE), isError: true }),
    };
  }
}

/**
 * servePeer listens on 127.0.0.1 and serves opts.handle(req, res, body) on
 * /mcp behind the ledger and the hooks, then prints the ready line.
 *
 * opts.name: the peer's name, in the ready line.
 * opts.handle(req, res, parsedBody): the SDK's serving of one request.
 * opts.isLive(sessionId): whether the SDK side knows the session; a
 *   request carrying an id it does not know is answered 404 (the SDK's body)
 *   without reaching the SDK. Omit for a sessionless peer.
 * opts.forget(sessionId): make the SDK side drop a session.
 * opts.sessionIds(): the live session ids.
 * opts.state: the ToolState, for stats.
 */
export function servePeer(opts) {
  const ledger = [];
  const rejects = [];
  let forgetNext = 0;
  let initializes = 0;
  const seen = new Set();

  const record = (req, msg) => {
    const rec = {
      time: new Date().toISOString(),
      http_method: req.method,
      status: 0,
    };
    const sid = header(req, 'mcp-session-id');
    if (sid) rec.session_id = sid;
    if (msg && typeof msg.method === 'string') rec.rpc_method = msg.method;
    if (rec.rpc_method === 'tools/call' && msg.params && typeof msg.params.name === 'string') rec.tool = msg.params.name;
    ledger.push(rec);
    return rec;
  };

  // observe records the status the moment the header is written, so a
  // client that has its answer finds it in the ledger.
  const observe = (res, rec) => {
    const writeHead = res.writeHead;
    res.writeHead = function (status, ...rest) {
      if (rec.status === 0) {
        rec.status = status;
        const ok = status >= 200 && status < 300;
        const issued = headerOut(res, rest, 'mcp-session-id');
        if (issued) seen.add(issued);
        if (ok && rec.rpc_method === 'initialize') initializes++;
        if (ok && rec.rpc_method === 'notifications/initialized' && rec.session_id && forgetNext > 0 && opts.forget) {
          forgetNext--;
          opts.forget(rec.session_id);
        }
      }
      return writeHead.call(this, status, ...rest);
    };
  };

  const takeReject = (rec) => {
    const i = rejects.findIndex((r) => (r.method ? r.method === rec.rpc_method : r.scope !== 'session' || !!rec.session_id));
    if (i < 0) return undefined;
    const r = rejects.splice(i, 1)[0];
    rec.fault = r.after ? 'reject_after_run' : 'reject';
    return r;
  };

  const control = (req, res, url) => {
    const q = url.searchParams;
    const path = url.pathname.slice(CONTROL.length);
    const json = (v) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    const done = () => {
      res.writeHead(204);
      res.end();
    };
    const bad = (m) => {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end(`peer control ${path}: ${m}\n`);
    };
    if (req.method === 'GET' && path === 'requests') return json(ledger);
    if (req.method === 'GET' && path === 'stats') {
      return json({
        side_effects: opts.state ? opts.state.sideEffects : 0,
        initializes,
        session_ids: [...seen],
        sessions: opts.sessionIds ? opts.sessionIds() : [],
      });
    }
    if (req.method !== 'POST') return bad(`${req.method} ${path}: expected GET requests, GET stats or a POST hook`);
    switch (path) {
      case 'reset':
        ledger.length = 0;
        return done();
      case 'clear-hooks':
        rejects.length = 0;
        forgetNext = 0;
        return done();
      case 'forget': {
        if (!opts.forget) return bad('this peer has no sessions to forget');
        const one = q.get('session');
        for (const id of one ? [one] : opts.sessionIds()) opts.forget(id);
        return done();
      }
      case 'forget-next': {
        if (!opts.forget) return bad('this peer has no sessions to forget');
        const n = Number(q.get('n') ?? '1');
        if (!Number.isInteger(n) || n < 0) return bad(`n is ${JSON.stringify(q.get('n'))}: expected a count >= 0`);
        forgetNext = n;
        return done();
      }
      case 'reject': {
        const status = Number(q.get('status'));
        if (!Number.isInteger(status) || status < 400 || status > 599) return bad(`status is ${JSON.stringify(q.get('status'))}: expected an HTTP error status 400-599`);
        const scope = q.get('scope') ?? 'any';
        if (scope !== 'any' && scope !== 'session') return bad(`scope is ${JSON.stringify(scope)}: expected any or session`);
        rejects.push({ status, scope, method: q.get('method') ?? '', after: q.get('after') === '1' });
        return done();
      }
    }
    return bad('unknown hook: expected reset, clear-hooks, forget, forget-next or reject');
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname.startsWith(CONTROL)) return control(req, res, url);
    if (url.pathname !== MCP_PATH) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      return res.end(`no such path ${url.pathname}: the MCP endpoint is ${MCP_PATH}\n`);
    }
    let body;
    let msg;
    if (req.method === 'POST') {
      let raw;
      try {
        raw = await readBody(req);
      } catch (err) {
        res.writeHead(413, { 'Content-Type': 'text/plain' });
        return res.end(`${err.message}\n`);
      }
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      msg = Array.isArray(body) ? body[0] : body;
    }
    const rec = record(req, msg);
    observe(res, rec);
    if (req.method === 'POST' && body === undefined) {
      return rpcError(res, 400, null, -32700, 'Parse error: the body is not JSON');
    }
    const reject = takeReject(rec);
    if (reject && !reject.after) return answerReject(res, reject.status, msg);
    if (reject) replaceAnswer(res, reject.status);
    if (rec.session_id && opts.isLive && !opts.isLive(rec.session_id)) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      return res.end(SESSION_NOT_FOUND);
    }
    try {
      await opts.handle(req, res, body);
    } catch (err) {
      process.stderr.write(`${opts.name}: ${err && err.stack ? err.stack : err}\n`);
      if (!res.headersSent) rpcError(res, 500, msg && msg.id, -32603, 'Internal error');
    }
  });

  const port = Number(process.env.PEER_PORT || 0);
  server.listen(port, '127.0.0.1', () => {
    const a = server.address();
    const base = `http://127.0.0.1:${a.port}`;
    process.stdout.write(READY + JSON.stringify({ name: opts.name, url: base + MCP_PATH, control: base + CONTROL }) + '\n');
  });
  exitWithParent(() => server.close());
  return server;
}

// answerReject answers a rejected request the way a server would: 404 with
// the SDK's session-not-found body, 400 and 5xx with a JSON-RPC error.
function answerReject(res, status, msg) {
  if (status === 404) {
    res.writeHead(404, { 'Content-Type': 'application/json' });
    return res.end(SESSION_NOT_FOUND);
  }
  const code = status === 400 ? -32000 : -32603;
  return rpcError(res, status, null, code, `peer: answered ${status} once by the reject hook (request not served)`);
}

// replaceAnswer lets the SDK serve the request (its tool runs) and writes
// status with a JSON-RPC error instead of the SDK's answer, as a proxy that
// lost the answer would. The ledger records status.
function replaceAnswer(res, status) {
  const writeHead = res.writeHead;
  const end = res.end;
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: `peer: the request was served and its answer replaced by ${status} (reject hook, after=1)` }, id: null });
  res.writeHead = function () {
    return writeHead.call(this, status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  };
  res.write = () => true;
  res.end = function () {
    if (!this.headersSent) this.writeHead(status);
    return end.call(this, body);
  };
}

function rpcError(res, status, id, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: id ?? null }));
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let n = 0;
    req.on('data', (c) => {
      n += c.length;
      if (n > MAX_BODY) {
        reject(new Error(`request body over ${MAX_BODY} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function header(req, name) {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

// headerOut finds a response header set either on res or in writeHead's
// headers argument (an object or a flat array).
function headerOut(res, rest, name) {
  const v = res.getHeader(name);
  if (v) return String(v);
  for (const h of rest) {
    if (Array.isArray(h)) {
      for (let i = 0; i + 1 < h.length; i += 2) if (String(h[i]).toLowerCase() === name) return String(h[i + 1]);
    } else if (h && typeof h === 'object') {
      for (const [k, val] of Object.entries(h)) if (k.toLowerCase() === name) return String(val);
    }
  }
  return '';
}

/**
 * exitWithParent ends the process when its stdin closes (the Go test that
 * started it is gone, or closed the pipe to stop it) or on SIGTERM/SIGINT,
 * so a peer never outlives its test.
 */
export function exitWithParent(cleanup) {
  const stop = () => {
    try {
      cleanup?.();
    } finally {
      process.exit(0);
    }
  };
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
