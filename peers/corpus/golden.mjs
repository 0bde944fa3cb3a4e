// Golden figures of one corpus run, from the server's request ledger (the
// HTTP layer, lib/peer.mjs) and its handler log (server.mjs), never from
// mcptrace's analyzer; then, per figure, what the package's spans can show
// of it, from what the package is known to record (docs/corpus.md, "Span
// shapes"). The shape is documented in docs/corpus.md, "Goldens".

/**
 * PACKAGES says, per instrumentation, where it sits and what its spans can
 * show; run.mjs reads the execution root's name and attributes from here.
 */
export const PACKAGES = {
  openllmetry: {
    npm: '@traceloop/instrumentation-mcp',
    side: 'client',
    mcpSpans: true,
    vocabulary: 'openllmetry',
    // OpenLLMetry's own workflow convention (@traceloop/node-server-sdk's
    // withWorkflow): span "<name>.workflow", traceloop.span.kind=workflow.
    root: {
      name: 'gateway_execution.workflow',
      attributes: { 'traceloop.span.kind': 'workflow', 'traceloop.workflow.name': 'gateway_execution', 'traceloop.entity.name': 'gateway_execution' },
    },
    idPrefix: 'c0a11e01',
  },
  shinzo: {
    npm: '@shinzolabs/instrumentation-mcp',
    side: 'server',
    mcpSpans: true,
    vocabulary: 'semconv', // semconv-style names and mcp.session.id
    // The GenAI semantic conventions' agent invocation.
    root: {
      name: 'invoke_agent gateway',
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'gateway' },
    },
    idPrefix: 'c0a11e02',
    receiver: true,
    // One span per call that reached a tool.
    serverSpans: (ledger) => ledger.filter((r) => r.rpc_method === 'tools/call' && r.status === 200).length,
    lowerBounds: ['tool_calls', 'acquires', 'hits', 'handshakes'],
  },
  openinference: {
    npm: '@arizeai/openinference-instrumentation-mcp',
    side: 'client',
    mcpSpans: false, // it only propagates trace context (params._meta)
    vocabulary: null, // nothing to read
    // OpenInference's span kind attribute: an agent run.
    root: {
      name: 'gateway.execution',
      attributes: { 'openinference.span.kind': 'AGENT' },
    },
    idPrefix: 'c0a11e03',
  },
  sentry: {
    npm: '@sentry/node',
    side: 'server',
    mcpSpans: true,
    vocabulary: 'sentry',
    // Sentry's AI agent spans follow the GenAI conventions too.
    root: {
      name: 'invoke_agent gateway',
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'gateway' },
    },
    idPrefix: 'c0a11e04',
    receiver: true,
    // An HTTP server span per request to /mcp (the ledger), and an MCP
    // span per JSON-RPC request or notification that reached the handler.
    serverSpans: (ledger, handled) => ledger.length + handled.filter((r) => r.rpc_method).length,
    handshakeSpans: true, // initialize spans
    lowerBounds: ['tool_calls', 'acquires', 'hits'],
  },
  mastra: {
    npm: '@mastra/mcp',
    side: 'client',
    mcpSpans: true,
    vocabulary: 'mastra',
    // Mastra's own agent run span (run.mjs writes no root of its own).
    root: { name: 'invoke_agent gateway', attributes: {} },
    receiver: true,
    // No session identity on any span, no handshake span; a call Mastra
    // retries itself (errors it takes for a lost connection) is one span.
    noSessions: true,
    lowerBounds: ['tool_calls'],
  },
};

/**
 * DECLARE says how an analysis must declare a figure: exact (the spans
 * show it), lower_bound (the spans show part of it and cannot tell how
 * much is missing: a property of the writer, whatever one run's ledger
 * says), not_measurable (the spans cannot show it).
 */
export const DECLARE = ['exact', 'lower_bound', 'not_measurable'];

const ok = (status) => status >= 200 && status < 300;

