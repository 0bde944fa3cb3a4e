// One corpus run: the gateway (gateway.mjs) under one instrumentation
// package, in one mode, against the corpus server (server.mjs, a child
// process on 127.0.0.1), writing the dump (Collector file format) and its
// golden (golden.mjs, from the server's ledgers).
//
//   node corpus/run.mjs --package openllmetry|shinzo|openinference \
//     --mode pooled|per-call|forget --out DUMP.jsonl --golden GOLDEN.json
//
// Fixed counts, fixed tool arguments, fixed session ids (server.mjs) and
// counted trace ids (otlp.mjs): a regeneration differs only in timestamps
// and in the ids Shinzo's own SDK draws.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { SpanStatusCode } from '@opentelemetry/api';
import { Gateway, MODES } from './gateway.mjs';
import { gatewayTelemetry, startReceiver, writeJSONLines } from './otlp.mjs';
import { PACKAGES, golden } from './golden.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const READY = 'MCPTRACE_PEER_READY ';
const HANDLED = 'CORPUS_HANDLED ';
const EXECUTIONS = 5;
const FORGET_IN = 3; // forget mode: the server forgets the session after this execution's first call
const EXPORT_WAIT_MS = 30000; // Shinzo's batch processor exports every 5 s

// The calls of execution e: fixed tools, fixed arguments.
const callsOf = (e) => [
  ['select_workspace', { workspace: `ws-${e}` }],
  ['get_workspace', {}],
  ['echo', { text: `execution ${e}` }],
];

/** UsageError is a bad command line: reported without a stack, exit 2. */
class UsageError extends Error {}

async function main() {
  let a;
  try {
    ({ values: a } = parseArgs({
      options: { package: { type: 'string' }, mode: { type: 'string' }, out: { type: 'string' }, golden: { type: 'string' } },
    }));
  } catch (err) {
    throw new UsageError(err.message);
  }
  const p = Object.hasOwn(PACKAGES, a.package || '') ? PACKAGES[a.package] : null;
  if (!p) throw new UsageError(`--package ${JSON.stringify(a.package)}: expected one of ${Object.keys(PACKAGES).join(', ')}`);
  if (!MODES.includes(a.mode)) throw new UsageError(`--mode ${JSON.stringify(a.mode)}: expected one of ${MODES.join(', ')}`);
  if (!a.out || !a.golden) throw new UsageError('--out and --golden are required: where to write the dump and its golden');
  const version = JSON.parse(readFileSync(join(HERE, 'node_modules', ...p.npm.split('/'), 'package.json'), 'utf8')).version;

  const tel = gatewayTelemetry({ serviceName: 'mcptrace-corpus-gateway', idPrefix: p.idPrefix });
  await instrumentClient(a.package, tel.provider);
  const receiver = a.package === 'shinzo' ? await startReceiver() : null;
  const server = await startServer(receiver ? { CORPUS_SHINZO_ENDPOINT: receiver.base } : {});
  const gw = new Gateway({ url: server.url, mode: a.mode });
  const slices = [];
  const answers = []; // get_workspace's answer per execution: session continuity as the gateway saw it
  try {
    for (let e = 1; e <= EXECUTIONS; e++) {
      const start = (await server.ledger()).length;
      gw.current = e;
      await execution(tel.tracer, p.root, e, async () => {
        for (const [i, [name, args]] of callsOf(e).entries()) {
          if (a.mode === 'forget' && e === FORGET_IN && i === 1) await server.forget(gw.sessionId());
          const res = await gw.call(name, args);
          if (res.isError) throw new Error(`execution ${e}: ${name} answered a tool error: ${JSON.stringify(res.content)}`);
          if (name === 'get_workspace') answers.push(res.content.map((c) => c.text).join(''));
        }
      });
      slices.push([start, (await server.ledger()).length]);
    }
    await gw.close();
    const ledger = await server.ledger();
    // Shinzo exports one span per call that reached a tool: wait for them
    // all (the ledger's answered calls) before the server stops.
    const answered = ledger.filter((r) => r.rpc_method === 'tools/call' && r.status === 200).length;
    if (receiver) await receiver.waitForSpans(answered, EXPORT_WAIT_MS);
    await server.stop(); // all handler lines read
    const dump = [await tel.collect(), ...(receiver ? receiver.requests : [])].filter(Boolean);
    writeJSONLines(a.out, dump);
    const g = golden({
      pkg: a.package, mode: a.mode, version, executions: EXECUTIONS, callsPerExecution: callsOf(0).length,
      ledger, handled: server.handled, slices, sessions: gw.sessions, dump,
    });
    g.gateway_answers = { get_workspace: answers };
    writeFileSync(a.golden, JSON.stringify(g, null, 2) + '\n');
    process.stderr.write(`corpus: ${a.package}/${a.mode}: ${g.structure.spans} spans, ${g.figures.tool_calls.ledger} tool calls, ${g.figures.sessions.ledger} sessions\n`);
  } finally {
    await server.stop();
    if (receiver) await receiver.close();
    await tel.shutdown();
  }
}

