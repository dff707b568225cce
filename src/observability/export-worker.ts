import { Worker } from 'node:worker_threads';
import { diag } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';

/**
 * The OTLP/HTTP trace exporter, with its HTTP client in a worker thread.
 *
 * What the SDK's own exporter (@opentelemetry/exporter-trace-otlp-proto or -http) does on the
 * main thread, a POST to the collector every few seconds, made every request of the service
 * dearer: node:http's client and server share their JavaScript (the parser's callbacks, the
 * outgoing message, the stream writes), and the client's objects turned the server's
 * optimised code polymorphic. A process that posted 30 KB every half second and traced
 * nothing used 4% more CPU per response than one that did not; tracing at 1% cost 6-9%, and
 * 3-4% with this exporter (docs/performance.md, "Observability overhead"). Here the main thread only encodes a
 * batch (the SDK's own serializer) and hands the bytes over; the worker sends them with the
 * SDK's own OTLP/HTTP transport, configured by the same `OTEL_EXPORTER_OTLP_*` variables
 * (endpoint, headers, timeout, compression, retries, concurrency), and answers with the
 * outcome, which the batch processor handles as the SDK's exporter's.
 *
 * Used for `OTEL_TRACES_EXPORTER` otlp (the default) over `http/protobuf` (the default) or
 * `http/json`; anything else (grpc, zipkin, console) is the SDK's, as configured.
 */
export type HttpProtocol = 'http/protobuf' | 'http/json';

/** The protocol this exporter serves for the environment, or undefined: the SDK's own exporter. */
export function workerProtocol(env: NodeJS.ProcessEnv): HttpProtocol | undefined {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim()).filter((s) => s && s !== 'null');
  if (exporters.length > 1 || (exporters.length === 1 && exporters[0] !== 'otlp')) return undefined;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  return protocol === 'http/protobuf' || protocol === 'http/json' ? protocol : undefined;
}

/** A batch, encoded, and how many spans it holds (the transport's own metrics count them). */
interface Batch {
  id: number;
  bytes: Uint8Array;
  count: number;
}

interface Outcome {
  id: number;
  ok: boolean;
  error?: string;
}

/** The diag logger's methods, forwarded from the worker by name. */
const LEVELS = ['error', 'warn', 'info', 'debug', 'verbose'] as const;

/** A line the worker's transport logged, for the main thread's diag logger. */
interface Log {
  log: (typeof LEVELS)[number];
  args: string[];
}