/** ledgerFigures computes the figures the server saw. */
export function ledgerFigures({ ledger, handled, slices }) {
  const calls = ledger.filter((r) => r.http_method === 'POST' && r.rpc_method === 'tools/call');
  const served = handled.filter((r) => r.rpc_method === 'tools/call');
  const refused404 = calls.filter((r) => r.status === 404 && r.session_id);
  if (calls.length - served.length !== refused404.length) {
    throw new Error(`golden: ${calls.length} tools/call in the ledger, ${served.length} reached the handler, but ${refused404.length} were answered 404 with a session id: the two ledgers disagree`);
  }
  const perExec = slices.map(([a, b]) => distinct(ledger.slice(a, b).filter((r) => r.http_method === 'POST' && r.rpc_method === 'tools/call')));
  const sliced = slices.reduce((n, [a, b]) => n + ledger.slice(a, b).filter((r) => r.rpc_method === 'tools/call').length, 0);
  if (sliced !== calls.length) throw new Error(`golden: ${calls.length} tools/call in the ledger but ${sliced} inside executions`);
  return {
    calls,
    served,
    executions: slices.length,
    tool_calls: calls.length,
    served_tool_calls: served.length,
    refused_tool_calls: refused404.length,
    initialize: ledger.filter((r) => r.http_method === 'POST' && r.rpc_method === 'initialize' && ok(r.status)).length,
    sessions: distinct(calls),
    per_execution: perExec,
  };
}

// distinct counts the distinct session ids of ledger entries.
function distinct(entries) {
  return new Set(entries.filter((r) => r.session_id).map((r) => r.session_id)).size;
}

// pool infers acquires from calls: the first call of a session is a miss,
// every later one a hit.
function pool(calls) {
  const misses = distinct(calls);
  return { acquires: calls.length, hits: calls.length - misses, misses };
}

// fig is one figure; why is kept where the spans differ from the ledger,
// or where always says the spans' value is an inference worth explaining;
// declare is how an analysis must declare it (DECLARE).
function fig(ledger, spans, why, always = false, lowerBound = false) {
  const declare = spans === null ? 'not_measurable' : lowerBound ? 'lower_bound' : 'exact';
  return why && (spans !== ledger || always || declare !== 'exact') ? { ledger, spans, why, declare } : { ledger, spans, declare };
}

/**
 * golden builds the golden of one run. sessions is the gateway's record of
 * each session it opened ({opened_in, closed_in}); dump is the list of
 * export requests written.
 */
export function golden({ pkg, mode, version, executions, callsPerExecution, ledger, handled, slices, sessions, dump }) {
  const p = PACKAGES[pkg];
  const L = ledgerFigures({ ledger, handled, slices });
  const structure = dumpStructure(dump);
  const roots = structure.span_names[p.root.name] || 0;
  if (roots !== L.executions) throw new Error(`golden: ${L.executions} executions ran but the dump holds ${roots} ${p.root.name} spans`);
  const truth = pool(L.calls);
  const spread = { max: Math.max(0, ...L.per_execution), multi: L.per_execution.filter((n) => n > 1).length };
  const v = view(p, L, sessions);
  const low = (k) => (p.lowerBounds || []).includes(k);
  const figures = {
    executions: fig(L.executions, roots),
    tool_calls: fig(L.tool_calls, v.toolCalls, v.callsWhy, false, low('tool_calls')),
    refused_tool_calls: fig(L.refused_tool_calls, v.refused, v.refusedWhy),
    sessions: fig(L.sessions, v.sessionCalls ? distinct(v.sessionCalls) : null, v.sessionsWhy || v.callsWhy),
    sessions_per_execution_max: fig(spread.max, v.spread ? spread.max : null, v.spreadWhy),
    multi_session_executions: fig(spread.multi, v.spread ? spread.multi : null, v.spreadWhy),
    handshakes: fig(L.initialize, v.handshakes, v.handshakesWhy, v.handshakesInferred, low('handshakes')),
  };
  if (!v.tied) {
    // The roots are there, but an execution's calls are not tied to it.
    figures.executions = { ...figures.executions, why: v.spreadWhy, declare: 'not_measurable' };
  }
  const shown = v.sessionCalls ? pool(v.sessionCalls) : null;
  for (const k of ['acquires', 'hits', 'misses']) {
    figures[k] = fig(truth[k], shown ? shown[k] : null, v.sessionsWhy || v.callsWhy, false, low(k));
  }
  return {
    package: pkg,
    npm: `${p.npm}@${version}`,
    side: p.side,
    mode,
    run: { executions, calls_per_execution: callsPerExecution, execution_root: p.root.name },
    structure,
    expect: {
      vocabulary: p.vocabulary,
      recognised: p.mcpSpans,
      executions_measurable: !!v.tied,
      ...(v.tied ? {} : { why_not: v.spreadWhy }),
    },
    figures,
    sessions_per_execution: L.per_execution,
    // tools/call requests whose params._meta carried a W3C traceparent
    // (OpenInference's propagation), from the handler log.
    traceparent_in_meta: L.served.filter((r) => r.traceparent).length,
  };
}

