import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  links: { traceId: string; spanId: string }[];
  attributes: Record<string, unknown>;
}

/** OTLP/JSON ids are hex; protobuf-JSON mappings use base64: accept both. */
const hex = (id: string | undefined, bytes: number): string => {
  if (!id) return '';
  if (new RegExp(`^[0-9a-f]{${bytes * 2}}$`).test(id)) return id;
  return Buffer.from(id, 'base64').toString('hex');
};

const attributes = (list: { key: string; value: Record<string, unknown> }[] | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, Object.values(a.value)[0]]));

/**
 * A real OTLP/HTTP trace receiver (JSON encoding, `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`):
 * what @opentelemetry/exporter-trace-otlp-http sends to `POST /v1/traces`, decoded into spans.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces' && /json/.test(req.headers['content-type'] ?? '')) {
        const payload = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: any[] }[] }[] };
        for (const rs of payload.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                traceId: hex(s.traceId, 16),
                spanId: hex(s.spanId, 8),
                parentSpanId: hex(s.parentSpanId, 8),
                name: s.name,
                kind: s.kind,
                links: (s.links ?? []).map((l: any) => ({ traceId: hex(l.traceId, 16), spanId: hex(l.spanId, 8) })),
                attributes: attributes(s.attributes),
              });
            }
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else res.writeHead(415).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    spans,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Waits until `done(spans)` holds (spans arrive in batches). */
    async until(done: (spans: ReceivedSpan[]) => boolean, timeoutMs = 20_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!done(spans)) {
        if (Date.now() > deadline) throw new Error(`spans not received in time; got: ${spans.map((s) => s.name).join(', ')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
