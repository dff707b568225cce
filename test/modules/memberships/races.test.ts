import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { createGroup, createMembers } from '../../helpers/factories';
import { gqlWith, sleep, sqlWith } from '../../helpers/jobs';
import { testDatabaseUrl } from '../../helpers/database';

/**
 * Write races: each pair runs at concurrency for RACE_MS against the real database. The
 * assertions do not depend on who wins: no 5xx (every answer is one of the statuses the
 * contract allows for that race), refusals name the field, and afterwards the counts, order
 * numbers and references are consistent.
 */
const RACE_MS = Number(process.env.RACE_MS ?? 2000);
const LOOPS = 4;

let app: TestApp;
let t: Tenant;
let sql: ReturnType<typeof sqlWith>;
beforeAll(async () => {
  // These tests are about write races, not the per-caller budget (test/platform/db-budget.test.ts):
  // one key sends every request here, so it may hold the whole pool and queue long.
  app = await startTestApp({ DB_CONNECTIONS_PER_CALLER: '10', DB_CALLER_WAIT_SECONDS: '30' }, { worker: true });
  t = await app.tenant({ rateLimitPerHour: 10_000_000 });
  sql = sqlWith(app);
});
afterAll(() => app.close());

const key = () => ({ 'X-API-Key': t.key });
type Res = { status: number; body: any };

/** Runs every worker in LOOPS parallel loops until RACE_MS has passed; returns the answers per worker name. */
async function race(workers: Record<string, () => Promise<Res | Res[]>>): Promise<Record<string, Res[]>> {
  const until = Date.now() + RACE_MS;
  const seen: Record<string, Res[]> = Object.fromEntries(Object.keys(workers).map((k) => [k, []]));
  await Promise.all(
    Object.entries(workers).flatMap(([name, work]) =>
      Array.from({ length: LOOPS }, async () => {
        while (Date.now() < until) {
          const out = await work();
          seen[name].push(...(Array.isArray(out) ? out : [out]));
        }
      }),
    ),
  );
  return seen;
}

function expectStatuses(answers: Res[], allowed: number[]) {
  expect(answers.length).toBeGreaterThan(0);
  for (const a of answers) expect(allowed, JSON.stringify(a.body)).toContain(a.status);
}

/** Counts, order numbers and references of the community are consistent. */
async function expectConsistent() {
  const counts = await sql(
    `select g.id, g.membership_count, (select count(*)::int from group_memberships m where m.group_id = g.id) as n
       from groups g where g.community_id = ? and g.membership_count <> (select count(*) from group_memberships m where m.group_id = g.id)`,
    [t.communityId],
  );
  expect(counts).toEqual([]);
  const orders = await sql(
    `select group_id, order_number from group_memberships where community_id = ? group by 1, 2 having count(*) > 1`,
    [t.communityId],
  );
  expect(orders).toEqual([]);
  const dangling = await sql(
    `select m.id from group_memberships m
       left join members mb on mb.id = m.member_id left join groups g on g.id = m.group_id
      where m.community_id = ? and (mb.id is null or g.id is null or mb.community_id <> m.community_id or g.community_id <> m.community_id)`,
    [t.communityId],
  );
  expect(dangling).toEqual([]);
  const values = await sql(
    `select v.member_id from member_field_values v join members m on m.id = v.member_id
       left join additional_fields f on f.id = v.field_id where m.community_id = ? and f.id is null`,
    [t.communityId],
  );
  expect(values).toEqual([]);
}

describe('member delete vs membership writes', () => {
  it('single and bulk creates race member deletes: no 5xx, refusals name /groupMemberships/N/memberId', async () => {
    const group = await createGroup(app, t.communityId);
    const pool = () => createMembers(app, t.communityId, Array.from({ length: 5 }, () => ({})));
    let members = await pool();
    const answers = await race({
      bulk: async () => {
        const batch = members;
        return app.http
          .post(`/api/v1/groups/${group.id}/memberships/_bulk`)
          .set(key())
          .send({ groupMemberships: batch.map((m) => ({ memberId: m.id })) });
      },
      single: async () => {
        const m = members[Math.floor(Math.random() * members.length)];
        return app.http.post(`/api/v1/groups/${group.id}/memberships`).set(key()).send({ memberId: m.id });
      },
      remove: async () => {
        const batch = members;
        const out = await Promise.all(batch.slice(0, 2).map((m) => app.http.delete(`/api/v1/members/${m.id}`).set(key())));
        members = await pool();
        return out;
      },
    });
    expectStatuses(answers.bulk, [201, 400, 409]);
    expectStatuses(answers.single, [201, 400, 409]);
    expectStatuses(answers.remove, [204, 404]);
    for (const a of [...answers.bulk, ...answers.single].filter((r) => r.status === 400)) {
      for (const e of a.body.errors) expect(e.pointer).toMatch(/^(\/groupMemberships\/\d+)?\/memberId$/);
    }
    await expectConsistent();
  });

  it('a member deleted while a bulk create checks it: the bulk waits, then 400 naming /groupMemberships/2/memberId; nothing is stored', async () => {
    const group = await createGroup(app, t.communityId);
    const ms = await createMembers(app, t.communityId, Array.from({ length: 3 }, () => ({})));
    const deleter = new Client({ connectionString: testDatabaseUrl() });
    await deleter.connect();
    try {
      await deleter.query('begin');
      await deleter.query('delete from members where id = $1', [ms[2].id]);
      const pending = app.http
        .post(`/api/v1/groups/${group.id}/memberships/_bulk`)
        .set(key())
        .send({ groupMemberships: ms.map((m) => ({ memberId: m.id })) })
        .then((r) => r);
      // The bulk's check waits for the delete's row lock (it reads the members `for key share`).
      for (;;) {
        const { rows } = await deleter.query('select count(*)::int as n from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))');
        if (rows[0].n > 0) break;
        await sleep(20);
      }
      await deleter.query('commit');
      const res = await pending;
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.errors).toEqual([{ pointer: '/groupMemberships/2/memberId', detail: expect.any(String) }]);
    } finally {
      await deleter.end();
    }
    expect((await app.http.get(`/api/v1/groups/${group.id}`).set(key())).body.membershipCount).toBe(0);
    await expectConsistent();
  });
});

