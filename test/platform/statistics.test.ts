import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Pool } from 'pg';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { testDatabaseUrl } from '../helpers/database';
import { asServiceRole, rowsRead } from '../helpers/service-role';
import { sleep } from '../helpers/jobs';
import { GROWN_TABLES, StatisticsRefresher } from '../../src/jobs/statistics';
import { MEMBER_FIELD_VALUES } from '../../src/modules/members/member.loaders';
import { arrayOf } from '../../src/db/sql';
import { createLogger } from '../../src/logger';

/**
 * Plans made from statistics that no longer describe the tables (docs/performance.md,
 * "Statistics of a growing database"). PostgreSQL keeps a connection's plans: made while this
 * file's database was young (its tables empty, never analyzed), they stay in use while a
 * community grows to thousands of members, until ANALYZE invalidates them.
 *
 * - The foreign-key check of a member's additional field value (PostgreSQL's own statement,
 *   repeated here word for word, planned generic as its checks are) walked the community.
 *   StatisticsRefresher's ANALYZE makes it plan again, by the key; a table it cannot lock at
 *   once is left to the next round, without waiting.
 * - The additional field values of a page (MEMBER_FIELD_VALUES) read only the page's values,
 *   whatever the plan was made from; the former statement, the control, walked the community.
 */
const RI_CHECK = `SELECT 1 FROM ONLY "public"."members" x WHERE "community_id" OPERATOR(pg_catalog.=) $1 AND "id" OPERATOR(pg_catalog.=) $2 FOR KEY SHARE OF x`;
const FORMER_VALUES = `select v.member_id as "memberId", v.field_id as "id", v.value
         from member_field_values v
         join members m on m.id = v.member_id
         join additional_fields f on f.id = v.field_id
        where m.community_id = $1 and v.member_id = any($2::uuid[])
        order by f.order_number, f.created_at, f.id`;
const MEMBERS = 3000;

let app: TestApp;
let t: Tenant;
let field: string;
let owner: Client;
const pools: Pool[] = [];
const logger = createLogger('silent');

const api = (method: 'get' | 'post', path: string) => app.http[method](`/api/v1${path}`).set('X-API-Key', t.key);

/** `work` as the service role of t's community (row-level security on), rolled back. */
const asService = <T>(work: () => Promise<T>): Promise<T> => asServiceRole(owner, t.communityId, work);
const TABLES = ['members', 'member_field_values'];

/** EXECUTE of a prepared statement, its arguments as literals (EXECUTE takes no bound parameters). */
const execute = (name: string, ...args: string[]) => owner.query(`execute ${name}(${args.map((a) => owner.escapeLiteral(a)).join(', ')})`);
const planOf = async (sql: string) => (await owner.query<{ 'QUERY PLAN': string }>(`explain (costs off) ${sql}`)).rows.map((r) => r['QUERY PLAN']).join('\n');

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
  field = (await api('post', '/additional_fields').send({ name: 'City', type: 'TEXT' }).expect(201)).body.id;
  owner = new Client({ connectionString: testDatabaseUrl() });
  await owner.connect();
  // The plans' lifetime is the subject: autovacuum's own ANALYZE of the tables (due after the
  // bulks below, at its next round) would invalidate them whenever it happened to come, and on
  // a loaded machine it came within this file (both tests failed so). This file's database is
  // its own (test/file-database.ts); the refresher's ANALYZE is what the tests look at.
  for (const table of [...TABLES, 'events']) await owner.query(`alter table ${table} set (autovacuum_enabled = off)`);
  // Planned once and kept, as a connection's named statements are; generic, as PostgreSQL's
  // foreign-key checks are after their first executions.
  await owner.query('set plan_cache_mode = force_generic_plan');
  await owner.query(`prepare ri_check(uuid, uuid) as ${RI_CHECK}`);
  await owner.query(`prepare page_values(uuid[], uuid) as ${MEMBER_FIELD_VALUES.replace('?', '$1').replace('?', '$2')}`);
  await owner.query(`prepare former_values(uuid, uuid[]) as ${FORMER_VALUES}`);
  const none = arrayOf(['00000000-0000-7000-8000-000000000000']);
  await execute('ri_check', t.communityId, '00000000-0000-7000-8000-000000000000');
  await asService(() => execute('page_values', none, t.communityId));
  await asService(() => execute('former_values', t.communityId, none));
  // The community grows, by bulks, as a client's first import does.
  for (let start = 0; start < MEMBERS; start += 1000) {
    const members = Array.from({ length: 1000 }, (_, k) => ({ externalId: `s-${start + k}`, additionalFields: [{ id: field, value: `v${start + k}` }] }));
    await api('post', '/members/_bulk').send({ members }).expect(201);
  }
}, 120_000);
afterAll(async () => {
  await owner?.end();
  await Promise.all(pools.map((p) => p.end()));
  await app?.close();
});

