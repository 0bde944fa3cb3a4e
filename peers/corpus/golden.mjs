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
};

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
// or where always says the spans' value is an inference worth explaining.
const fig = (ledger, spans, why, always = false) => (why && (spans !== ledger || always) ? { ledger, spans, why } : { ledger, spans });

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
  const figures = {
    executions: fig(L.executions, roots),
    tool_calls: fig(L.tool_calls, v.calls ? v.calls.length : null, v.callsWhy),
    refused_tool_calls: fig(L.refused_tool_calls, v.refused, v.refusedWhy),
    sessions: fig(L.sessions, v.calls ? distinct(v.calls) : null, v.callsWhy),
    sessions_per_execution_max: fig(spread.max, v.spread ? spread.max : null, v.spreadWhy),
    multi_session_executions: fig(spread.multi, v.spread ? spread.multi : null, v.spreadWhy),
    handshakes: fig(L.initialize, v.handshakes, v.handshakesWhy, v.handshakesInferred),
  };
  const shown = v.calls ? pool(v.calls) : null;
  for (const k of ['acquires', 'hits', 'misses']) {
    figures[k] = fig(truth[k], shown ? shown[k] : null, v.callsWhy);
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
      executions_measurable: !!v.spread,
      ...(v.spread ? {} : { why_not: v.spreadWhy }),
    },
    figures,
    sessions_per_execution: L.per_execution,
    // tools/call requests whose params._meta carried a W3C traceparent
    // (OpenInference's propagation), from the handler log.
    traceparent_in_meta: L.served.filter((r) => r.traceparent).length,
  };
}

// view says what the package's spans show of the ledger's figures.
function view(p, L, sessions) {
  if (!p.mcpSpans) {
    const why = 'no MCP spans: the package only propagates trace context into params._meta';
    return { calls: null, callsWhy: why, refused: null, refusedWhy: why, spread: false, spreadWhy: why, handshakes: null, handshakesWhy: why };
  }
  if (p.side === 'server') {
    return {
      calls: L.served,
      callsWhy: L.refused_tool_calls > 0 ? 'a server-side package sees only calls that reached the handler; refused calls never do' : undefined,
      refused: null,
      refusedWhy: 'a call refused before the handler (404, unknown session) never reaches a server-side instrumentation',
      spread: false,
      spreadWhy: 'the server spans are trace roots: nothing carries the gateway\'s context to the server, so no call sits under an execution',
      handshakes: distinct(L.served),
      handshakesWhy: 'no initialize span: one handshake per distinct mcp.session.id is inferred',
      handshakesInferred: true,
    };
  }
  // A client-side package that parents calls to a session span: an
  // execution owns its calls only if every session opened and closed in it.
  const contained = sessions.every((s) => s.opened_in > 0 && s.opened_in === s.closed_in);
  return {
    calls: L.calls,
    refused: L.refused_tool_calls,
    spread: contained,
    spreadWhy: contained ? undefined : 'calls are parented to the long-lived mcp.client.session span, opened inside the first execution that used the session and ended after it: later executions\' calls sit in that first trace',
    handshakes: L.initialize,
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