// view says what the package's spans show of the ledger's figures:
// toolCalls (a count), sessionCalls (the calls whose sessions the spans
// show), refused, handshakes, tied (every call tied to its execution) and
// spread (sessions per execution shown), each with its why.
function view(p, L, sessions) {
  if (!p.mcpSpans) {
    const why = 'no MCP spans: the package only propagates trace context into params._meta';
    return { toolCalls: null, sessionCalls: null, callsWhy: why, refused: null, refusedWhy: why, tied: false, spread: false, spreadWhy: why, handshakes: null, handshakesWhy: why };
  }
  if (p.side === 'server') return serverView(p, L);
  if (p.noSessions) return mastraView(L);
  // A client-side package that parents calls to a session span: an
  // execution owns its calls only if every session opened and closed in it.
  const contained = sessions.every((s) => s.opened_in > 0 && s.opened_in === s.closed_in);
  return {
    toolCalls: L.calls.length,
    sessionCalls: L.calls,
    refused: L.refused_tool_calls,
    tied: contained,
    spread: contained,
    spreadWhy: contained ? undefined : 'calls are parented to the long-lived mcp.client.session span, opened inside the first execution that used the session and ended after it: later executions\' calls sit in that first trace',
    handshakes: L.initialize,
  };
}

// serverView: a server-side package sees the calls that reached the
// handler, under no execution (nothing carries the gateway's context).
function serverView(p, L) {
  const sentry = p.npm === '@sentry/node';
  return {
    toolCalls: L.served.length,
    sessionCalls: L.served,
    callsWhy: 'a server-side package sees only calls that reached the handler; a call refused before it (404, unknown session) never does, so it cannot tell how many were refused',
    refused: null,
    refusedWhy: sentry
      ? 'a call refused before the handler (404, unknown session) is only an HTTP server span (POST /mcp, 404), which does not say it was a tools/call'
      : 'a call refused before the handler (404, unknown session) never reaches a server-side instrumentation',
    tied: false,
    spread: false,
    spreadWhy: sentry
      ? 'the server spans sit under the server\'s HTTP spans, each a trace root: nothing carries the gateway\'s context to the server, so no call sits under an execution'
      : 'the server spans are trace roots: nothing carries the gateway\'s context to the server, so no call sits under an execution',
    handshakes: sentry ? L.initialize : distinct(L.served),
    handshakesWhy: sentry ? undefined : 'no initialize span: one handshake per distinct mcp.session.id is inferred; a session that never reached a tool is not seen',
    handshakesInferred: !sentry,
  };
}

// mastraView: Mastra's client spans, one per tool execution under its
// agent run, with the server's key but no session and no handshake.
function mastraView(L) {
  const why = 'no span carries a session identity (no mcp.session.id, no session span): only the target (server.address) is known';
  return {
    toolCalls: L.calls.length,
    callsWhy: 'one span per tool execution: Mastra retries a call itself, inside the same span, after an error it takes for a lost connection (its message says not connected, fetch failed, connection closed, or HTTP 400/401/403/404), so such an attempt is no span of its own and the count is a lower bound (the SDK 2.0 client\'s 404 says none of these: the refused call here failed, a span with status ERROR, and the gateway sent it again, a span of its own)',
    sessionCalls: null,
    sessionsWhy: why,
    refused: L.refused_tool_calls,
    tied: true,
    spread: false,
    spreadWhy: why,
    handshakes: null,
    handshakesWhy: 'no handshake span (initialize is not traced)',
  };
}

/** dumpStructure counts what a dump holds, for the Go test to check it parses. */
export function dumpStructure(dump) {
  const names = {};
  const traces = new Set();
  const services = new Set();
  let spans = 0;
  for (const req of dump) {
    for (const rs of req.resourceSpans || []) {
      const svc = (rs.resource?.attributes || []).find((a) => a.key === 'service.name');
      if (svc) services.add(svc.value.stringValue);
      for (const ss of rs.scopeSpans || []) {
        for (const s of ss.spans || []) {
          spans++;
          traces.add(s.traceId);
          names[s.name] = (names[s.name] || 0) + 1;
        }
      }
    }
  }
  const sorted = Object.fromEntries(Object.entries(names).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { spans, traces: traces.size, services: [...services].sort(), span_names: sorted };
}
