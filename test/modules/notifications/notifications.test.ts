import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQueue } from '../../../src/jobs/queue';
import { tasks } from '../../../src/jobs/tasks';
import { deliverNotification } from '../../../src/modules/notifications/notification.service';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { createMembers, expectProblem, keyFor } from '../../helpers/factories';
import { gqlWith, sleep, sqlWith } from '../../helpers/jobs';
import { asTestOwner } from '../../helpers/owner';
import { testDatabaseUrl } from '../../helpers/database';

let app: TestApp;
let t: Tenant;
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

const NOTIFICATION = `query($id: ID!) { notification(id: $id) {
  id title message status receiversCount sendAt sentAt cancelledAt
  deliveries(limit: 100) { size results { memberId deliveredAt member { id } } }
} }`;

beforeAll(async () => {
  app = await startTestApp({}, { worker: { pollInterval: 200 } });
  t = await app.tenant();
});
afterAll(() => app.close());

const gql = (query: string, variables: Record<string, unknown> = {}, key = t.key) => gqlWith(app)(query, variables, key);

async function notification(id: string) {
  const { data, errors } = await gql(NOTIFICATION, { id });
  expect(errors).toBeUndefined();
  return data.notification;
}

async function send(body: Record<string, unknown>) {
  const res = await app.http.post('/api/v1/notifications').set('X-API-Key', t.key).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body).toEqual({ id: expect.any(String), externalId: null });
  return res.body.id as string;
}

/** Polls until the notification has left SCHEDULED (or the time is up). */
async function settled(id: string, ms = 8000) {
  const until = Date.now() + ms;
  let n = await notification(id);
  while (n.status === 'SCHEDULED' && Date.now() < until) {
    await sleep(150);
    n = await notification(id);
  }
  return n;
}

async function deliveryCount(notificationId: string): Promise<number> {
  const [{ n }] = await sqlWith(app)('select count(*)::int as n from notification_deliveries where notification_id = ?', [notificationId]);
  return n;
}

describe('POST /api/v1/notifications: send now', () => {
  it('writes one delivery per recipient at once (ids and externalIds, duplicates merged) and reads SENT', async () => {
    const members = await createMembers(app, t.communityId, [{}, {}, {}]);
    const id = await send({
      title: 'Hello',
      message: 'Welcome to the community',
      memberIds: [members[0].id, members[1].id],
      memberExternalIds: [members[1].externalId, members[2].externalId],
    });
    const n = await notification(id);
    expect(n).toMatchObject({ title: 'Hello', status: 'SENT', receiversCount: 3, sentAt: expect.any(String), cancelledAt: null });
    expect(n.deliveries.results.map((d: { memberId: string }) => d.memberId).sort()).toEqual(members.map((m) => m.id).sort());
    expect(n.deliveries.results.every((d: { memberId: string; member: { id: string } }) => d.member.id === d.memberId)).toBe(true);
  });

  it('a sendAt in the past also sends now', async () => {
    const [m] = await createMembers(app, t.communityId, [{}]);
    const id = await send({ title: 'Late', message: 'x', memberIds: [m.id], sendAt: '2020-01-01T00:00:00.000Z' });
    expect(await notification(id)).toMatchObject({ status: 'SENT', sendAt: '2020-01-01T00:00:00.000Z', receiversCount: 1 });
  });

  it('lists them, and a member shows the notifications addressed to it', async () => {
    const [m] = await createMembers(app, t.communityId, [{}]);
    const a = await send({ title: 'A', message: 'a', memberIds: [m.id] });
    const b = await send({ title: 'B', message: 'b', memberExternalIds: [m.externalId] });
    const { data, errors } = await gql(
      `query($id: ID!) { member(ref: { id: $id }) { notifications { results { id } } }
         notifications(status: SENT, sort: [{ field: createdAt, direction: DESC }], limit: 2) { results { id } } }`,
      { id: m.id },
    );
    expect(errors).toBeUndefined();
    expect(data.member.notifications.results.map((n: { id: string }) => n.id)).toEqual([a, b]);
    expect(data.notifications.results.map((n: { id: string }) => n.id)).toEqual([b, a]);
  });
});

