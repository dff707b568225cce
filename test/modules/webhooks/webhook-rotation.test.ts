import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { sign } from '../../../src/modules/webhooks/delivery.task';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { expectProblem } from '../../helpers/factories';
import { sleep, sqlWith } from '../../helpers/jobs';
import { auth } from '../../helpers/members';
import { startReceiver, type Received } from '../../helpers/receiver';

let app: TestApp;
let t: Tenant;
let other: Tenant;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_BASE_MS: '50' }, { worker: { pollInterval: 100 } });
  t = await app.tenant();
  other = await app.tenant();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.stop();
  await app.close();
});

const ENDPOINTS = '/api/v1/webhook_endpoints';

async function deliveredAt(path: string, count: number): Promise<Received[]> {
  for (const end = Date.now() + 15_000; ; await sleep(100)) {
    const got = receiver.received.filter((r) => r.path === path);
    if (got.length >= count) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${count} deliveries at ${path}`);
  }
}

const createGroup = async (name: string) => expect((await app.http.post('/api/v1/groups').set(auth(t)).send({ name })).status).toBe(201);

describe('POST /api/v1/webhook_endpoints/{id}/rotate_secret', () => {
  it('answers a new secret once; for the overlap deliveries carry both signatures, new first; after it only the new', async () => {
    const created = await app.http.post(ENDPOINTS).set(auth(t)).send({ url: receiver.url('/rotate'), events: ['group.created'] });
    expect(created.status).toBe(201);
    const old = created.body.secret as string;

    const rotated = await app.http.post(`${ENDPOINTS}/${created.body.id}/rotate_secret`).set(auth(t));
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body).toEqual({ id: created.body.id, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/) });
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(old);
    // Shown only there: reads never carry it.
    const one = await app.http.get(`${ENDPOINTS}/${created.body.id}`).set(auth(t));
    expect(JSON.stringify(one.body)).not.toContain('whsec_');
    const [row] = await sqlWith(app)('select secret, previous_secret, previous_secret_until from webhook_endpoints where id = ?', [created.body.id]);
    expect([row.secret, row.previous_secret].every((s: string) => s.startsWith('enc1:'))).toBe(true);
    expect(new Date(row.previous_secret_until).getTime() - Date.now()).toBeGreaterThan(24 * 3_600_000 - 60_000);

    await createGroup('During the overlap');
    const [during] = await deliveredAt('/rotate', 1);
    const signatures = during.headers['webhook-signature'].split(' ');
    expect(signatures).toHaveLength(2);
    const timestamp = Number(during.headers['webhook-timestamp']);
    expect(signatures[0]).toBe(sign(fresh, during.headers['webhook-id'], timestamp, during.body));
    expect(signatures[1]).toBe(sign(old, during.headers['webhook-id'], timestamp, during.body));
    // A receiver still on the old secret and one already on the new both verify.
    expect((new Webhook(old).verify(during.body, during.headers) as { type: string }).type).toBe('group.created');
    expect((new Webhook(fresh).verify(during.body, during.headers) as { type: string }).type).toBe('group.created');

    // The overlap ends: only the new secret signs.
    await sqlWith(app)(`update webhook_endpoints set previous_secret_until = now() - interval '1 second' where id = ?`, [created.body.id]);
    await createGroup('After the overlap');
    const after = (await deliveredAt('/rotate', 2))[1];
    expect(after.headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(new Webhook(fresh).verify(after.body, after.headers)).toBeTruthy();
    expect(() => new Webhook(old).verify(after.body, after.headers)).toThrow();
  });

  it('a second rotation keeps only the secret it replaces beside the new one', async () => {
    const created = await app.http.post(ENDPOINTS).set(auth(t)).send({ url: receiver.url('/twice'), events: ['group.created'] });
    const first = (await app.http.post(`${ENDPOINTS}/${created.body.id}/rotate_secret`).set(auth(t))).body.secret;
    const second = (await app.http.post(`${ENDPOINTS}/${created.body.id}/rotate_secret`).set(auth(t))).body.secret;
    await createGroup('Twice rotated');
    const [got] = await deliveredAt('/twice', 1);
    expect(new Webhook(second).verify(got.body, got.headers)).toBeTruthy();
    expect(new Webhook(first).verify(got.body, got.headers)).toBeTruthy();
    expect(() => new Webhook(created.body.secret).verify(got.body, got.headers)).toThrow();
  });

  it('another community\'s endpoint, an unknown id and a key without the webhooks scope are refused', async () => {
    const created = await app.http.post(ENDPOINTS).set(auth(t)).send({ url: receiver.url('/x'), events: ['*'] });
    expectProblem(await app.http.post(`${ENDPOINTS}/${created.body.id}/rotate_secret`).set(auth(other)), 404);
    expectProblem(await app.http.post(`${ENDPOINTS}/00000000-0000-7000-8000-000000000000/rotate_secret`).set(auth(t)), 404);
    expectProblem(await app.http.post(`${ENDPOINTS}/not-an-id/rotate_secret`).set(auth(t)), 404);
    const reader = await app.tenant({ scopes: ['webhooks:read'] });
    const mine = await app.http.post(ENDPOINTS).set(auth(t)).send({ url: receiver.url('/y'), events: ['*'] });
    expectProblem(await app.http.post(`${ENDPOINTS}/${mine.body.id}/rotate_secret`).set(auth(reader)), 403);
    // The secret did not change: the endpoint still signs with the one its creation showed.
    const [row] = await sqlWith(app)('select previous_secret from webhook_endpoints where id = ?', [created.body.id]);
    expect(row.previous_secret).toBeNull();
  });

  it('GraphQL: rotateWebhookSecret', async () => {
    const created = await app.http.post(ENDPOINTS).set(auth(t)).send({ url: receiver.url('/gql'), events: ['*'] });
    const res = await app.http
      .post('/graphql')
      .set(auth(t))
      .send({ query: 'mutation($ref: WebhookEndpointRef!) { rotateWebhookSecret(ref: $ref) { id secret } }', variables: { ref: { id: created.body.id } } });
    expect(res.body.data.rotateWebhookSecret).toEqual({ id: created.body.id, secret: expect.stringMatching(/^whsec_/) });
  });
});
