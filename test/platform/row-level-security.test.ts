import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Client } from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { callerScope } from '../../src/db/caller-budget';
import { SERVICE_ROLE } from '../../src/db/tenancy';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { startRuntime } from '../../src/runtime';
import { READ_ROUTER } from '../../src/db/replicas';
import { readTransaction } from '../../src/db/transaction';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { startReplicated, type Replicated } from '../helpers/standby';
import { tenancySweep } from '../helpers/tenancy-sweep';

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
    owner = new Client({ connectionString: inject('databaseUrl') });
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
    await owner.query('begin');
    try {
      await owner.query(`set local role ${SERVICE_ROLE}`);
      for (const table of tables) {
        expect((await owner.query(`select count(*)::int as n from ${table}`)).rows[0].n, table).toBe(0);
      }
      await expect(owner.query(`insert into groups (id, community_id, name, created_at, modified_at) values (gen_random_uuid(), $1, 'x', now(), now())`, [a.communityId])).rejects.toThrow(
        /row-level security/,
      );
    } finally {
      await owner.query('rollback');
    }
    // ... while the rows are there
    expect((await owner.query('select count(*)::int as n from groups where community_id = any($1)', [[a.communityId, b.communityId]])).rows[0].n).toBe(2);
  });

  it("with a community set, raw SQL sees that community's rows only, through the existing index", async () => {
    await owner.query('begin');
    try {
      await owner.query(`select set_config('role', '${SERVICE_ROLE}', true), set_config('app.community_id', $1, true)`, [a.communityId]);
      const { rows } = await owner.query<{ community_id: string }>('select community_id from group_memberships');
      expect(rows.length).toBe(1);
      expect(rows.every((r) => r.community_id === a.communityId)).toBe(true);
      await owner.query('set local enable_seqscan = off'); // a tiny table: ask for the plan an indexed one gets
      const plan = (await owner.query('explain select id from groups order by created_at, id limit 20')).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/InitPlan/);
      // an index led by community_id, the setting as its condition (an index scan, or a bitmap one once the table is fuller)
      expect(plan).toMatch(/Index (Only )?Scan (using|on) groups_community_\w+/);
      expect(plan).toMatch(/Index Cond: \(community_id = (\$0|\(InitPlan 1\)\.col1)\)/); // PostgreSQL 15 / 18 spelling
    } finally {
      await owner.query('rollback');
    }
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
      // wait until the standby has both groups (read as the owner, outside any request)
      for (let i = 0; i < 100; i++) {
        const [row] = await reads.read(undefined, undefined, () => em.execute<Probe[]>(probe, [a]));
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
