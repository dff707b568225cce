import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { callerScope } from '../../src/db/caller-budget';
import { SERVICE_ROLE, asOwner, bypassCounts, inCommunity } from '../../src/db/tenancy';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { startRuntime } from '../../src/runtime';
import { READ_ROUTER } from '../../src/db/replicas';
import { readTransaction } from '../../src/db/transaction';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { startReplicated, type Replicated } from '../helpers/standby';
import { tenancySweep } from '../helpers/tenancy-sweep';
import { asTestOwner } from '../helpers/owner';
import { testDatabaseUrl } from '../helpers/database';
import { asServiceRole } from '../helpers/service-role';

/** Every table with community_id, as the database lists them (a new one is covered at once). */
async function tenantTables(client: Client): Promise<string[]> {
  const { rows } = await client.query<{ table_name: string }>(
    `select c.table_name from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
      where c.table_schema = 'public' and c.column_name = 'community_id' and t.table_type = 'BASE TABLE' order by 1`,
  );
  return rows.map((r) => r.table_name);
}

describe('row-level security: the database holds requests to their community on its own', () => {
  // The whole sweep again, with the application's community filter pointed at the other community.
  describe('with the application filtering B as if it were A', () => tenancySweep({ swapAppCommunity: true }));

  let app: TestApp;
  let a: Tenant;
  let b: Tenant;
  let owner: Client;
  beforeAll(async () => {
    app = await startTestApp();
    a = await app.tenant();
    b = await app.tenant();
    for (const t of [a, b]) {
      const g = await app.http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name: 'G' });
      const m = await app.http.post('/api/v1/members').set('X-API-Key', t.key).send({ firstName: 'M' });
      await app.http.post(`/api/v1/groups/${g.body.id}/memberships`).set('X-API-Key', t.key).send({ memberId: m.body.id });
    }
    owner = new Client({ connectionString: testDatabaseUrl() });
    await owner.connect();
  });
  afterAll(async () => {
    await owner?.end();
    await app?.close();
  });

  it('every tenant table has row-level security enabled and forced, with the tenant policy', async () => {
    const tables = await tenantTables(owner);
    expect(tables.length).toBeGreaterThanOrEqual(14);
    const { rows } = await owner.query<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean; qual: string | null }>(
      `select c.relname, c.relrowsecurity, c.relforcerowsecurity, p.qual from pg_class c
         left join pg_policies p on p.tablename = c.relname and p.schemaname = 'public' and p.policyname = 'tenant_isolation'
        where c.relnamespace = 'public'::regnamespace and c.relname = any($1)`,
      [tables],
    );
    expect(rows).toHaveLength(tables.length);
    for (const r of rows) {
      expect(r, r.relname).toMatchObject({ relrowsecurity: true, relforcerowsecurity: true });
      expect(r.qual, r.relname).toContain("current_setting('app.community_id'::text, true)");
    }
  });

  it('raw SQL as the service role with no community reads zero tenant rows and writes none', async () => {
    const tables = await tenantTables(owner);
    await asServiceRole(owner, null, async () => {
      for (const table of tables) {
        expect((await owner.query(`select count(*)::int as n from ${table}`)).rows[0].n, table).toBe(0);
      }
      await expect(owner.query(`insert into groups (id, community_id, name, created_at, modified_at) values (gen_random_uuid(), $1, 'x', now(), now())`, [a.communityId])).rejects.toThrow(
        /row-level security/,
      );
    });
    // ... while the rows are there
    expect((await owner.query('select count(*)::int as n from groups where community_id = any($1)', [[a.communityId, b.communityId]])).rows[0].n).toBe(2);
  });

  it("with a community set, raw SQL sees that community's rows only, through the existing index", async () => {
    await asServiceRole(owner, a.communityId, async () => {
      const { rows } = await owner.query<{ community_id: string }>('select community_id from group_memberships');
      expect(rows.length).toBe(1);
      expect(rows.every((r) => r.community_id === a.communityId)).toBe(true);
      await owner.query('set local enable_seqscan = off'); // a tiny table: ask for the plan an indexed one gets
      const plan = (await owner.query('explain select id from groups order by created_at, id limit 20')).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/InitPlan/);
      // an index led by community_id, the setting as its condition (an index scan, or a bitmap one once the table is fuller)
      expect(plan).toMatch(/Index (Only )?Scan (using|on) groups_community_\w+/);
      expect(plan).toMatch(/Index Cond: \(community_id = (\$0|\(InitPlan 1\)\.col1)\)/); // PostgreSQL 15 / 18 spelling
    });
  });

  it('a request scope whose community is not known reads nothing (fails closed)', async () => {
    const em = app.runtime.orm.em.fork() as EntityManager;
    const count = () => em.execute<{ n: number }[]>('select count(*)::int as n from groups');
    expect((await callerScope.run({}, count))[0].n).toBe(0);
    // the same statement in the community's scope sees that community's groups only
    expect((await callerScope.run({ communityId: b.communityId }, count))[0].n).toBe(1);
    // a named statement and a transaction too
    const { preparedRows } = await import('../../src/db/prepared');
    expect((await callerScope.run({}, () => preparedRows<{ n: number }>(em, 'select count(*)::int as n from members where true = $1', [true])))[0].n).toBe(0);
    expect(await callerScope.run({ communityId: a.communityId }, () => em.transactional((tem) => tem.execute('select count(*)::int as n from members')))).toEqual([{ n: 1 }]);
  });

  it('work outside any scope and outside the bypass reads no tenant row and writes none (fails closed)', async () => {
    const em = app.runtime.orm.em.fork() as EntityManager;
    expect(callerScope.getStore()).toBeUndefined();
    for (const table of await tenantTables(owner)) {
      expect((await em.execute<{ n: number }[]>(`select count(*)::int as n from ${table}`))[0].n, table).toBe(0);
    }
    const { preparedRows } = await import('../../src/db/prepared');
    expect((await preparedRows<{ n: number }>(em, 'select count(*)::int as n from groups where true = $1', [true]))[0].n).toBe(0);
    expect(await em.transactional((tem) => tem.execute('select count(*)::int as n from members'))).toEqual([{ n: 0 }]);
    await expect(
      em.execute(`insert into groups (id, community_id, name, created_at, modified_at) values (gen_random_uuid(), ?, 'x', now(), now())`, [a.communityId]),
    ).rejects.toThrow(/row-level security/);
  });

  it('asOwner is the one way across communities: it reads every community and logs its reason once', async () => {
    const em = app.runtime.orm.em.fork() as EntityManager;
    const logged: { fields: object; msg: string }[] = [];
    const log = (fields: object, msg: string) => void logged.push({ fields, msg });
    const reason = `test: every community (${Date.now()})`;
    const count = () => em.execute<{ n: number }[]>('select count(*)::int as n from groups where community_id in (?, ?)', [a.communityId, b.communityId]);
    expect((await asOwner(reason, log, count))[0].n).toBe(2);
    expect((await asOwner(reason, log, () => em.transactional((tem) => tem.execute<{ n: number }[]>('select count(*)::int as n from group_memberships where community_id in (?, ?)', [a.communityId, b.communityId]))))[0].n).toBe(2);
    expect(logged).toEqual([{ fields: { reason }, msg: expect.stringContaining('tenancy bypass') }]);
    expect(bypassCounts().get(reason)).toBe(2);
    // ... and only inside it: the same statement after it reads nothing again
    expect((await count())[0].n).toBe(0);
    expect(() => asOwner(' ', log, count)).toThrow(/reason/);
    // a job's work in one community's scope (inCommunity) sees that community only
    expect((await asOwner(reason, log, () => inCommunity(b.communityId, count)))[0].n).toBe(1);
  });

  it("a statement with its setting returns pg's own result (types, fields, rowCount) and fails as the same statement does in a transaction", async () => {
    const em = app.runtime.orm.em.fork() as EntityManager;
    const conn = em.getConnection();
    const inA = <T>(work: () => Promise<T>) => callerScope.run({ communityId: a.communityId }, work);
    const sql = `select id, name, created_at, membership_count, 2::int8 as big, '{"x":[1]}'::jsonb as doc, null::text as nothing from groups where name = ?`;
    const single = (await inA(() => conn.execute(sql, ['G']))) as Record<string, unknown>[];
    const inTransaction = (await inA(() => em.transactional((tem) => tem.getConnection().execute(sql, ['G'])))) as Record<string, unknown>[];
    expect(single).toHaveLength(1);
    expect(single).toEqual(inTransaction);
    expect(single[0]).toMatchObject({ name: 'G', membership_count: 1, big: '2', doc: { x: [1] }, nothing: null });
    expect(single[0].created_at).toBeTruthy(); // in the form the ORM's pool parses timestamps to, as in the transaction
    // the driver's result itself: fields and rowCount, through a named statement (pg's own connection query)
    const knex = conn.getKnex() as unknown as { client: { acquireConnection(): Promise<Client>; releaseConnection(c: Client): Promise<void> } };
    const client = await knex.client.acquireConnection();
    try {
      const res = await inA(() => client.query({ name: 'rls_probe_update', text: 'update groups set name = name where name = $1', values: ['G'] }));
      expect(res).toMatchObject({ command: 'UPDATE', rowCount: 1 });
      const rows = await inA(() => client.query({ text: 'select $1::int as n, $2::text as s', values: [41, "it's"] }));
      expect(rows.fields.map((f) => f.name)).toEqual(['n', 's']);
      expect(rows.rows).toEqual([{ n: 41, s: "it's" }]);
      // a statement with no parameters and several statements in one text
      expect((await inA(() => client.query('select count(*)::int as n from groups'))).rows).toEqual([{ n: 1 }]);
      const several = (await inA(() => client.query('select 1 as one; select count(*)::int as n from groups'))) as unknown as { rows: unknown[] }[];
      expect(several.map((r) => r.rows)).toEqual([[{ one: 1 }], [{ n: 1 }]]);
    } finally {
      await knex.client.releaseConnection(client);
    }
    // errors: the same PostgreSQL error (code, constraint, message) with the setting in front as inside a transaction
    const taken = single[0].id as string;
    const failing = [
      ['select ?::uuid as id', ['not-a-uuid']],
      [`insert into groups (id, community_id, name, created_at, modified_at) values (?, ?, 'dup', now(), now())`, [taken, a.communityId]],
      ['select 1 / ? as n', [0]],
    ] as const;
    for (const [text, params] of failing) {
      const alone = await inA(() => em.execute(text, [...params])).catch((err: { code?: string; constraint?: string; message: string; constructor: unknown }) => err);
      const inTrx = await inA(() => em.transactional((tem) => tem.execute(text, [...params]))).catch((err: { code?: string; message: string }) => err);
      expect(alone, text).toBeInstanceOf(Error);
      expect((alone as Error).constructor, text).toBe((inTrx as Error).constructor);
      expect((alone as { code?: string }).code, text).toBe((inTrx as { code?: string }).code);
      expect((alone as Error).message, text).toBe((inTrx as Error).message);
    }
    // and the connection is fine after each: the next statement runs with its setting
    expect((await inA(() => em.execute<{ n: number }[]>('select count(*)::int as n from groups')))[0].n).toBe(1);
  });

  it('a connection given back to the pool carries no community and is the service role again (it reads nothing)', async () => {
    // Requests of both communities first, so the pool's connections have served them.
    await Promise.all([a, b, a, b].map((t) => app.http.get('/api/v1/groups?limit=5').set('X-API-Key', t.key)));
    const knex = app.runtime.orm.em.getConnection().getKnex() as unknown as {
      client: { acquireConnection(): Promise<Client>; releaseConnection(c: Client): Promise<void>; pool: { max: number } };
    };
    const taken: Client[] = [];
    try {
      // every connection of the pool at once
      for (let i = 0; i < knex.client.pool.max; i++) taken.push(await knex.client.acquireConnection());
      for (const c of taken) {
        // straight on the driver's connection, past the tenancy hook (its original query)
        const raw = Object.getPrototypeOf(c).query.bind(c) as Client['query'];
        const { rows } = await raw(`select coalesce(current_setting('app.community_id', true), '') as community, current_user as role, (select count(*)::int from groups) as groups`);
        expect(rows[0]).toEqual({ community: '', role: SERVICE_ROLE, groups: 0 });
      }
    } finally {
      for (const c of taken) await knex.client.releaseConnection(c);
    }
  });
});

