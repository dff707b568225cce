import { randomUUID } from 'node:crypto';
import { sealSecret } from '../../../src/modules/webhooks/webhook-secrets';
import { SECRET_BOX } from '../../../src/security/secret-box';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { expectProblem } from '../../helpers/factories';
import { sleep, sqlWith } from '../../helpers/jobs';
import { auth } from '../../helpers/members';
import { startReceiver } from '../../helpers/receiver';

/** WEBHOOK_ALLOW_PRIVATE_NETWORKS is off (the default): no private, loopback or link-local destination. */
let app: TestApp;
let t: Tenant;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_RETRY_BASE_MS: '60000' }, { worker: { pollInterval: 100 } });
  t = await app.tenant();
});
afterAll(() => app.close());

describe('outbound webhook safety', () => {
  it.each([
    ['http://127.0.0.1:8080/hook'],
    ['http://10.0.0.1/hook'],
    ['http://169.254.169.254/latest/meta-data'],
    ['http://[::1]:8080/hook'],
    ['http://[::ffff:127.0.0.1]/hook'],
    ['http://localhost:8080/hook'],
    ['http://192.168.1.10/hook'],
    ['http://0.0.0.0/hook'],
  ])('refuses %s at creation (400 /url)', async (url) => {
    const body = expectProblem(await app.http.post('/api/v1/webhook_endpoints').set(auth(t)).send({ url, events: ['*'] }), 400, '/url');
    expect(body.errors[0].detail).toContain('public address');
  });

  it('checks the address actually connected to: a stored private destination is never contacted', async () => {
    const receiver = await startReceiver();
    try {
      // As if a name had resolved to a public address when saved and to loopback since (DNS rebinding):
      // the rows are written directly, the delivery checks again where it connects.
      const sql = sqlWith(app);
      const ids: string[] = [];
      for (const url of [`http://localhost:${receiver.port}/rebound`, `http://127.0.0.1:${receiver.port}/literal`]) {
        const id = randomUUID();
        const [row] = await sql(
          `insert into webhook_endpoints (id, community_id, url, events, secret, created_at, modified_at)
           values (?, ?, ?, '{*}', ?, now(), now()) returning id`,
          [id, t.communityId, url, sealSecret(app.runtime.state.get(SECRET_BOX), id, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')],
        );
        ids.push(row.id);
      }
      await app.http.post('/api/v1/groups').set(auth(t)).send({ name: 'Bait' });
      const attempts = async (id: string) => (await app.http.get(`/api/v1/webhook_endpoints/${id}/deliveries`).set(auth(t))).body.results;
      for (const end = Date.now() + 15_000; Date.now() < end; await sleep(100)) {
        if ((await attempts(ids[0]))[0]?.attempts && (await attempts(ids[1]))[0]?.attempts) break;
      }
      for (const id of ids) {
        const [d] = await attempts(id);
        expect(d).toMatchObject({ status: 'PENDING', attempts: 1, responseStatus: null, lastError: expect.stringContaining('not a public address') });
      }
      expect(receiver.received).toEqual([]);
    } finally {
      await receiver.stop();
    }
  });
});
