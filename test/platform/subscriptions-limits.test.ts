import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { ADMIN_TOKEN, startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { startService, type ServiceProcess } from '../helpers/process';
import { sleep } from '../helpers/jobs';
import { testDatabaseUrl } from '../helpers/database';

/**
 * graphql-ws subscriptions under the governance of HTTP requests, against a real service
 * process: the document limits, the key's hourly budget and scopes, the caps per connection
 * and per key, the message size limit.
 */
let app: TestApp;
let service: ServiceProcess;
const PER_CONNECTION = 3;
const PER_KEY = 5;

beforeAll(async () => {
  app = await startTestApp();
  service = await startService({
    DATABASE_URL: testDatabaseUrl(),
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: String(PER_CONNECTION),
    GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_KEY: String(PER_KEY),
    // Revocation by the test app (another instance) is seen at once.
    KEY_CACHE_TTL_MS: '0',
  });
}, 120_000);
afterAll(async () => {
  await service?.stop();
  await app?.close();
});

const EVENTS = 'subscription { events { id type data } }';
type Ev = { id: string; type: string; data: Record<string, any> };
type Err = { message: string; extensions?: Record<string, any> };

interface Sub {
  events: Ev[];
  errors: Err[];
  closed?: { code: number; reason: string };
  done: boolean;
  stop(): void;
}

const wsUrl = () => service.url.replace('http', 'ws') + '/graphql';

function connect(key: string): Client {
  // A refused connection reaches each subscription's sink; onNonLazyError would print it again.
  return createClient({ url: wsUrl(), webSocketImpl: WebSocket, connectionParams: { apiKey: key }, retryAttempts: 0, lazy: false, onNonLazyError: () => undefined });
}

function subscribe(client: Client, query = EVENTS, variables?: Record<string, unknown>): Sub {
  const sub: Sub = { events: [], errors: [], done: false, stop: () => undefined };
  sub.stop = client.subscribe(
    { query, variables },
    {
      next: (msg) => (msg.errors ? sub.errors.push(...(msg.errors as Err[])) : sub.events.push((msg.data as { events: Ev }).events)),
      error: (e) => {
        if (Array.isArray(e)) sub.errors.push(...e);
        else sub.closed = { code: (e as { code: number }).code, reason: (e as { reason: string }).reason };
        sub.done = true;
      },
      complete: () => (sub.done = true),
    },
  );
  return sub;
}

/** Polls `cond` (a bound on a hang, not a timing assertion). */
async function until(cond: () => boolean, what: string) {
  for (const deadline = Date.now() + 15_000; !cond(); await sleep(20)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

async function createGroup(t: Tenant, name: string): Promise<string> {
  const res = await fetch(`${service.url}/api/v1/groups`, {
    method: 'POST',
    headers: { 'x-api-key': t.key, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/**
 * Writes until every subscription in `live` has received an event of these writes: each
 * was live (a subscribe is registered some time after it is sent, so one write may be early).
 */
async function proveLive(t: Tenant, live: Sub[], name: string) {
  const ids = new Set<string>();
  const seen = () => live.every((s) => s.events.some((e) => ids.has(e.data.id)));
  for (let round = 0; !seen(); round++) {
    if (round === 30) throw new Error(`${name}: not every subscription received an event`);
    ids.add(await createGroup(t, `${name} ${round}`));
    for (const until = Date.now() + 500; Date.now() < until && !seen(); ) await sleep(20);
  }
}

describe('document limits over graphql-ws', () => {
  it('a document over the alias, directive, token or nesting limit gets an error message naming the limit; the connection keeps serving', async () => {
    const t = await app.tenant();
    const client = connect(t.key);
    const aliases = subscribe(client, `subscription { events { ${Array.from({ length: 16 }, (_, i) => `a${i}: id`).join(' ')} } }`);
    const directives = subscribe(client, `subscription { events { id ${Array.from({ length: 21 }, () => '@include(if: true)').join(' ')} } }`);
    const tokens = subscribe(client, `subscription { events { ${Array.from({ length: 6000 }, () => 'id').join(' ')} } }`);
    const syntax = subscribe(client, 'subscription { events { id }');
    const query = subscribe(client, '{ groups { size } }');
    const nul = subscribe(client, 'subscription($types: [String!]) { events(types: $types) { id } }', { types: ['group.created\u0000'] });
    const deep = subscribe(client, `subscription { events(types: ${'['.repeat(100)}"group.created"${']'.repeat(100)}) { id } }`);
    const refused = [aliases, directives, tokens, syntax, query, nul, deep];
    await until(() => refused.every((s) => s.done), 'the refusals');

    for (const s of refused) {
      expect(s.closed).toBeUndefined(); // an error message, not a closed socket
      expect(s.events).toEqual([]);
      expect(s.errors.length).toBeGreaterThan(0);
      expect(JSON.stringify(s.errors)).not.toMatch(/at .*\.(js|ts)|Internal/);
    }
    expect(aliases.errors[0].message).toMatch(/^Aliases limit of 15 exceeded, found 16/);
    expect(aliases.errors[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(directives.errors[0].message).toMatch(/^Directives limit of 20 exceeded, found 21/);
    expect(tokens.errors[0].message).toMatch(/5000 tokens/);
    expect(tokens.errors[0].extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(syntax.errors[0].extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(deep.errors[0]).toMatchObject({ message: expect.stringMatching(/more than 64 levels deep/), extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
    expect(query.errors[0]).toMatchObject({ message: expect.stringMatching(/^Only subscriptions are served over WebSocket/), extensions: { code: 'VALIDATION' } });
    expect(nul.errors[0]).toMatchObject({ extensions: { code: 'VALIDATION', errors: [{ path: ['types', 0] }] } });

    // Refused documents took no slot: the connection still subscribes up to its cap.
    const ok = [subscribe(client), subscribe(client), subscribe(client)];
    await proveLive(t, ok, 'After refusals');
    for (const s of ok) expect(s.errors).toEqual([]);
    await client.dispose();
  });
});

describe('the key budget, scopes and revocation over graphql-ws', () => {
  it('each subscribe counts as one request of the key; over the budget: RATE_LIMITED and nothing subscribed', async () => {
    const t = await app.tenant({ rateLimitPerHour: 2 });
    const client = connect(t.key);
    const subs = [subscribe(client), subscribe(client), subscribe(client)];
    await until(() => subs.some((s) => s.done), 'the refusal');
    const refused = subs.filter((s) => s.done);
    expect(refused.length).toBe(1);
    expect(refused[0].closed).toBeUndefined();
    expect(refused[0].errors).toEqual([
      { message: 'The API key exceeded its hourly request allowance', extensions: { code: 'RATE_LIMITED', retryAfter: expect.any(Number) } },
    ]);
    expect(refused[0].errors[0].extensions!.retryAfter).toBeGreaterThan(3500);
    // The same budget as HTTP: two subscribes spent it.
    const res = await fetch(`${service.url}/api/v1/groups`, { headers: { 'x-api-key': t.key } });
    expect(res.status).toBe(429);
    await client.dispose();
  });

  it('a key without events:read gets FORBIDDEN; a key revoked while subscribed has its socket closed (4403)', async () => {
    const narrow = await app.tenant({ scopes: ['groups'] });
    const c1 = connect(narrow.key);
    const forbidden = subscribe(c1);
    await until(() => forbidden.done, 'the refusal');
    expect(forbidden.errors.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    await c1.dispose();

    const t = await app.tenant();
    const c2 = connect(t.key);
    const before = subscribe(c2);
    await proveLive(t, [before], 'Before revocation');
    // revoked by another instance (the test app): the service sees it at its next check of the
    // open connections' keys (every second here: KEY_CACHE_TTL_MS 0) and ends the subscription
    await app.operator('mutation($id: ID!) { revokeApiKey(id: $id) }', { id: t.keyId });
    await until(() => before.done, 'the close');
    expect(before.closed).toEqual({ code: 4403, reason: 'The API key has been revoked' });
    await c2.dispose();

    // and connecting with it closes the socket with 4403, as before
    const c3 = connect(t.key);
    const refused = subscribe(c3);
    await until(() => refused.done, 'the close');
    expect(refused.closed).toEqual({ code: 4403, reason: 'The API key has been revoked' });
    await c3.dispose();
  });
});

describe('resource caps', () => {
  it(`at most ${PER_CONNECTION} live subscriptions per connection and ${PER_KEY} per key; a completed one frees its slot`, async () => {
    const t = await app.tenant();
    const c1 = connect(t.key);
    const first = Array.from({ length: PER_CONNECTION + 1 }, () => subscribe(c1));
    await until(() => first.some((s) => s.done), 'the refusal');
    const over = first.filter((s) => s.done);
    const live = first.filter((s) => !s.done);
    expect(over.length).toBe(1);
    expect(over[0].closed).toBeUndefined();
    expect(over[0].errors).toEqual([
      { message: `Subscriptions limit of ${PER_CONNECTION} per connection reached; complete one first`, extensions: { code: 'RATE_LIMITED' } },
    ]);
    await proveLive(t, live, 'Per connection');

    // Completing one frees its slot on the connection.
    live[0].stop();
    const again = subscribe(c1);
    await proveLive(t, [again, live[1], live[2]], 'Slot freed');
    expect(again.errors).toEqual([]);

    // Per key: 3 live on c1, so 2 more on another connection, not 3.
    const c2 = connect(t.key);
    const second = Array.from({ length: 3 }, () => subscribe(c2));
    await until(() => second.some((s) => s.done), 'the refusal');
    const overKey = second.filter((s) => s.done);
    expect(overKey.length).toBe(1);
    expect(overKey[0].errors).toEqual([
      { message: `Subscriptions limit of ${PER_KEY} per API key reached; complete one first`, extensions: { code: 'RATE_LIMITED' } },
    ]);
    await proveLive(t, second.filter((s) => !s.done), 'Per key');

    // A closed connection gives back all its slots.
    await c1.dispose();
    const c3 = connect(t.key);
    const third = Array.from({ length: 3 }, () => subscribe(c3));
    await proveLive(t, third, 'After close');
    for (const s of third) expect(s.errors).toEqual([]);
    await Promise.all([c2.dispose(), c3.dispose()]);
  });

  it('a message over 64 KiB closes the socket with 1009; the service keeps serving', async () => {
    const t = await app.tenant();
    const socket = new WebSocket(wsUrl(), 'graphql-transport-ws');
    const messages: string[] = [];
    socket.on('message', (m) => messages.push(String(m)));
    const closed = new Promise<{ code: number }>((resolve) => socket.on('close', (code) => resolve({ code })));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { apiKey: t.key } }));
    await until(() => messages.length > 0, 'the ack');
    expect(JSON.parse(messages[0])).toEqual({ type: 'connection_ack' });
    const query = `subscription { events { id } } # ${'x'.repeat(70_000)}`;
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
    expect((await closed).code).toBe(1009);

    expect((await fetch(`${service.url}/health`)).status).toBe(200);
    const client = connect(t.key);
    const sub = subscribe(client);
    await proveLive(t, [sub], 'After oversized');
    await client.dispose();
    expect(service.child.exitCode).toBeNull();
    expect(service.output()).not.toMatch(/Internal error/);
  });
});
