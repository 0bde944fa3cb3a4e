// The corpus's telemetry plumbing: the gateway's tracer provider, an
// OTLP/HTTP JSON receiver on 127.0.0.1 for the packages that bring their
// own SDK and exporter (Shinzo, Sentry, Mastra), and the writer of the
// Collector file exporter's format: one ExportTraceServiceRequest JSON per
// line (hex ids, as the Collector writes them).
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { NodeTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';

const MAX_BODY = 4 << 20;

/**
 * CountingIds is an IdGenerator with deterministic ids (a fixed prefix and
 * a counter), so the gateway's trace and span ids are the same on every
 * regeneration. Ids are never all zero.
 */
export class CountingIds {
  constructor(prefix) {
    this.prefix = prefix; // 8 hex digits
    this.traces = 0;
    this.spans = 0;
  }
  generateTraceId() {
    return this.prefix + (++this.traces).toString(16).padStart(24, '0');
  }
  generateSpanId() {
    return (++this.spans).toString(16).padStart(16, '0');
  }
}

/**
 * gatewayTelemetry registers a tracer provider for the gateway process
 * (AsyncLocalStorage context, W3C propagation: what an instrumentation that
 * reads the active context needs) and keeps its finished spans in memory.
 * collect() returns them as one ExportTraceServiceRequest object.
 */
export function gatewayTelemetry({ serviceName, idPrefix }) {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.instance.id': `${serviceName}-1` }),
    idGenerator: new CountingIds(idPrefix),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  provider.register();
  return {
    provider,
    tracer: provider.getTracer('mcptrace-corpus-gateway', '1.0.0'),
    async collect() {
      await provider.forceFlush();
      const spans = exporter.getFinishedSpans();
      if (spans.length === 0) return null;
      return JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
    },
    shutdown: () => provider.shutdown(),
  };
}

// Attributes whose values describe the machine that ran the generator (a
// host name, its first non-loopback address): replaced by a fixed value so
// committed dumps say nothing about it and regenerate alike.
const MACHINE_ATTRS = new Set(['host.name', 'host.id', 'host.ip', 'host.mac', 'client.address', 'os.version', 'os.description']);
export const SCRUBBED = 'scrubbed-by-corpus';

function scrubAttrs(attrs) {
  for (const a of attrs || []) {
    if (MACHINE_ATTRS.has(a.key)) a.value = { stringValue: SCRUBBED };
  }
}

/** scrub replaces machine-specific attribute values in an export request. */
export function scrub(req) {
  for (const rs of req.resourceSpans || []) {
    scrubAttrs(rs.resource && rs.resource.attributes);
    for (const ss of rs.scopeSpans || []) for (const s of ss.spans || []) scrubAttrs(s.attributes);
  }
  return req;
}

/** spanCount counts the spans of an export request. */
export function spanCount(req) {
  let n = 0;
  for (const rs of req.resourceSpans || []) for (const ss of rs.scopeSpans || []) n += (ss.spans || []).length;
  return n;
}

/**
 * startReceiver listens on 127.0.0.1 for OTLP/HTTP JSON: POST /v1/traces
 * bodies are kept (parsed), anything else is answered 404. Resolves to
 * { base, requests, spans(), waitForSpans(n, ms), close() }.
 */
export function startReceiver() {
  const requests = [];
  let waiters = [];
  const spans = () => requests.reduce((n, r) => n + spanCount(r), 0);
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      return res.end(`corpus receiver: ${req.method} ${req.url}: expected POST /v1/traces\n`);
    }
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch (err) {
        res.writeHead(400, { 'Content-Type': 'text/plain' });
        return res.end(`corpus receiver: body is not JSON (${err.message}); expected OTLP/HTTP JSON\n`);
      }
      requests.push(scrub(body));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
      const n = spans();
      waiters = waiters.filter((w) => (n >= w.n ? (w.resolve(), false) : true));
    });
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        base: `http://127.0.0.1:${port}/v1`,
        requests,
        spans,
        // waitForSpans resolves once n spans arrived, rejects after ms.
        waitForSpans(n, ms) {
          if (spans() >= n) return Promise.resolve();
          return new Promise((ok, fail) => {
            const w = { n, resolve: () => (clearTimeout(w.timer), ok()) };
            w.timer = setTimeout(() => {
              waiters = waiters.filter((x) => x !== w);
              fail(new Error(`corpus receiver: ${spans()} of ${n} expected spans arrived within ${ms} ms`));
            }, ms);
            waiters.push(w);
          });
        },
        close: () => new Promise((ok) => server.close(() => ok())),
      });
    });
  });
}

/** writeJSONLines writes export requests, one JSON object per line. */
export function writeJSONLines(path, requests) {
  writeFileSync(path, requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
}