/**
 * The worker: the SDK's OTLP/HTTP export delegate (retrying transport, bounded concurrency,
 * partial-success logging) over batches already encoded. Plain CommonJS evaluated in the
 * worker (`eval`), so that it runs the same from `dist/` and from the TypeScript sources; the
 * modules it needs are resolved by the main thread and passed in.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createOtlpHttpExportDelegate, convertLegacyHttpOptions } = require(workerData.exporterBase);
const transformer = require(workerData.transformer);
const decoder = transformer[workerData.serializer];
// What the transport logs (a receiver's partial success, a retry, a failure) goes to the main
// thread's diag logger, at the level OTEL_LOG_LEVEL sets there, as the SDK's exporter's would.
const level = process.env.OTEL_LOG_LEVEL;
if (level) {
  const { diag } = require(workerData.api);
  const { diagLogLevelFromString } = require(workerData.core);
  const { inspect } = require('node:util');
  const forward = (log) => (...args) => parentPort.postMessage({ log, args: args.map((a) => (typeof a === 'string' ? a : inspect(a))) });
  const logger = Object.fromEntries(workerData.levels.map((log) => [log, forward(log)]));
  diag.setLogger(logger, { logLevel: diagLogLevelFromString(level) });
}
const delegate = createOtlpHttpExportDelegate(
  convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': workerData.contentType }),
  { serializeRequest: (batch) => batch.bytes, deserializeResponse: (data) => decoder.deserializeResponse(data) },
  'otlp_http_span_exporter',
  { name: 'span', countItems: (batch) => batch.count },
);
parentPort.on('message', (message) => {
  if (message === 'shutdown') {
    delegate.shutdown().then(() => parentPort.postMessage('shutdown'), () => parentPort.postMessage('shutdown'));
    return;
  }
  delegate.export(message, (result) => {
    parentPort.postMessage({ id: message.id, ok: result.code === 0, error: result.error ? String(result.error.message || result.error) : undefined });
  });
});
`;

export class WorkerSpanExporter implements SpanExporter {
  private readonly worker: Worker;
  private readonly serializer: typeof ProtobufTraceSerializer | typeof JsonTraceSerializer;
  /** Batches handed over and not yet answered: their callbacks, and a promise settled with them. */
  private readonly pending = new Map<number, { done: (result: ExportResult) => void; settled: Promise<void>; settle: () => void }>();
  private nextId = 1;
  private gone: string | undefined;
  private stopped: Promise<void> | undefined;

  constructor(protocol: HttpProtocol) {
    const json = protocol === 'http/json';
    this.serializer = json ? JsonTraceSerializer : ProtobufTraceSerializer;
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        exporterBase: require.resolve('@opentelemetry/otlp-exporter-base/node-http'),
        transformer: require.resolve('@opentelemetry/otlp-transformer'),
        api: require.resolve('@opentelemetry/api'),
        core: require.resolve('@opentelemetry/core'),
        levels: LEVELS,
        serializer: json ? 'JsonTraceSerializer' : 'ProtobufTraceSerializer',
        contentType: json ? 'application/json' : 'application/x-protobuf',
      },
    });
    // An idle exporter does not keep the process alive (shutdown holds it while it flushes).
    this.worker.unref();
    this.worker.on('message', (message: Outcome | Log | 'shutdown') => {
      if (message === 'shutdown') return;
      if ('log' in message) return LEVELS.includes(message.log) ? diag[message.log](...(message.args as [string, ...string[]])) : undefined;
      this.answer(message.id, message.ok ? { code: ExportResultCode.SUCCESS } : { code: ExportResultCode.FAILED, error: new Error(message.error ?? 'OTLP export failed') });
    });
    this.worker.on('error', (err) => diag.error('OTLP export worker failed', err));
    // The worker gone: what was waiting fails, and so does every later batch.
    this.worker.on('exit', () => {
      this.gone = 'the OTLP export worker stopped';
      for (const id of [...this.pending.keys()]) this.answer(id, { code: ExportResultCode.FAILED, error: new Error(this.gone) });
    });
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const refused = this.stopped ? 'exporter shut down' : this.gone;
    if (refused) return resultCallback({ code: ExportResultCode.FAILED, error: new Error(refused) });
    const bytes = this.serializer.serializeRequest(spans);
    if (!bytes) return resultCallback({ code: ExportResultCode.FAILED, error: new Error('nothing to send') });
    const batch: Batch = { id: this.nextId++, bytes, count: spans.length };
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    this.pending.set(batch.id, { done: resultCallback, settled, settle });
    // The bytes move to the worker when they own their buffer; else they are copied.
    const whole = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    this.worker.postMessage(batch, whole ? [bytes.buffer as ArrayBuffer] : []);
  }

  /** Waits until every batch handed over has been sent, or has failed. */
  async forceFlush(): Promise<void> {
    if (!this.pending.size) return;
    this.worker.ref();
    try {
      await Promise.all([...this.pending.values()].map((p) => p.settled));
    } finally {
      this.worker.unref();
    }
  }

  shutdown(): Promise<void> {
    return (this.stopped ??= (async () => {
      await this.forceFlush();
      if (!this.gone) {
        // The transport's own shutdown (its sockets), then the thread.
        this.worker.ref();
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5_000);
          const finish = () => (clearTimeout(timer), resolve());
          this.worker.on('message', (m) => m === 'shutdown' && finish());
          this.worker.once('exit', finish);
          this.worker.postMessage('shutdown');
        });
      }
      await this.worker.terminate();
    })());
  }

  private answer(id: number, result: ExportResult): void {
    const batch = this.pending.get(id);
    if (!batch) return;
    this.pending.delete(id);
    batch.settle();
    batch.done(result);
  }
}
