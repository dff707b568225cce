import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { createMembers } from '../../helpers/factories';
import { gqlWith, sleep, sqlWith } from '../../helpers/jobs';
import { startService } from '../../helpers/process';
import { testDatabaseUrl } from '../../helpers/database';

// This file's own app runs no worker: the second service process is the one expected to send.
let app: TestApp;
let t: Tenant;
beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
});
afterAll(() => app.close());

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const QUERY = 'query($id: ID!) { notification(id: $id) { status receiversCount deliveries { size } } }';
const read = async (id: string) => (await gqlWith(app)(QUERY, { id }, t.key)).data.notification;

describe('a scheduled notification survives a restart of the service', () => {
  it('created through one process, that process is killed before sendAt, the next one sends it once', async () => {
    const members = await createMembers(app, t.communityId, [{}, {}]);
    const env = { DATABASE_URL: testDatabaseUrl() };
    const first = await startService(env);
    let id: string;
    try {
      const res = await request(first.url)
        .post('/api/v1/notifications')
        .set('X-API-Key', t.key)
        .send({ title: 'Durable', message: 'x', memberIds: members.map((m) => m.id), sendAt: inSeconds(3) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      id = res.body.id;
    } finally {
      await first.kill(); // a crash, not a graceful stop: the job must already be in the database
    }
    expect(await read(id)).toMatchObject({ status: 'SCHEDULED', deliveries: { size: 0 } });
    const second = await startService(env);
    try {
      const until = Date.now() + 15_000;
      while ((await read(id)).status === 'SCHEDULED' && Date.now() < until) await sleep(150);
      expect(await read(id)).toMatchObject({ status: 'SENT', receiversCount: 2, deliveries: { size: 2 } });
      const [{ n }] = await sqlWith(app)('select count(*)::int as n from notification_deliveries where notification_id = ?', [id]);
      expect(n).toBe(2);
    } finally {
      await second.stop();
    }
    expect(second.child.exitCode).toBe(0); // SIGTERM: the worker and the server stop gracefully
  }, 300_000);
});
