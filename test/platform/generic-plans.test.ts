import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inCommunity } from '../../src/db/tenancy';
import { ROW_SECURITY_MODES, startTestApp, type TestApp, type Tenant } from '../helpers/app';

/**
 * A community's plain list page is planned once per connection (`generic`, src/db/prepared.ts
 * and src/db/tenancy.ts), with row-level security on and off; a page of one parent (a group's
 * memberships) is left to PostgreSQL's plan cache; the plan setting does not outlive its
 * statement. One ORM connection (DB_POOL_MAX=1), so every statement outside a transaction runs
 * on the connection whose pg_prepared_statements this reads.
 */
describe.each(ROW_SECURITY_MODES)('generic plans for plain list pages, row-level security %s', (_mode, env) => {
  let app: TestApp;
  let t: Tenant;
  let groupId: string;

  beforeAll(async () => {
    app = await startTestApp({ DB_POOL_MAX: '1', ...env });
    t = await app.tenant();
    for (let i = 0; i < 3; i++) {
      const g = await app.http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name: `G${i}` });
      groupId = g.body.id;
    }
    const m = await app.http.post('/api/v1/members').set('X-API-Key', t.key).send({ firstName: 'M' });
    await app.http.post(`/api/v1/groups/${groupId}/memberships`).set('X-API-Key', t.key).send({ memberId: m.body.id });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  /** The connection's statements whose text matches `like`, with the plans each ran. */
  const statements = (like: string) =>
    inCommunity(t.communityId, async () => {
      const em = app.runtime.orm.em.fork() as EntityManager;
      const rows = await em.execute<{ statement: string; generic_plans: string; custom_plans: string }[]>(
        'select statement, generic_plans, custom_plans from pg_prepared_statements where statement like ?',
        [like],
      );
      return rows.map((r) => ({ generic: Number(r.generic_plans), custom: Number(r.custom_plans) }));
    });

  it('the groups page and the members page run a generic plan from the first request, for every page size', async () => {
    for (const limit of [20, 5, 20, 1, 100, 20, 20, 3]) {
      const res = await app.http.get(`/api/v1/groups?limit=${limit}`).set('X-API-Key', t.key);
      expect(res.status).toBe(200);
      expect(res.body.results).toHaveLength(Math.min(limit, 3));
    }
    for (let i = 0; i < 3; i++) expect((await app.http.get('/api/v1/members').set('X-API-Key', t.key)).body.results).toHaveLength(1);
    expect(await statements('%from "groups" t where t."community_id" = $1 order by t."created_at" asc, t."id" asc limit $2 offset $3')).toEqual([
      { generic: 8, custom: 0 },
    ]);
    expect(await statements('%from "members" t where t."community_id" = $1 order by t."created_at" asc, t."id" asc limit $2 offset $3')).toEqual([
      { generic: 3, custom: 0 },
    ]);
  });

  it("a group's memberships page is planned by PostgreSQL's plan cache: custom plans for its first runs", async () => {
    for (let i = 0; i < 3; i++) {
      expect((await app.http.get(`/api/v1/groups/${groupId}/memberships`).set('X-API-Key', t.key)).body.results).toHaveLength(1);
    }
    expect(await statements('%from "group_memberships" t where t."community_id" = $_ and t."group_id" = $_ %'.replace(/\$_/g, '$%'))).toEqual([
      { generic: 0, custom: 3 },
    ]);
  });

  it('the plan setting ends with its statement: the next statement on the connection plans as configured', async () => {
    await app.http.get('/api/v1/groups').set('X-API-Key', t.key).expect(200);
    const mode = await inCommunity(t.communityId, () =>
      (app.runtime.orm.em.fork() as EntityManager).execute<{ mode: string }[]>("select current_setting('plan_cache_mode') as mode"),
    );
    expect(mode).toEqual([{ mode: 'auto' }]);
  });
});