describe('POST /api/v1/notifications: bad input gives 400 and creates nothing', () => {
  const count = async () => (await gql('{ notifications(limit: 100) { size } }')).data.notifications.size;

  it('names every problem: missing title, empty message, no recipients, unknown recipients, bad sendAt', async () => {
    const before = await count();
    const [m] = await createMembers(app, t.communityId, [{}]);
    const post = (body: unknown) => app.http.post('/api/v1/notifications').set('X-API-Key', t.key).send(body as object);
    expectProblem(await post({ message: 'x', memberIds: [m.id] }), 400, '/title');
    expectProblem(await post({ title: 'x', message: '', memberIds: [m.id] }), 400, '/message');
    expectProblem(await post({ title: 'x'.repeat(257), message: 'x', memberIds: [m.id] }), 400, '/title');
    expectProblem(await post({ title: 'x', message: 'x' }), 400, '/memberIds');
    expectProblem(await post({ title: 'x', message: 'x', memberIds: [] }), 400, '/memberIds');
    expectProblem(await post({ title: 'x', message: 'x', memberIds: [m.id], sendAt: 'tomorrow' }), 400, '/sendAt');
    expectProblem(await post({ title: 'x', message: 'x', memberIds: [m.id], channel: 'sms' }), 400, '/channel');
    const unknown = await post({
      title: 'x',
      message: 'x',
      memberIds: [m.id, '00000000-0000-4000-8000-000000000000', 'not-an-id'],
      memberExternalIds: ['nobody'],
    });
    expectProblem(unknown, 400, '/memberIds/1', '/memberIds/2', '/memberExternalIds/0');
    expect(unknown.body.errors).toHaveLength(3);
    const text = await app.http.post('/api/v1/notifications').set('X-API-Key', t.key).set('Content-Type', 'text/plain').send('hi');
    expectProblem(text, 400, '/');
    expect(await count()).toBe(before);
  });

  it('a member of another community is unknown; a key without the notifications scope gets 403', async () => {
    const other = await app.tenant();
    const [foreign] = await createMembers(app, other.communityId, [{}]);
    const res = await app.http.post('/api/v1/notifications').set('X-API-Key', t.key).send({ title: 'x', message: 'x', memberIds: [foreign.id] });
    expectProblem(res, 400, '/memberIds/0');
    const groupsOnly = await keyFor(app, t.communityId, ['groups']);
    const [m] = await createMembers(app, t.communityId, [{}]);
    expectProblem(await app.http.post('/api/v1/notifications').set('X-API-Key', groupsOnly).send({ title: 'x', message: 'x', memberIds: [m.id] }), 403);
    const { errors } = await gql('{ notifications { size } }', {}, groupsOnly);
    expect(errors?.[0].extensions.code).toBe('FORBIDDEN');
  });
});

describe('scheduled notifications', () => {
  it('stay SCHEDULED until sendAt, then are delivered exactly once', async () => {
    const members = await createMembers(app, t.communityId, [{}, {}]);
    const id = await send({ title: 'Soon', message: 'x', memberIds: members.map((m) => m.id), sendAt: inSeconds(1.5) });
    const before = await notification(id);
    expect(before).toMatchObject({ status: 'SCHEDULED', receiversCount: 2, sentAt: null, deliveries: { size: 0 } });
    const after = await settled(id);
    expect(after).toMatchObject({ status: 'SENT', receiversCount: 2, deliveries: { size: 2 } });
    expect(new Date(after.sentAt).getTime()).toBeGreaterThanOrEqual(new Date(after.sendAt).getTime());
    await sleep(500);
    expect(await deliveryCount(id)).toBe(2);
  });

  it('a cancelled one is never sent; cancelling a sent one is a conflict', async () => {
    const [m] = await createMembers(app, t.communityId, [{}]);
    const id = await send({ title: 'Never', message: 'x', memberIds: [m.id], sendAt: inSeconds(1) });
    const cancel = (nid: string) => gql('mutation($id: ID!) { cancelNotification(id: $id) { status cancelledAt } }', { id: nid });
    const { data } = await cancel(id);
    expect(data.cancelNotification).toMatchObject({ status: 'CANCELLED', cancelledAt: expect.any(String) });
    expect((await cancel(id)).data.cancelNotification.status).toBe('CANCELLED');
    await sleep(2000);
    expect(await notification(id)).toMatchObject({ status: 'CANCELLED', sentAt: null, deliveries: { size: 0 } });
    expect(await deliveryCount(id)).toBe(0);

    const sent = await send({ title: 'Now', message: 'x', memberIds: [m.id] });
    expect((await cancel(sent)).errors?.[0].extensions.code).toBe('CONFLICT');
    expect((await cancel('00000000-0000-4000-8000-000000000000')).errors?.[0].extensions.code).toBe('NOT_FOUND');
  });

  it('with two workers and concurrent senders, every recipient still gets exactly one delivery', async () => {
    const second = await startQueue(testDatabaseUrl(), { orm: app.runtime.orm, logger: app.runtime.logger, state: app.runtime.state }, tasks, { pollInterval: 100, concurrency: 4 });
    try {
      const members = await createMembers(app, t.communityId, Array.from({ length: 5 }, () => ({})));
      const sendAt = inSeconds(1);
      const ids = await Promise.all(
        Array.from({ length: 12 }, (_, i) => send({ title: `Batch ${i}`, message: 'x', memberIds: members.map((m) => m.id), sendAt })),
      );
      for (const id of ids) expect(await settled(id)).toMatchObject({ status: 'SENT', deliveries: { size: 5 } });

      // The guard itself: many senders racing for one scheduled notification; one wins.
      const racing = await send({ title: 'Race', message: 'x', memberIds: members.map((m) => m.id), sendAt: inSeconds(60) });
      const results = await Promise.all(
        Array.from({ length: 6 }, () => asTestOwner(() => app.runtime.orm.em.fork().transactional((tx) => deliverNotification(tx as never, racing)))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await deliveryCount(racing)).toBe(5);
    } finally {
      await second.stop();
    }
  });
});
