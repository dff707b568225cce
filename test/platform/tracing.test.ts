import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers/app';
import { startOtlpReceiver } from '../helpers/otlp';
import { parseMetrics, total } from '../helpers/prometheus';
import { freePort, serviceTenant, startService, type ServiceProcess } from '../helpers/process';
import { startReceiver } from '../helpers/receiver';
import { testDatabaseUrl } from '../helpers/database';

// The OpenTelemetry SDK patches http, pg and graphql as they load: tracing is tested on a real
// service process (src/main.ts), exporting to a real OTLP/HTTP receiver.

/** A caller's W3C traceparent in `traceId`, from a span of its own; flags 01: sampled. */
const traceparent = (traceId: string, flags = '01') => `00-${traceId}-${randomBytes(8).toString('hex')}-${flags}`;
describe('tracing (OpenTelemetry, OTLP/HTTP)', () => {
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let service: ServiceProcess;
  let tenant: { key: string; keyId: string };
  let metricsPort: number;
  const SERVER = 2; // SpanKind.SERVER in OTLP

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    metricsPort = await freePort();
    service = await startService({
      METRICS_PORT: String(metricsPort),
      DATABASE_URL: testDatabaseUrl(),
      ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'community-api-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    tenant = await serviceTenant(service.url, ADMIN_TOKEN, 'traced');
  });
  afterAll(async () => {
    await service?.stop();
    await otlp?.close();
  });

  it('one GET /api/v1/groups with a traceparent: HTTP span -> operation span -> SQL spans, in the caller\'s trace; the log line carries its ids', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const res = await fetch(`${service.url}/api/v1/groups`, {
      headers: { 'x-api-key': tenant.key, traceparent: `00-${traceId}-${callerSpan}-01`, 'x-request-id': 'trace-test-1' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('trace-test-1');
    await otlp.until((spans) => spans.some((s) => s.traceId === traceId && s.kind === SERVER) && spans.some((s) => s.traceId === traceId && s.name.startsWith('query ')));
    // Let the SQL spans' batch arrive too.
    await otlp.until((spans) => spans.filter((s) => s.traceId === traceId).length >= 3);
    const trace = otlp.spans.filter((s) => s.traceId === traceId);
    const server = trace.find((s) => s.kind === SERVER)!;
    expect(server.parentSpanId).toBe(callerSpan);
    expect(server.name).toBe('GET /api/v1/groups');
    expect(server.attributes['http.route']).toBe('/api/v1/groups');
    const operation = trace.find((s) => s.name === 'query getGroups')!;
    expect(operation, trace.map((s) => s.name).join(', ')).toBeDefined();
    expect(operation.parentSpanId).toBe(server.spanId);
    const sql = trace.filter((s) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql');
    // The operation's statements are its children; the gate's (key lookup, rate limit) run before it, under the HTTP span.
    expect(sql.filter((s) => s.parentSpanId === operation.spanId).length).toBeGreaterThanOrEqual(1);
    expect(sql.filter((s) => s.parentSpanId === server.spanId).length).toBeGreaterThanOrEqual(1);
    for (const s of sql) expect([operation.spanId, server.spanId], s.name).toContain(s.parentSpanId);
    // The statements as written, with placeholders: no value (the community set for row-level
    // security, a page's parameters) reaches a trace. (The rate-limit count's own set_config of
    // synchronous_commit is part of its text: src/rate-limit/limiter.ts.)
    for (const s of sql) {
      const text = String(s.attributes['db.query.text'] ?? s.attributes['db.statement']);
      expect(text).not.toMatch(/set_config\((?!'synchronous_commit', 'off', true\))|\bexecute\s+t_|'[0-9a-f]{8}-[0-9a-f]{4}-/i);
    }
    expect(sql.some((s) => String(s.attributes['db.query.text'] ?? s.attributes['db.statement']).includes('$1'))).toBe(true);
    // No span per field resolver.
    expect(trace.filter((s) => s.name.startsWith('graphql.resolve'))).toEqual([]);
    // Probes make no traces.
    await fetch(`${service.url}/readyz`);

    const line = service
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'request' && l.requestId === 'trace-test-1');
    expect(line).toMatchObject({ route: '/api/v1/groups', status: 200, keyId: tenant.keyId, trace_id: traceId, span_id: server.spanId });
    expect(typeof line.ms).toBe('number');
    expect(JSON.stringify(line)).not.toContain(tenant.key);
  });

  it('the service\'s boot makes no trace: building the schema and compiling the facade\'s documents are nobody\'s request', async () => {
    // A request first, so that a batch has surely been exported since the boot (BSP delay 100 ms).
    const traceId = randomBytes(16).toString('hex');
    await fetch(`${service.url}/api/v1/groups`, { headers: { 'x-api-key': tenant.key, traceparent: traceparent(traceId) } });
    await otlp.until((spans) => spans.some((s) => s.traceId === traceId && s.kind === SERVER));
    // Every trace starts at a request's server span or a job's span; before, graphql-js's
    // instrumentation made a root trace for each document parsed and validated at boot.
    const roots = otlp.spans.filter((s) => !s.parentSpanId);
    expect(roots.filter((s) => s.kind !== SERVER && !s.name.startsWith('job ')).map((s) => s.name)).toEqual([]);
  });

  it('a request the gate refuses (401) is still named by its route template, as its metrics and log line are', async () => {
    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(`${service.url}/api/v1/groups/some-group`, { headers: { 'x-api-key': 'cm_not-a-key', traceparent: traceparent(traceId) } });
    expect(res.status).toBe(401);
    await otlp.until((spans) => spans.some((s) => s.traceId === traceId && s.kind === SERVER));
    const server = otlp.spans.find((s) => s.traceId === traceId && s.kind === SERVER)!;
    expect(server.name).toBe('GET /api/v1/groups/:identifier');
    expect(server.attributes['http.route']).toBe('/api/v1/groups/:identifier');
    expect(Number(server.attributes['http.response.status_code'])).toBe(401);
    // A path no route serves keeps the bare method: its name never carries the raw path.
    const unknown = randomBytes(16).toString('hex');
    expect((await fetch(`${service.url}/no-such-thing/42`, { headers: { traceparent: traceparent(unknown) } })).status).toBe(404);
    await otlp.until((spans) => spans.some((s) => s.traceId === unknown && s.kind === SERVER));
    const bare = otlp.spans.find((s) => s.traceId === unknown && s.kind === SERVER)!;
    expect(bare.name).toBe('GET');
    expect(bare.attributes['http.route']).toBeUndefined();
  });

  it('POST /graphql: the operation and its SQL stay in the request\'s trace after the body is read; the server span has the status code', async () => {
    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'x-api-key': tenant.key, 'content-type': 'application/json', traceparent: traceparent(traceId) },
      body: JSON.stringify({ query: 'query Traced { groups(limit: 5) { results { id } } }' }),
    });
    expect(res.status).toBe(200);
    await otlp.until((spans) => spans.some((s) => s.traceId === traceId && s.name === 'query Traced') && spans.some((s) => s.traceId === traceId && s.kind === SERVER));
    await otlp.until((spans) => spans.filter((s) => s.traceId === traceId).length >= 3);
    const trace = otlp.spans.filter((s) => s.traceId === traceId);
    const server = trace.find((s) => s.kind === SERVER)!;
    expect(server.name).toBe('POST /graphql');
    expect(Number(server.attributes['http.response.status_code'])).toBe(200);
    expect(server.attributes['http.request.method']).toBe('POST');
    // The operation's span (graphql-js's own execute span, on a document's first run, is its child).
    const ops = trace.filter((s) => s.name === 'query Traced');
    const operation = ops.find((s) => !ops.some((o) => o.spanId === s.parentSpanId))!;
    expect(operation.parentSpanId).toBe(server.spanId);
  });

  it('a caller\'s unsampled traceparent (flags 00) is followed: nothing of that request is exported, nor any trace of its own', async () => {
    const unsampled = randomBytes(16).toString('hex');
    const sampled = randomBytes(16).toString('hex');
    const known = new Set(otlp.spans.map((s) => s.traceId));
    const get = (traceId: string, flags: string) =>
      fetch(`${service.url}/api/v1/groups`, { headers: { 'x-api-key': tenant.key, traceparent: traceparent(traceId, flags) } });
    expect((await get(unsampled, '00')).status).toBe(200);
    // /graphql too: its parse and validation (graphql-js's instrumentation) start no trace of their own.
    const gql = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'x-api-key': tenant.key, 'content-type': 'application/json', traceparent: traceparent(unsampled, '00') },
      body: JSON.stringify({ query: 'query Unsampled { groups(limit: 1) { size } }' }),
    });
    expect(gql.status).toBe(200);
    expect((await get(sampled, '01')).status).toBe(200);
    // The sampled request's spans arrive after the unsampled ones' would have.
    await otlp.until((spans) => spans.some((s) => s.traceId === sampled && s.name === 'query getGroups'));
    // HTTP, operation and page SQL (with REDIS_URL the rate limit makes no SQL span).
    await otlp.until((spans) => spans.filter((s) => s.traceId === sampled).length >= 3);
    expect(otlp.spans.filter((s) => s.traceId === unsampled)).toEqual([]);
    // A trace of its own has a root span. The service's job worker shares the run's database and
    // queue with the other test files, so their jobs run here too, each a trace of its own (a
    // `job ...` root): those are not the request's.
    const roots = otlp.spans.filter((s) => !known.has(s.traceId) && s.traceId !== sampled && !s.parentSpanId);
    expect(roots.filter((s) => !s.name.startsWith('job ')).map((s) => s.name)).toEqual([]);
  });

  it('a job queued by a request starts its own trace, linked to the request\'s', async () => {
    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(`${service.url}/api/v1/triggers/groups/import`, {
      method: 'POST',
      headers: { 'x-api-key': tenant.key, 'content-type': 'application/json', traceparent: traceparent(traceId) },
      body: JSON.stringify({ groups: [{ externalId: 'traced-1', name: 'Traced' }] }),
    });
    expect(res.status).toBe(202);
    await otlp.until((spans) => spans.some((s) => s.name === 'job import_run' && s.links.some((l) => l.traceId === traceId)));
    const job = otlp.spans.find((s) => s.name === 'job import_run' && s.links.some((l) => l.traceId === traceId))!;
    expect(job.traceId).not.toBe(traceId);
    expect(job.parentSpanId).toBe('');
    // Its SQL is in its own trace.
    await otlp.until((spans) => spans.some((s) => s.traceId === job.traceId && s.parentSpanId === job.spanId));
  });

  it('a webhook delivery sends traceparent to the receiver, from the delivery job\'s trace', async () => {
    const receiver = await startReceiver();
    try {
      const created = await fetch(`${service.url}/api/v1/webhook_endpoints`, {
        method: 'POST',
        headers: { 'x-api-key': tenant.key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url(), events: ['group.created'] }),
      });
      expect(created.status).toBe(201);
      const write = await fetch(`${service.url}/api/v1/groups`, {
        method: 'POST',
        headers: { 'x-api-key': tenant.key, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'hooked' }),
      });
      expect(write.status).toBe(201);
      const deadline = Date.now() + 20_000;
      while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(receiver.received.length).toBeGreaterThan(0);
      const sent = receiver.received[0].headers.traceparent;
      expect(sent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      const [, deliveryTrace, clientSpan] = sent.split('-');
      await otlp.until((spans) => spans.some((s) => s.traceId === deliveryTrace && s.name === 'job webhooks:deliver'));
      const job = otlp.spans.find((s) => s.traceId === deliveryTrace && s.name === 'job webhooks:deliver')!;
      await otlp.until((spans) => spans.some((s) => s.spanId === clientSpan));
      // The outgoing POST's client span is a child of the delivery job's span.
      expect(otlp.spans.find((s) => s.spanId === clientSpan)!.parentSpanId).toBe(job.spanId);
      // And the delivery is counted, with its lag.
      // METRICS_PORT: /metrics there only, not on the service's port.
      expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
      const metrics = parseMetrics(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
      expect(total(metrics, 'webhook_delivery_attempts_total', { outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
      expect(total(metrics, 'webhook_delivery_lag_seconds_count')).toBeGreaterThanOrEqual(1);
    } finally {
      await receiver.stop();
    }
  });
});

// OTEL_TRACES_SAMPLER=parentbased_traceidratio: a request without its caller's trace context is
// drawn before any OpenTelemetry call (src/observability/sampling.ts).
describe('tracing, sampling drawn before any span (parentbased_traceidratio)', () => {
  const SERVER = 2;
  const started: { otlp: Awaited<ReturnType<typeof startOtlpReceiver>>; service: ServiceProcess; key: string }[] = [];
  const traced = async (ratio: string) => {
    const otlp = await startOtlpReceiver();
    const service = await startService({
      DATABASE_URL: testDatabaseUrl(),
      ADMIN_TOKEN,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: ratio,
    });
    const { key } = await serviceTenant(service.url, ADMIN_TOKEN, `drawn ${ratio}`);
    started.push({ otlp, service, key });
    return { otlp, service, key };
  };
  afterAll(async () => {
    for (const s of started) {
      await s.service.stop();
      await s.otlp.close();
    }
  });

  it('at 0: a request without trace context makes no trace at all; a caller\'s sampled traceparent is still followed', async () => {
    const { otlp, service, key } = await traced('0');
    const known = new Set(otlp.spans.map((s) => s.traceId));
    for (let i = 0; i < 5; i++) expect((await fetch(`${service.url}/api/v1/groups`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const caller = randomBytes(16).toString('hex');
    const res = await fetch(`${service.url}/api/v1/groups`, { headers: { 'x-api-key': key, traceparent: traceparent(caller) } });
    expect(res.status).toBe(200);
    // The followed request's spans arrive after any the five would have made.
    await otlp.until((spans) => spans.filter((s) => s.traceId === caller).length >= 3);
    const roots = otlp.spans.filter((s) => !known.has(s.traceId) && s.traceId !== caller && !s.parentSpanId);
    expect(roots.filter((s) => !s.name.startsWith('job ')).map((s) => s.name)).toEqual([]);
  });

  it('a drawn request is a whole trace of its own: the server span as its root, the operation and its SQL under it', async () => {
    // Drawn with a probability of 1 - 1e-9: every request here is.
    const { otlp, service, key } = await traced('0.999999999');
    const res = await fetch(`${service.url}/api/v1/groups`, { headers: { 'x-api-key': key, 'x-request-id': 'drawn-1' } });
    expect(res.status).toBe(200);
    await otlp.until((spans) => spans.some((s) => s.kind === SERVER && s.name === 'GET /api/v1/groups'));
    const server = otlp.spans.find((s) => s.kind === SERVER && s.name === 'GET /api/v1/groups')!;
    expect(server.parentSpanId).toBeFalsy();
    await otlp.until((spans) => spans.filter((s) => s.traceId === server.traceId).length >= 3);
    const trace = otlp.spans.filter((s) => s.traceId === server.traceId);
    const operation = trace.find((s) => s.name === 'query getGroups')!;
    expect(operation?.parentSpanId).toBe(server.spanId);
    const sql = trace.filter((s) => s.attributes['db.system.name'] === 'postgresql' || s.attributes['db.system'] === 'postgresql');
    expect(sql.filter((s) => s.parentSpanId === operation.spanId).length).toBeGreaterThanOrEqual(1);
  });
});
