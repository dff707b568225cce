import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { arrayOf } from '../../../src/db/sql';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { expectProblem } from '../../helpers/factories';
import { sleep, sqlWith } from '../../helpers/jobs';
import { auth } from '../../helpers/members';
import { startReceiver } from '../../helpers/receiver';

/** The local receiver is on 127.0.0.1, so private networks are allowed here (webhooks-ssrf.test.ts covers the refusal). */
let app: TestApp;
let t: Tenant;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_BASE_MS: '50' }, { worker: { pollInterval: 100 } });
  t = await app.tenant();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.stop();
  await app.close();
});

const ENDPOINTS = '/api/v1/webhook_endpoints';

async function createEndpoint(body: object, tenant = t): Promise<{ id: string; secret: string }> {
  const res = await app.http.post(ENDPOINTS).set(auth(tenant)).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  for (const end = Date.now() + ms; ; await sleep(100)) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

const deliveries = async (id: string, tenant = t) => {
  const res = await app.http.get(`${ENDPOINTS}/${id}/deliveries?limit=100`).set(auth(tenant));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.results as { id: string; eventId: string; type: string; status: string; attempts: number; responseStatus: number | null; nextAttemptAt: string | null; createdAt: string }[];
};

describe('webhook endpoints over REST', () => {
  it('create answers the secret once; read, list, patch and delete never show it', async () => {
    const created = await createEndpoint({ url: receiver.url('/crud'), events: ['group.created'], description: 'CRM' });
    expect(created).toEqual({ id: expect.any(String), externalId: null, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/) });
    const one = await app.http.get(`${ENDPOINTS}/${created.id}`).set(auth(t));
    expect(one.body).toMatchObject({ id: created.id, externalId: null, url: receiver.url('/crud'), events: ['group.created'], description: 'CRM', enabled: true, disabledReason: null });
    expect(JSON.stringify(one.body)).not.toContain(created.secret);
    const list = await app.http.get(ENDPOINTS).set(auth(t));
    expect(list.body.results.map((e: { id: string }) => e.id)).toContain(created.id);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    expect((await app.http.patch(`${ENDPOINTS}/${created.id}`).set(auth(t)).send({ events: ['*'], enabled: false })).status).toBe(204);
    expect((await app.http.get(`${ENDPOINTS}/${created.id}`).set(auth(t))).body).toMatchObject({ events: ['*'], enabled: false });
    expect((await app.http.delete(`${ENDPOINTS}/${created.id}`).set(auth(t))).status).toBe(204);
    expectProblem(await app.http.get(`${ENDPOINTS}/${created.id}`).set(auth(t)), 404);
  });

  it('bad input is a 400 naming the field, and saves nothing', async () => {
    const before = (await app.http.get(`${ENDPOINTS}?limit=100`).set(auth(t))).body.size;
    expectProblem(await app.http.post(ENDPOINTS).set(auth(t)).send({ url: 'ftp://example.org/x', events: ['*'] }), 400, '/url');
    expectProblem(await app.http.post(ENDPOINTS).set(auth(t)).send({ url: 'not a url', events: ['*'] }), 400, '/url');
    expectProblem(await app.http.post(ENDPOINTS).set(auth(t)).send({ url: receiver.url(), events: ['group.exploded'] }), 400, '/events/0');
    expectProblem(await app.http.post(ENDPOINTS).set(auth(t)).send({ url: receiver.url(), events: [] }), 400, '/events');
    expectProblem(await app.http.post(ENDPOINTS).set(auth(t)).send({ url: receiver.url(), events: ['*'], secret: 'mine' }), 400, '/secret');
    expect((await app.http.get(`${ENDPOINTS}?limit=100`).set(auth(t))).body.size).toBe(before);
  });

  it('needs the webhooks scope', async () => {
    const tenant = await app.tenant({ scopes: ['groups', 'events'] });
    expectProblem(await app.http.get(ENDPOINTS).set(auth(tenant)), 403);
    expectProblem(await app.http.post(ENDPOINTS).set(auth(tenant)).send({ url: receiver.url(), events: ['*'] }), 403);
  });
});