describe('row-level security on a read replica', () => {
  let db: Replicated | undefined;
  afterAll(async () => {
    await db?.close();
  });

  it("a read served by the replica carries the caller's community (statements, named statements, read transactions); none without one", async () => {
    db = await startReplicated('0s');
    const config = loadConfig({ LOG_LEVEL: 'silent', ADMIN_TOKEN: 'rls-replica-operator-0123456', DATABASE_REPLICA_URLS: db.standbyUrl });
    const runtime = await startRuntime(config, db.primaryUrl, { migrate: false });
    try {
      const http = request(runtime.app);
      const op = (query: string, variables?: object) => http.post('/graphql').set('authorization', 'Bearer rls-replica-operator-0123456').send({ query, variables });
      const communities: string[] = [];
      for (const name of ['A', 'B']) {
        const id = (await op('mutation($i: CreateCommunityInput!) { createCommunity(input: $i) { id } }', { i: { name } })).body.data.createCommunity.id;
        const key = (await op('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }', { i: { communityId: id } })).body.data.createApiKey.key;
        expect((await http.post('/api/v1/groups').set('x-api-key', key).send({ name: `${name} group` })).status).toBe(201);
        communities.push(id);
      }
      const [a] = communities;
      const reads = runtime.state.get(READ_ROUTER);
      const em = runtime.orm.em.fork() as unknown as EntityManager;
      const probe = `select pg_is_in_recovery() as replica, current_user as role, current_setting('app.community_id', true) as community,
                            (select count(*)::int from groups) as groups, (select count(*)::int from groups where community_id = ?) as own`;
      type Probe = { replica: boolean; role: string; community: string; groups: number; own: number };
      // wait until the standby has both groups (read as the owner, through the bypass)
      for (let i = 0; i < 100; i++) {
        const [row] = await asTestOwner(() => reads.read(undefined, undefined, () => em.execute<Probe[]>(probe, [a])));
        if (row.replica && row.groups === 2) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const onReplica = <T>(scope: { communityId?: string }, work: () => Promise<T>) => reads.read(undefined, undefined, () => callerScope.run(scope, work));
      const expectA = (row: Probe) => expect(row).toMatchObject({ replica: true, role: SERVICE_ROLE, community: a, groups: 1, own: 1 });
      expectA((await onReplica({ communityId: a }, () => em.execute<Probe[]>(probe, [a])))[0]);
      const { preparedRows } = await import('../../src/db/prepared');
      expectA((await onReplica({ communityId: a }, () => preparedRows<Probe>(em, probe, [a])))[0]);
      expectA((await onReplica({ communityId: a }, () => readTransaction(em, (tem) => tem.execute<Probe[]>(probe, [a]))))[0]);
      // a request scope without a community: nothing, on the replica too
      expect((await onReplica({}, () => em.execute<Probe[]>(probe, [a])))[0]).toMatchObject({ replica: true, groups: 0, own: 0 });
    } finally {
      await runtime.close();
    }
  }, 120_000);
});
