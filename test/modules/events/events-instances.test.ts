import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { Client as PgClient } from 'pg';
import { ADMIN_TOKEN, startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { startService, type ServiceProcess } from '../../helpers/process';
import { sleep } from '../../helpers/jobs';
import { asTestOwner } from '../../helpers/owner';
import { testDatabaseUrl } from '../../helpers/database';

/**
 * Two real service processes on one database: the feed under concurrent writers on both,
 * and GraphQL subscriptions fanned out across instances.
 */
let app: TestApp;
let services: ServiceProcess[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const env = { DATABASE_URL: testDatabaseUrl(), ADMIN_TOKEN, LOG_LEVEL: 'warn' };
  services = await Promise.all([startService(env), startService(env)]);
}, 90_000);
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await app.close();
});

type Ev = { id: string; type: string; data: Record<string, any> };

async function call(base: string, key: string, method: string, path: string, body?: object) {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('the feed under concurrent writers on two instances', () => {
  it('a paging reader sees every event exactly once, in commit order per record', async () => {
    const t = await app.tenant({ rateLimitPerHour: 1_000_000 });
    const [s1, s2] = services.map((s) => s.url);
    const groups: string[] = [];
    for (let i = 0; i < 3; i++) groups.push((await call(s1, t.key, 'POST', '/groups', { name: `G${i}` })).body.id);
    const members: string[] = [];
    for (let i = 0; i < 4; i++) {
      const bulk = await call(s2, t.key, 'POST', '/members/_bulk', { members: Array.from({ length: 10 }, (_, j) => ({ firstName: `M${i}-${j}` })) });
      expect(bulk.status, JSON.stringify(bulk.body)).toBe(201);
      members.push(...bulk.body.map((m: { id: string }) => m.id));
    }

    // The reader pages with `after` while the writers run, a few events at a time.
    let writing = true;
    const seen: Ev[] = [];
    const reader = (async () => {
      let after = '';
      for (;;) {
        const stillWriting = writing;
        const page = await call(s1, t.key, 'GET', `/events?limit=7${after ? `&after=${after}` : ''}`);
        expect(page.status).toBe(200);
        seen.push(...page.body.results);
        if (page.body.results.length) after = page.body.results.at(-1).id;
        if (!page.body.results.length && !stillWriting) return;
        if (!page.body._links.next) await sleep(5);
      }
    })();

    // 4 writers (2 per instance): memberships into the 3 groups (order numbers are taken under
    // the group's lock, so in commit order they run 1, 2, 3...), and updates of the groups.
    const queue = members.map((m, i) => ({ member: m, group: groups[i % groups.length], i }));
    let writes = 0;
    await Promise.all(
      [s1, s2, s1, s2].map(async (base) => {
        for (let job = queue.shift(); job; job = queue.shift()) {
          const res = await call(base, t.key, 'POST', `/groups/${job.group}/memberships`, { memberId: job.member });
          expect(res.status, JSON.stringify(res.body)).toBe(201);
          const patch = await call(base, t.key, 'PATCH', `/groups/${job.group}`, { about: `write ${job.i}` });
          expect(patch.status).toBe(204);
          writes += 2;
        }
      }),
    );
    writing = false;
    await reader;

    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length); // exactly once
    // everything: 3 group + 40 member creations, 40 memberships, 40 group updates
    const full: Ev[] = [];
    for (let after = ''; ; ) {
      const page = await call(s2, t.key, 'GET', `/events?limit=100${after ? `&after=${after}` : ''}`);
      full.push(...page.body.results);
      if (!page.body._links.next) break;
      after = page.body.results.at(-1).id;
    }
    expect(ids).toEqual(full.map((e) => e.id)); // the live reader missed nothing and saw the final order
    expect(full.filter((e) => e.type === 'group_membership.created').length).toBe(40);
    expect(full.filter((e) => e.type === 'group.updated').length).toBe(40);
    expect(writes).toBe(80);
    for (const g of groups) {
      const orderNumbers = seen.filter((e) => e.type === 'group_membership.created' && e.data.groupId === g).map((e) => e.data.orderNumber);
      expect(orderNumbers).toEqual(orderNumbers.map((_, i) => i + 1));
      // the last update event of a group is its committed state
      const last = seen.filter((e) => e.type === 'group.updated' && e.data.id === g).at(-1)!;
      const current = await call(s1, t.key, 'GET', `/groups/${g}`);
      expect(last.data.about).toBe(current.body.about);
    }
  }, 120_000);
});