describe('deliveries', () => {
  it('every delivery verifies with the standardwebhooks package and carries the event as the feed and REST show it', async () => {
    const tenant = await app.tenant();
    const all = await createEndpoint({ url: receiver.url('/all'), events: ['*'] }, tenant);
    const some = await createEndpoint({ url: receiver.url('/some'), events: ['group.created'] }, tenant);
    const group = (await app.http.post('/api/v1/groups').set(auth(tenant)).send({ name: 'Hooked' })).body;
    await app.http.patch(`/api/v1/groups/${group.id}`).set(auth(tenant)).send({ name: 'Hooked 2' });
    const rest = (await app.http.get(`/api/v1/groups/${group.id}`).set(auth(tenant))).body;
    // a membership's events keep it typed (docs/events.md): its JSON is built when read
    const member = (await app.http.post('/api/v1/members').set(auth(tenant)).send({ externalId: 'hooked-member' })).body;
    const joined = await app.http.post(`/api/v1/groups/${group.id}/memberships/_bulk`).set(auth(tenant)).send({ groupMemberships: [{ memberId: member.id, title: 'Hook' }] });
    expect(joined.status, JSON.stringify(joined.body)).toBe(201);
    const at = (path: string) => receiver.received.filter((r) => r.path === path);
    await until('deliveries', async () => at('/all').length >= 4 && at('/some').length >= 1);
    await sleep(300); // nothing more may arrive at /some
    expect(at('/some').length).toBe(1);
    const feed = (await app.http.get('/api/v1/events').set(auth(tenant))).body.results;
    for (const [path, secret] of [['/all', all.secret], ['/some', some.secret]] as const) {
      for (const r of at(path)) {
        const verified = new Webhook(secret).verify(r.body, r.headers) as { id: string };
        expect(r.headers['content-type']).toBe('application/json');
        expect(r.headers['webhook-id']).toBe(verified.id);
        expect(verified).toEqual(feed.find((e: { id: string }) => e.id === verified.id));
      }
    }
    const updated = JSON.parse(at('/all').find((r) => r.body.includes('group.updated'))!.body);
    expect(updated.data).toEqual(rest);
    expect(updated.changes).toEqual(['name']);
    const membership = JSON.parse(at('/all').find((r) => r.body.includes('group_membership.created'))!.body);
    const joinedRest = (await app.http.get(`/api/v1/groups/${group.id}/memberships/${joined.body[0].id}`).set(auth(tenant))).body;
    expect(membership.data).toEqual({ ...joinedRest, groupId: group.id });
    expect(membership.data).toMatchObject({ memberExternalId: 'hooked-member', title: 'Hook' });
    // a wrong secret does not verify
    expect(() => new Webhook(some.secret).verify(at('/all')[0].body, at('/all')[0].headers)).toThrow();
    const listed = await deliveries(all.id, tenant);
    // Each event's deliveries are made by its own dispatch job, and two jobs may run at once:
    // the list's createdAt order between the two events is not fixed, so compare them by type.
    // A failed first attempt says why (its logged error) rather than only that the count is off.
    const log = await sqlWith(app)('select delivery_id, response_status, error, duration_ms from webhook_delivery_attempts where delivery_id = any(?::uuid[]) order by id', [arrayOf(listed.map((d) => d.id))]);
    expect(listed.map((d) => [d.type, d.status, d.attempts, d.responseStatus]).sort(), JSON.stringify(log)).toEqual([
      ['group.created', 'SUCCEEDED', 1, 200],
      ['group.updated', 'SUCCEEDED', 1, 200],
      ['group_membership.created', 'SUCCEEDED', 1, 200],
      ['member.created', 'SUCCEEDED', 1, 200],
    ]);
    // Delivery ids are time-ordered (version 7 layout) like every other record's.
    for (const d of listed) expect(d.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('receiver down, then up: the delivery is retried on schedule and arrives with the same webhook-id', async () => {
    const tenant = await app.tenant();
    const down = await startReceiver();
    const port = down.port;
    await down.stop();
    const endpoint = await createEndpoint({ url: `http://127.0.0.1:${port}/late`, events: ['member.created'] }, tenant);
    await app.http.post('/api/v1/members').set(auth(tenant)).send({ firstName: 'Late' });
    const [failed] = await until('a failed first attempt', async () => {
      const list = await deliveries(endpoint.id, tenant);
      return list.length && list[0].attempts >= 1 ? list : undefined;
    });
    expect(failed).toMatchObject({ type: 'member.created', status: 'PENDING', responseStatus: null, nextAttemptAt: expect.any(String) });
    await down.start();
    try {
      const [ok] = await until('the retry', async () => {
        const list = await deliveries(endpoint.id, tenant);
        return list[0].status === 'SUCCEEDED' ? list : undefined;
      });
      // with a 50 ms base the waits are 50 ms, 3 s, 18 s...: the receiver came back before the third
      expect(ok).toMatchObject({ responseStatus: 200, nextAttemptAt: null });
      expect(ok.attempts).toBeGreaterThanOrEqual(2);
      expect(down.received.map((r) => r.headers['webhook-id'])).toEqual([failed.eventId]);
      const attempts = (await sqlWith(app)('select response_status, error from webhook_delivery_attempts where delivery_id = ? order by id', [ok.id])) as {
        response_status: number | null;
        error: string | null;
      }[];
      expect(attempts.length).toBe(ok.attempts);
      expect(attempts.at(-1)).toEqual({ response_status: 200, error: null });
      for (const a of attempts.slice(0, -1)) expect(a).toEqual({ response_status: null, error: expect.stringContaining('ECONNREFUSED') });
      // every attempt is readable through GraphQL too
      const gql = await app.http.post('/graphql').set(auth(tenant)).send({
        query: 'query($ref: WebhookEndpointRef!) { webhookDeliveries(ref: $ref) { results { attemptLog { attemptedAt responseStatus error durationMs } } } }',
        variables: { ref: { id: endpoint.id } },
      });
      expect(gql.body.errors).toBeUndefined();
      const log = gql.body.data.webhookDeliveries.results[0].attemptLog;
      expect(log.map((a: { responseStatus: number | null }) => a.responseStatus)).toEqual(attempts.map((a) => a.response_status));
    } finally {
      await down.stop();
    }
  });

  it('a redirect is not followed and counts as a failure; 5 days without success disables the endpoint', async () => {
    const tenant = await app.tenant();
    const failing = await startReceiver(0, (r) => (r.path === '/moved' ? 302 : 500));
    try {
      const moved = await createEndpoint({ url: failing.url('/moved'), events: ['group.created'] }, tenant);
      const broken = await createEndpoint({ url: failing.url('/broken'), events: ['group.created'] }, tenant);
      await sqlWith(app)("update webhook_endpoints set failing_since = now() - interval '6 days' where id = ?", [broken.id]);
      await app.http.post('/api/v1/groups').set(auth(tenant)).send({ name: 'Unlucky' });
      await until('first attempts', async () => (await deliveries(moved.id, tenant))[0]?.attempts && (await deliveries(broken.id, tenant))[0]?.attempts);
      const [m] = await deliveries(moved.id, tenant);
      expect(m).toMatchObject({ status: 'PENDING', responseStatus: 302 });
      expect(failing.received.filter((r) => r.path === '/redirected')).toEqual([]);
      const endpoint = (await app.http.get(`${ENDPOINTS}/${broken.id}`).set(auth(tenant))).body;
      expect(endpoint).toMatchObject({ enabled: false, disabledReason: expect.stringContaining('5 days') });
      const [b] = await until('the disabled endpoint to stop', async () => {
        const list = await deliveries(broken.id, tenant);
        return list[0].status === 'FAILED' || list[0].nextAttemptAt === null ? list : undefined;
      });
      expect(b.responseStatus === 500 || b.responseStatus === null).toBe(true);
      // re-enabling clears the reason
      await app.http.patch(`${ENDPOINTS}/${broken.id}`).set(auth(tenant)).send({ enabled: true });
      expect((await app.http.get(`${ENDPOINTS}/${broken.id}`).set(auth(tenant))).body).toMatchObject({ enabled: true, disabledReason: null });
    } finally {
      await failing.stop();
    }
  });

  it("another community's endpoints and deliveries are not reachable", async () => {
    const owner = await app.tenant();
    const stranger = await app.tenant();
    const endpoint = await createEndpoint({ url: receiver.url('/owner'), events: ['*'] }, owner);
    expectProblem(await app.http.get(`${ENDPOINTS}/${endpoint.id}/deliveries`).set(auth(stranger)), 404);
    expectProblem(await app.http.patch(`${ENDPOINTS}/${endpoint.id}`).set(auth(stranger)).send({ enabled: false }), 404);
    expect((await app.http.get(ENDPOINTS).set(auth(stranger))).body.results).toEqual([]);
    // the stranger's write is not delivered to the owner's endpoint
    await app.http.post('/api/v1/groups').set(auth(stranger)).send({ name: 'Not yours' });
    await app.http.post('/api/v1/groups').set(auth(owner)).send({ name: 'Yours' });
    await until('the owner delivery', async () => receiver.received.some((r) => r.path === '/owner'));
    await sleep(300);
    expect(receiver.received.filter((r) => r.path === '/owner').map((r) => JSON.parse(r.body).data.name)).toEqual(['Yours']);
  });
});
