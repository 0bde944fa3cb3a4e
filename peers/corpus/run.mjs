// One corpus run: the gateway (gateway.mjs) under one instrumentation
// package, in one mode, against the corpus server (server.mjs, a child
// process on 127.0.0.1), writing the dump (Collector file format) and its
// golden (golden.mjs, from the server's ledgers).
//
//   node corpus/run.mjs --package openllmetry|shinzo|openinference|sentry|mastra \
//     --mode pooled|per-call|forget --out DUMP.jsonl --golden GOLDEN.json
//
// Fixed counts, fixed tool arguments, fixed session ids (server.mjs) and
// counted trace ids (otlp.mjs): a regeneration differs only in timestamps
// and in the ids the packages' own SDKs draw (Shinzo, Sentry, Mastra).
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
  const receiver = p.receiver ? await startReceiver() : null;
  const server = await startServer(serverEnv(a.package, receiver));
  const gw = a.package === 'mastra'
    ? await mastraGateway(server.url, a.mode, receiver)
    : new Gateway({ url: server.url, mode: a.mode });
  const slices = [];
  const answers = []; // get_workspace's answer per execution: session continuity as the gateway saw it
  try {
    for (let e = 1; e <= EXECUTIONS; e++) {
      const start = (await server.ledger()).length;
      gw.current = e;
      const got = gw instanceof Gateway ? await gatewayExecution(tel.tracer, p.root, gw, server, a.mode, e) : await agentExecution(gw, server, a.mode, e);
      answers.push(got[callsOf(e).findIndex(([name]) => name === 'get_workspace')]);
      slices.push([start, (await server.ledger()).length]);
    }
    await gw.close();
    const ledger = await server.ledger();
    // A server-side package exports its spans on its own clock: wait for
    // all it must write (PACKAGES[pkg].serverSpans) before the server stops.
    if (receiver && p.serverSpans) await receiver.waitForSpans(p.serverSpans(ledger, server.handled), EXPORT_WAIT_MS);
    await server.stop(); // all handler lines read
    const dump = [await tel.collect(), ...(receiver ? receiver.requests : [])].filter(Boolean);
    writeJSONLines(a.out, dump);
    const g = golden({
      pkg: a.package, mode: a.mode, version, executions: EXECUTIONS, callsPerExecution: callsOf(0).length,
      ledger, handled: server.handled, slices, sessions: gw.sessions || [], dump,
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

// gatewayExecution runs execution e's calls through the SDK gateway, under
// a root span of the gateway's own; returns each call's answer text.
async function gatewayExecution(tracer, root, gw, server, mode, e) {
  const got = [];
  await execution(tracer, root, e, async () => {
    for (const [i, [name, args]] of callsOf(e).entries()) {
      if (mode === 'forget' && e === FORGET_IN && i === 1) {
        if (!gw.sessionId()) throw new Error('corpus: forget: the gateway holds no session');
        await server.forget(gw.sessionId());
      }
      const res = await gw.call(name, args);
      if (res.isError) throw new Error(`execution ${e}: ${name} answered a tool error: ${JSON.stringify(res.content)}`);
      got.push(res.content.map((c) => c.text).join(''));
    }
  });
  return got;
}

// agentExecution runs execution e as one Mastra agent run (its own root);
// in forget mode the server forgets every session after the first call of
// execution FORGET_IN (the gateway holds one; Mastra keeps its id to
// itself).
function agentExecution(gw, server, mode, e) {
  return gw.execution(e, callsOf(e), async (done) => {
    if (mode === 'forget' && e === FORGET_IN && done === 1) await server.forget('');
  });
}

// mastraGateway builds the Mastra gateway, its spans exported by
// @mastra/otel-exporter to the receiver. Mastra's own telemetry (a
// PostHog ping on server start) is switched off.
async function mastraGateway(url, mode, receiver) {
  process.env.MASTRA_TELEMETRY_DISABLED = '1';
  const { MastraGateway } = await import('./mastra-gateway.mjs');
  return new MastraGateway({ url, mode, endpoint: receiver.base.replace(/\/v1$/, ''), serviceName: 'mcptrace-corpus-gateway' });
}

// serverEnv is the server child's settings for a server-side package: the
// receiver to export to, and for Sentry the module that initialises it
// before the server's own (node --import).
function serverEnv(pkg, receiver) {
  if (pkg === 'shinzo') return { env: { CORPUS_SHINZO_ENDPOINT: receiver.base } };
  if (pkg === 'sentry') return { env: { CORPUS_SENTRY_ENDPOINT: receiver.base }, imports: [join(HERE, 'sentry-instrument.mjs')] };
  return { env: {} };
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
function startServer({ env, imports = [] }) {
  // The machine's OTEL_* settings (resource attributes, exporters,
  // samplers) would reach Shinzo's NodeSDK and change the dump: none pass.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const child = spawn(process.execPath, [...imports.flatMap((m) => ['--import', m]), join(HERE, 'server.mjs')], {
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
        // forget forgets one session, or every session for "".
        async forget(session) {
          const r = await fetch(session ? `${control}forget?session=${encodeURIComponent(session)}` : `${control}forget`, { method: 'POST' });
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
