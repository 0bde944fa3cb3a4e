// Sentry for the corpus server (scripts/corpus.sh, package sentry): loaded
// with `node --import` before server.mjs, as @sentry/node's ESM setup says
// (init before the http module is imported, so its HTTP integration sees
// every request). Nothing is sent to Sentry: the transport drops every
// envelope. Every span also goes through an OTLP/HTTP JSON exporter (the
// documented openTelemetrySpanProcessors option) to
// CORPUS_SENTRY_ENDPOINT, the gateway's receiver on 127.0.0.1. The control
// API (/_peer/) is not traced: it is the corpus's, not the server's.
import * as Sentry from '@sentry/node';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';

const endpoint = process.env.CORPUS_SENTRY_ENDPOINT || '';
if (!endpoint.startsWith('http://127.0.0.1:')) throw new Error(`sentry-instrument: CORPUS_SENTRY_ENDPOINT ${JSON.stringify(endpoint)}: want the receiver on 127.0.0.1`);

Sentry.init({
  // A DSN enables the client (without one Sentry sets up no integration,
  // so no HTTP span); the transport drops every envelope unsent.
  dsn: 'http://corpus@127.0.0.1/1',
  transport: (options) => Sentry.createTransport(options, async () => ({ statusCode: 200 })),
  tracesSampleRate: 1.0,
  serverName: 'mcptrace-corpus-server',
  release: 'mcptrace-corpus-server@1.0.0',
  environment: 'corpus',
  sendDefaultPii: false,
  integrations: [Sentry.httpIntegration({ ignoreIncomingRequests: (path) => path.startsWith('/_peer/') })],
  openTelemetrySpanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/traces` }))],
});