function subscribe(base: string, key: string, types?: string[]) {
  const received: Ev[] = [];
  let connected!: () => void;
  const ready = new Promise<void>((resolve) => (connected = resolve));
  const client: Client = createClient({
    url: base.replace('http', 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: { apiKey: key },
    retryAttempts: 0,
    lazy: false,
    on: { connected: () => connected() },
  });
  const errors: unknown[] = [];
  client.subscribe(
    { query: 'subscription($types: [String!]) { events(types: $types) { id type createdAt data changes } }', variables: { types } },
    { next: (msg) => (msg.errors ? errors.push(msg.errors) : received.push((msg.data as { events: Ev }).events)), error: (e) => errors.push(e), complete: () => undefined },
  );
  return { client, received, errors, ready };
}

describe('GraphQL subscriptions across instances', () => {
  it('a write on one instance reaches subscribers on both; another community sees nothing', async () => {
    const t: Tenant = await app.tenant();
    const other: Tenant = await app.tenant();
    const [s1, s2] = services.map((s) => s.url);
    const subs = [subscribe(s1, t.key), subscribe(s2, t.key, ['group.created']), subscribe(s2, other.key)];
    await Promise.all(subs.map((s) => s.ready));
    await sleep(300); // the subscription is registered on the server after the handshake
    const created = await call(s1, t.key, 'POST', '/groups', { name: 'Live' });
    await call(s1, t.key, 'PATCH', `/groups/${created.body.id}`, { name: 'Live 2' });
    for (const until = Date.now() + 10_000; Date.now() < until && (subs[0].received.length < 2 || subs[1].received.length < 1); ) await sleep(50);
    expect(subs[0].received.map((e) => e.type)).toEqual(['group.created', 'group.updated']);
    expect(subs[0].received[0].data).toMatchObject({ id: created.body.id, name: 'Live' });
    expect(subs[1].received.map((e) => [e.type, e.data.id])).toEqual([['group.created', created.body.id]]);
    // the other community's subscriber, connected all along, got nothing
    await call(s2, other.key, 'POST', '/groups', { name: 'Theirs' });
    for (const until = Date.now() + 10_000; Date.now() < until && !subs[2].received.length; ) await sleep(50);
    expect(subs[2].received.map((e) => e.data.name)).toEqual(['Theirs']);
    expect(subs[0].received.length).toBe(2);
    for (const s of subs) expect(s.errors).toEqual([]);
    await Promise.all(subs.map((s) => s.client.dispose()));
  });

  it('instances with subscribers register as listeners; without a notification, the poll still delivers', async () => {
    const sql = (text: string) => asTestOwner(() => app.runtime.orm.em.fork().getConnection().execute(text));
    const t: Tenant = await app.tenant();
    const sub = subscribe(services[0].url, t.key);
    await sub.ready;
    await sleep(300);
    // both service processes have registered (they had subscribers in the test above or this one)
    expect((await sql("select count(*)::int as n from event_listeners where seen_at > now() - interval '2 minutes'"))[0].n).toBeGreaterThanOrEqual(1);
    // Nobody listening, as far as the commit trigger knows: no NOTIFY is sent for this write,
    // and the subscriber gets the event from the hub's periodic read.
    const listener = new PgClient({ connectionString: testDatabaseUrl() });
    await listener.connect();
    const notified: string[] = [];
    listener.on('notification', (n) => notified.push(String(n.payload)));
    await listener.query('listen community_events');
    await sql('delete from event_listeners');
    const created = await call(services[1].url, t.key, 'POST', '/groups', { name: 'Unannounced' });
    for (const until = Date.now() + 10_000; Date.now() < until && !sub.received.length; ) await sleep(50);
    expect(sub.received.map((e) => [e.type, e.data.id])).toEqual([['group.created', created.body.id]]);
    // (a hub renews its entry every 30 s: only while none has, the write must not have notified)
    if ((await sql('select count(*)::int as n from event_listeners'))[0].n === 0) expect(notified).toEqual([]);
    await listener.end();
    expect(sub.errors).toEqual([]);
    await sub.client.dispose();
  });

  it('an unknown key is refused at connection; a key without events:read gets FORBIDDEN', async () => {
    const bad = subscribe(services[0].url, 'not-a-key');
    for (const until = Date.now() + 5000; Date.now() < until && !bad.errors.length; ) await sleep(50);
    expect(String((bad.errors[0] as { code?: number })?.code)).toBe('4403');
    await bad.client.dispose();
    const t = await app.tenant({ scopes: ['groups'] });
    const limited = subscribe(services[0].url, t.key);
    for (const until = Date.now() + 5000; Date.now() < until && !limited.errors.length; ) await sleep(50);
    expect(JSON.stringify(limited.errors)).toContain('FORBIDDEN');
    await limited.client.dispose();
  });
});