describe('group delete vs membership writes', () => {
  it('bulk creates and reorders race group deletes: no 5xx, consistent afterwards', async () => {
    const fixture = async () => {
      const group = await createGroup(app, t.communityId);
      const members = await createMembers(app, t.communityId, Array.from({ length: 4 }, () => ({})));
      return { group, members };
    };
    let current = await fixture();
    const answers = await race({
      bulk: async () => {
        const { group, members } = current;
        return app.http
          .post(`/api/v1/groups/${group.id}/memberships/_bulk`)
          .set(key())
          .send({ groupMemberships: members.map((m) => ({ memberId: m.id })) });
      },
      reorder: async () => {
        const { group } = current;
        const list = await app.http.get(`/api/v1/groups/${group.id}/memberships?limit=100`).set(key());
        if (list.status !== 200) return list;
        const order = list.body.results.map((r: { id: string }) => ({ id: r.id })).reverse();
        return app.http.patch(`/api/v1/groups/${group.id}/memberships/order`).set(key()).send({ order });
      },
      remove: async () => {
        await sleep(50);
        const { group } = current;
        const out = await app.http.delete(`/api/v1/groups/${group.id}`).set(key());
        current = await fixture();
        return out;
      },
    });
    expectStatuses(answers.bulk, [201, 404, 409]);
    // 400: the list read before the reorder changed meanwhile (a membership was added).
    expectStatuses(answers.reorder, [200, 204, 400, 404]);
    expectStatuses(answers.remove, [204, 404]);
    await expectConsistent();
  });
});

describe('additional-field delete vs member writes carrying its value', () => {
  it('creates and updates with the value race the delete: no 5xx, refusals name the field id', async () => {
    const newField = async () =>
      (await app.http.post('/api/v1/additional_fields').set(key()).send({ name: `f-${Math.random()}`, type: 'TEXT' })).body.id as string;
    let field = await newField();
    const [target] = await createMembers(app, t.communityId, [{}]);
    const answers = await race({
      create: async () =>
        app.http.post('/api/v1/members').set(key()).send({ firstName: 'A', lastName: 'B', additionalFields: [{ id: field, value: 'v' }] }),
      update: async () => app.http.patch(`/api/v1/members/${target.id}`).set(key()).send({ additionalFields: [{ id: field, value: `v${Math.random()}` }] }),
      remove: async () => {
        await sleep(30);
        const out = await app.http.delete(`/api/v1/additional_fields/${field}`).set(key());
        field = await newField();
        return out;
      },
    });
    expectStatuses(answers.create, [201, 400]);
    expectStatuses(answers.update, [204, 400]);
    expectStatuses(answers.remove, [204, 404]);
    for (const a of [...answers.create, ...answers.update].filter((r) => r.status === 400)) {
      expect(a.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/additionalFields/0/id']);
    }
    await expectConsistent();
  });
});

describe('member delete vs member import', () => {
  it('imports touching a member race its delete: no 5xx, every job completes, consistent afterwards', async () => {
    const group = await createGroup(app, t.communityId, { externalId: `race-g-${Date.now()}` });
    const ids = Array.from({ length: 4 }, (_, i) => `race-m-${Date.now()}-${i}`);
    const jobIds: string[] = [];
    const answers = await race({
      import: async () => {
        const res = await app.http
          .post('/api/v1/triggers/members/import')
          .set(key())
          .send({ members: ids.map((externalId) => ({ externalId, firstName: 'I', lastName: 'M', groupExternalIds: [group.externalId] })) });
        if (res.status === 202) jobIds.push(res.body.id);
        await sleep(100);
        return res;
      },
      remove: async () => {
        const out: Res[] = [];
        for (const id of ids) out.push(await app.http.delete(`/api/v1/members/${id}?key=externalId`).set(key()));
        await sleep(20);
        return out;
      },
    });
    expectStatuses(answers.import, [202]);
    expectStatuses(answers.remove, [204, 404]);
    const gql = gqlWith(app);
    for (const id of jobIds) {
      for (;;) {
        const { data } = await gql('query($id: ID!) { importJob(id: $id) { status } }', { id }, t.key);
        if (data.importJob.status === 'COMPLETED') break;
        expect(data.importJob.status).not.toBe('FAILED');
        await sleep(100);
      }
    }
    await expectConsistent();
  });
});