describe('plans made while the database was young', () => {
  it('a page reads only its members values; the former statement, planned alike, walked the community', async () => {
    const page = (await api('get', '/members?limit=20').expect(200)).body.results.map((m: { id: string }) => m.id);
    const ids = arrayOf(page);
    const { result: rows, read } = await asService(() => rowsRead(owner, TABLES, async () => (await execute('page_values', ids, t.communityId)).rows));
    expect(rows).toHaveLength(20);
    expect(read.members).toBe(0);
    expect(read.member_field_values).toBeLessThanOrEqual(40);
    const { read: former } = await asService(() => rowsRead(owner, TABLES, () => execute('former_values', t.communityId, ids)));
    expect(former.members + former.member_field_values).toBeGreaterThanOrEqual(MEMBERS);
  });

  it('the refresher analyzes the tables that grew, skips a locked one without waiting, one instance at a time, and the foreign-key check is planned again by the key', async () => {
    // The index the check finds its member by: by the key (the primary key, or the community's
    // with the id next) or, the control, the plan kept from the empty table, by an index that
    // walks the community (its id, if there, comes after an unbound column).
    const ri = async () => (await planOf(`execute ri_check('${t.communityId}', '${t.communityId}')`)).match(/Index (?:Only )?Scan using (\w+)/)?.[1];
    const BY_KEY = ['members_pkey', 'members_community_id_id_unique'];
    expect(BY_KEY).not.toContain(await ri());
    const grown = async () => (await owner.query<{ table: string }>(GROWN_TABLES)).rows.map((r) => r.table);
    expect(await grown()).toEqual(expect.arrayContaining(['members', 'member_field_values', 'events']));
    const refreshers = [0, 1].map(() => {
      const pool = new Pool({ connectionString: testDatabaseUrl(), max: 1 });
      pools.push(pool);
      return new StatisticsRefresher(pool, logger, 60_000);
    });

    // A table another transaction holds (as autovacuum does while it works) is left for later,
    // at once: a refresh that waited for the lock would never return while it is held.
    await owner.query('begin');
    await owner.query('lock table member_field_values in share update exclusive mode');
    const first = await refreshers[0].refresh();
    await owner.query('commit');
    expect(first).toContain('members');
    expect(first).not.toContain('member_field_values');
    expect(await grown()).toEqual(['member_field_values']);
    expect(BY_KEY).toContain(await ri());

    // Two instances look at once: the table is analyzed by one of them.
    const [a, b] = await Promise.all(refreshers.map((r) => r.refresh()));
    expect([...a, ...b]).toEqual(['member_field_values']);
    expect(await grown()).toEqual([]);
    const { rows } = await owner.query<{ reltuples: number }>(`select reltuples from pg_class where oid = 'member_field_values'::regclass`);
    expect(rows[0].reltuples).toBeGreaterThanOrEqual(MEMBERS);
    // Nothing grew since: the next round analyzes nothing.
    expect(await refreshers[0].refresh()).toEqual([]);
  });
});

describe('the worker', () => {
  it('refreshes on its own every DB_STATISTICS_REFRESH_SECONDS', async () => {
    const worker = await startTestApp({}, { worker: { statisticsSeconds: 1 } });
    try {
      const tenant = await worker.tenant();
      const count = async () =>
        Number((await owner.query<{ n: string }>(`select analyze_count as n from pg_stat_user_tables where relname = 'groups'`)).rows[0].n);
      const before = await count();
      const groups = Array.from({ length: 400 }, (_, i) => ({ name: `g${i}` }));
      for (const g of groups) await worker.http.post('/api/v1/groups').set('X-API-Key', tenant.key).send(g).expect(201);
      for (let i = 0; i < 100 && (await count()) === before; i++) await sleep(100);
      expect(await count()).toBeGreaterThan(before);
    } finally {
      await worker.close();
    }
  }, 60_000);
});
