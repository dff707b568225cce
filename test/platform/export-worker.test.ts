import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WorkerSpanExporter, workerProtocol } from '../../src/observability/export-worker';
import { startOtlpReceiver } from '../helpers/otlp';
import { freePort } from '../helpers/process';

// The OTLP exporter whose HTTP client runs in a worker thread (src/observability/export-worker.ts),
// against real receivers: the test's own OTLP/HTTP JSON receiver, and a plain HTTP server that
// keeps what a protobuf export sends as bytes (test/helpers/receiver.ts reads bodies as UTF-8).

/** Finished spans of a real SDK tracer, as the batch processor hands them to an exporter. */
function finishedSpans(...names: string[]): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const tracer = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] }).getTracer('export-worker-test');
  for (const name of names) tracer.startSpan(name).end();
  return memory.getFinishedSpans();
}

const exported = (exporter: WorkerSpanExporter, spans: ReadableSpan[]) =>
  new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));

describe('WorkerSpanExporter', () => {
  const VARIABLES = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TIMEOUT', 'OTEL_LOG_LEVEL'];
  const saved = VARIABLES.map((name) => process.env[name]);
  const exporters: WorkerSpanExporter[] = [];
  const make = (protocol: 'http/json' | 'http/protobuf', endpoint: string) => {
    // The worker reads the standard variables, as the SDK's exporter does.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    const exporter = new WorkerSpanExporter(protocol);
    exporters.push(exporter);
    return exporter;
  };
  afterEach(async () => {
    // Restored in place: a worker thread starts with the process's real environment, which
    // assigning a new object to process.env would no longer reach.
    VARIABLES.forEach((name, i) => (saved[i] === undefined ? delete process.env[name] : (process.env[name] = saved[i])));
    for (const e of exporters.splice(0)) await e.shutdown();
  });

  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  beforeAll(async () => {
    otlp = await startOtlpReceiver();
  });
  afterAll(async () => {
    await otlp?.close();
  });

  it('sends a batch over OTLP/HTTP JSON from another thread: the main thread makes no HTTP request', async () => {
    const spans = finishedSpans('first', 'second');
    const traceIds = new Set(spans.map((s) => s.spanContext().traceId));
    // node:http announces every client request on this channel, in the thread that makes it.
    const requests: unknown[] = [];
    const onRequest = (message: unknown) => requests.push(message);
    diagnostics.subscribe('http.client.request.start', onRequest);
    try {
      const exporter = make('http/json', otlp.url);
      expect(await exported(exporter, spans)).toEqual({ code: ExportResultCode.SUCCESS });
      await otlp.until((got) => got.filter((s) => traceIds.has(s.traceId)).length === 2);
    } finally {
      diagnostics.unsubscribe('http.client.request.start', onRequest);
    }
    expect(otlp.spans.filter((s) => traceIds.has(s.traceId)).map((s) => s.name).sort()).toEqual(['first', 'second']);
    expect(requests).toEqual([]);
  });

  it('sends OTLP/HTTP protobuf (the default protocol) with its content type, the ids as bytes', async () => {
    const bodies: { type?: string; path?: string; body: Buffer }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({ type: req.headers['content-type'], path: req.url, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const [span] = finishedSpans('protobuf span');
      const exporter = make('http/protobuf', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      expect(await exported(exporter, [span])).toEqual({ code: ExportResultCode.SUCCESS });
      expect(bodies).toHaveLength(1);
      expect(bodies[0].type).toBe('application/x-protobuf');
      expect(bodies[0].path).toBe('/v1/traces');
      expect(bodies[0].body.includes(Buffer.from(span.spanContext().traceId, 'hex'))).toBe(true);
      expect(bodies[0].body.includes(Buffer.from('protobuf span'))).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reports a receiver that refuses the batch as a failed export, and one that cannot be reached', async () => {
    // The JSON receiver answers protobuf with 415: a failure that is not retried.
    const refused = make('http/protobuf', otlp.url);
    const result = await exported(refused, finishedSpans('refused'));
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(String(result.error?.message)).toMatch(/415|Unsupported/i);

    process.env.OTEL_EXPORTER_OTLP_TIMEOUT = '2000';
    const unreachable = make('http/json', `http://127.0.0.1:${await freePort()}`);
    expect((await exported(unreachable, finishedSpans('unreachable'))).code).toBe(ExportResultCode.FAILED);
  });

  it('flushes what was handed over on shutdown, then refuses further batches', async () => {
    const exporter = make('http/json', otlp.url);
    const spans = finishedSpans('before shutdown');
    const traceId = spans[0].spanContext().traceId;
    const result = exported(exporter, spans);
    await exporter.shutdown();
    expect(await result).toEqual({ code: ExportResultCode.SUCCESS });
    expect(otlp.spans.some((s) => s.traceId === traceId)).toBe(true);
    expect((await exported(exporter, finishedSpans('after shutdown'))).code).toBe(ExportResultCode.FAILED);
  });

  it("logs what the receiver answers as a partial success through the main thread's diag logger, at OTEL_LOG_LEVEL", async () => {
    // A receiver that keeps one span of two and says so, as a collector over its limits would.
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ partialSuccess: { rejectedSpans: 1, errorMessage: 'span too old' } })));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const lines: string[] = [];
    const keep = (...args: unknown[]) => lines.push(args.map(String).join(' '));
    diag.setLogger({ error: keep, warn: keep, info: keep, debug: keep, verbose: keep }, DiagLogLevel.WARN);
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      // Without OTEL_LOG_LEVEL the worker logs nothing, as the SDK's exporter would not.
      expect((await exported(make('http/json', url), finishedSpans('quiet'))).code).toBe(ExportResultCode.SUCCESS);
      process.env.OTEL_LOG_LEVEL = 'warn';
      expect((await exported(make('http/json', url), finishedSpans('kept', 'rejected'))).code).toBe(ExportResultCode.SUCCESS);
      // The line crosses from the worker before or after the outcome: wait for it, briefly.
      for (let i = 0; i < 50 && !lines.length; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/partial success/i);
      expect(lines[0]).toContain('span too old');
    } finally {
      diag.disable();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('serves OTLP over HTTP only; other exporters and protocols stay the SDK\'s', () => {
    expect(workerProtocol({})).toBe('http/protobuf');
    expect(workerProtocol({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('http/json');
    expect(workerProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toBe('http/protobuf');
    expect(workerProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBeUndefined();
    expect(workerProtocol({ OTEL_TRACES_EXPORTER: 'console' })).toBeUndefined();
    expect(workerProtocol({ OTEL_TRACES_EXPORTER: 'otlp,console' })).toBeUndefined();
  });
});