// execution runs fn as one execution: a root span of the gateway's own,
// named by the package's conventions, active while the calls run.
function execution(tracer, root, e, fn) {
  return tracer.startActiveSpan(root.name, { root: true, attributes: { ...root.attributes, 'gateway.execution.index': e } }, async (span) => {
    try {
      await fn();
      span.setStatus({ code: SpanStatusCode.OK });
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: String(err && err.message) });
      throw err;
    } finally {
      span.end();
    }
  });
}

// instrumentClient applies a client-side package the way its README says
// for ESM (manuallyInstrument: the SDK is imported as an ES module, which
// the require hooks never see). Shinzo is applied in the server.
async function instrumentClient(pkg, provider) {
  if (pkg === 'openllmetry') {
    const { McpInstrumentation } = await import('@traceloop/instrumentation-mcp');
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const inst = new McpInstrumentation();
    inst.setTracerProvider(provider);
    inst.manuallyInstrument({ Client });
  } else if (pkg === 'openinference') {
    const { MCPInstrumentation } = await import('@arizeai/openinference-instrumentation-mcp');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const inst = new MCPInstrumentation();
    inst.setTracerProvider(provider);
    inst.manuallyInstrument({ clientStreamableHTTPModule: { StreamableHTTPClientTransport } });
  }
}

// startServer runs server.mjs on 127.0.0.1 and resolves once it is ready.
function startServer(env) {
  // The machine's OTEL_* settings (resource attributes, exporters,
  // samplers) would reach Shinzo's NodeSDK and change the dump: none pass.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const child = spawn(process.execPath, [join(HERE, 'server.mjs')], {
    cwd: join(HERE, '..'),
    env: { ...base, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const handled = [];
  const exited = Promise.all([new Promise((ok) => child.on('exit', ok)), new Promise((ok) => child.stdout.on('close', ok))]);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('corpus server: no ready line within 60 s')), 60000);
    child.on('exit', (code) => reject(new Error(`corpus server exited (${code}) before it was ready`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith(HANDLED)) return handled.push(JSON.parse(line.slice(HANDLED.length)));
      if (!line.startsWith(READY)) return;
      clearTimeout(timer);
      const { url, control } = JSON.parse(line.slice(READY.length));
      resolve({
        url,
        handled,
        async ledger() {
          const r = await fetch(control + 'requests');
          if (!r.ok) throw new Error(`corpus server: GET ${control}requests: ${r.status}`);
          return r.json();
        },
        async forget(session) {
          if (!session) throw new Error('corpus: forget: the gateway holds no session');
          const r = await fetch(`${control}forget?session=${encodeURIComponent(session)}`, { method: 'POST' });
          if (!r.ok) throw new Error(`corpus server: forget ${session}: ${r.status}`);
        },
        async stop() {
          if (child.exitCode === null) child.stdin.end();
          await exited;
        },
      });
    });
  });
}

main().catch((err) => {
  if (err instanceof UsageError) {
    process.stderr.write(`corpus: ${err.message}\nusage: node corpus/run.mjs --package P --mode M --out DUMP.jsonl --golden GOLDEN.json\n`);
    process.exit(2);
  }
  process.stderr.write(`corpus: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
