import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/rest/routes';
import type { RouteSpec } from '../../src/rest/route';
import { startTestApp, type TestApp, type Tenant } from './app';

/**
 * The isolation sweep, shared by test/platform/tenancy.test.ts (the application's filters and the
 * database's row-level security together) and test/platform/row-level-security.test.ts, which runs it
 * with `swapAppCommunity`: B's requests are filtered by the application as if they were A's
 * (TENANCY_TEST_APP_COMMUNITY, honoured only when NODE_ENV=test), so only the database stands
 * between B and A's records.
 */
export function tenancySweep(opts: { swapAppCommunity: boolean }): void {
  /**
   * The isolation sweep is generated from the route table: every id-addressed route, in
   * every addressing mode, is called with another community's key. A route the sweep
   * cannot fill in fails here, so new routes are covered as they are added.
   */
  let app: TestApp;
  let a: Tenant;
  let b: Tenant;
  const ids: Record<string, { id: string; externalId: string | null }> = {};
  let bMemberId: string;
  let bOwnGroup: { id: string };

  const post = async (tenant: Tenant, path: string, body: object) => {
    const res = await app.http.post(`/api/v1${path}`).set('X-API-Key', tenant.key).send(body);
    expect(res.status, `${path}: ${res.text}`).toBe(201);
    return res.body;
  };

  beforeAll(async () => {
    app = await startTestApp();
    a = await app.tenant();
    b = await app.tenant();
    ids.group = await post(a, '/groups', { name: 'A group', externalId: 'shared-ext' });
    ids.member = await post(a, '/members', { firstName: 'Ann', externalId: 'shared-ext' });
    ids.membership = await post(a, `/groups/${ids.group.id}/memberships`, { memberId: ids.member.id, externalId: 'shared-ext' });
    ids.field = await post(a, '/additional_fields', { name: 'Shoe size', type: 'TEXT' });
    ids.endpoint = await post(a, '/webhook_endpoints', { url: 'https://93.184.215.14/hook', events: ['*'] });
    bMemberId = (await post(b, '/members', { firstName: 'Bob' })).id;
    const job = await app.http.post('/api/v1/triggers/groups/import').set('X-API-Key', a.key).send({ groups: [{ externalId: 'g', name: 'G' }] });
    expect(job.status).toBe(202);
    ids.job = { id: job.body.id, externalId: null };
    bOwnGroup = await post(b, '/groups', { name: 'B group' }); // B's own write, for the feed and the bodies below
    if (opts.swapAppCommunity) process.env.TENANCY_TEST_APP_COMMUNITY = `${b.communityId}=${a.communityId}`;
  });
  afterAll(async () => {
    delete process.env.TENANCY_TEST_APP_COMMUNITY;
    await app.close();
  });

  /** A body that is valid for community B, so only the foreign path can make the request fail. */
  function bodyFor(route: RouteSpec): object | undefined {
    if (!route.body) return undefined;
    const bodies: Record<string, object> = {
      updateGroup: { about: 'hijack' },
      addGroupMembership: { memberId: bMemberId },
      addGroupMemberships: { groupMemberships: [{ memberId: bMemberId }] },
      updateGroupMembershipsOrder: { order: [] },
      updateGroupMembership: { title: 'hijack' },
      updateAdditionalField: { name: 'hijack' },
      updateMember: { firstName: 'hijack' },
      updateWebhookEndpoint: { description: 'hijack' },
    };
    const body = bodies[route.operationId];
    if (!body) throw new Error(`tenancy sweep: add a valid body for ${route.operationId}`);
    return body;
  }

  function recordOf(route: RouteSpec, param: string): keyof typeof ids {
    if (param === 'groupIdentifier') return 'group';
    const byResource: Record<string, keyof typeof ids> = {
      groups: 'group',
      group_memberships: 'membership',
      members: 'member',
      additional_fields: 'field',
      triggers: 'job',
      webhooks: 'endpoint',
    };
    const record = byResource[route.resource];
    if (!record) throw new Error(`tenancy sweep: no fixture for ${route.resource} (${route.operationId})`);
    return record;
  }

  /** Every way to address the route's records: by id, and by externalId where the route allows it. */
  function variants(route: RouteSpec): { name: string; path: (missing: boolean) => string }[] {
    const refs = Object.values(route.refs ?? {});
    const keyParams = [...new Set(refs.map((r) => r.keyParam).filter((k): k is 'key' | 'groupsKey' => !!k))];
    const modes: Record<string, 'id' | 'externalId'>[] = [{}];
    for (const k of keyParams) modes.push({ [k]: 'externalId' });
    if (keyParams.length > 1) modes.push(Object.fromEntries(keyParams.map((k) => [k, 'externalId'])));
    return modes.map((mode) => ({
      name: JSON.stringify(mode),
      path: (missing) => {
        const path = route.path.replace(/:(\w+)/g, (_m, param: string) => {
          const binding = refs.find((r) => r.param === param)!;
          const byExt = binding.keyParam !== null && mode[binding.keyParam] === 'externalId';
          if (missing) return byExt ? 'no-such-ext' : '00000000-0000-4000-8000-000000000000';
          const rec = ids[recordOf(route, param)];
          return byExt ? rec.externalId! : rec.id;
        });
        const query = new URLSearchParams(mode).toString();
        return `/api/v1${path}${query ? `?${query}` : ''}`;
      },
    }));
  }

  const addressed = routes.filter((r) => r.refs && Object.keys(r.refs).length);

  describe('tenant isolation sweep over the route table', () => {
    it('covers every id-addressed route', () => {
      expect(addressed.length).toBeGreaterThanOrEqual(15);
    });

    for (const route of addressed) {
      it(`${route.method} ${route.path}: another community gets the same 404 as a missing id`, async () => {
        for (const v of variants(route)) {
          const send = (path: string) => {
            const req = app.http[route.method.toLowerCase() as 'get'](path).set('X-API-Key', b.key);
            const body = bodyFor(route);
            return body ? req.send(body) : req;
          };
          const foreign = await send(v.path(false));
          const missing = await send(v.path(true));
          expect(foreign.status, `${v.name} ${foreign.text}`).toBe(404);
          expect(missing.status).toBe(404);
          const core = (r: typeof foreign) => ({ type: r.body.type, title: r.body.title, status: r.body.status, detail: r.body.detail });
          expect(core(foreign)).toEqual(core(missing));
        }
      });
    }

    it("the owner's records are untouched afterwards", async () => {
      const group = await app.http.get(`/api/v1/groups/${ids.group.id}`).set('X-API-Key', a.key);
      expect(group.body).toMatchObject({ name: 'A group', about: null, membershipCount: 1 });
      const m = await app.http.get(`/api/v1/groups/${ids.group.id}/memberships/${ids.membership.id}`).set('X-API-Key', a.key);
      expect(m.body.title).toBeNull();
      expect((await app.http.get(`/api/v1/members/${ids.member.id}`).set('X-API-Key', a.key)).body.firstName).toBe('Ann');
      expect((await app.http.get(`/api/v1/additional_fields/${ids.field.id}`).set('X-API-Key', a.key)).body.name).toBe('Shoe size');
    });

    it('lists never show another community\'s records', async () => {
      const foreignIds = Object.values(ids).map((r) => r.id);
      for (const route of routes.filter((r) => r.list && !Object.keys(r.refs ?? {}).length)) {
        const res = await app.http.get(`/api/v1${route.path}?limit=100`).set('X-API-Key', b.key);
        expect(res.status).toBe(200);
        for (const row of res.body.results) expect(foreignIds).not.toContain(row.id);
      }
      // the event feed: B's own write is there (unless the application looks for A's), nothing of A's
      const feed = await app.http.get('/api/v1/events?limit=100').set('X-API-Key', b.key);
      expect(feed.status).toBe(200);
      if (!opts.swapAppCommunity) expect(feed.body.results.length).toBeGreaterThan(0);
      const text = JSON.stringify(feed.body.results);
      for (const id of foreignIds) expect(text).not.toContain(id);
      const aFeed = await app.http.get('/api/v1/events?limit=1').set('X-API-Key', a.key);
      const foreignEvent = aFeed.body.results[0].id;
      expect((await app.http.get(`/api/v1/events?after=${foreignEvent}`).set('X-API-Key', b.key)).status).toBe(400);
    });

    it('GraphQL root lists and lookups never show another community\'s records', async () => {
      const res = await app.http.post('/graphql').set('X-API-Key', b.key).send({
        query: `{ groups(limit: 100) { results { id } } members(limit: 100) { results { id } } additionalFields(limit: 100) { results { id } }
          webhookEndpoints(limit: 100) { results { id } } events(limit: 100) { results { id data } } }`,
      });
      expect(res.body.errors).toBeUndefined();
      const seen = JSON.stringify(res.body.data);
      for (const r of Object.values(ids)) expect(seen).not.toContain(r.id);
      for (const [field, id] of [['group', ids.group.id], ['member', ids.member.id], ['groupMemberships', null]] as const) {
        const query =
          field === 'groupMemberships'
            ? `query($g: ID) { groupMemberships(groupRef: { id: $g }) { size } }`
            : `query($id: ID) { ${field}(ref: { id: $id }) { id } }`;
        const lookup = await app.http.post('/graphql').set('X-API-Key', b.key).send({ query, variables: { id, g: ids.group.id } });
        expect(lookup.body.errors[0].extensions.code, field).toBe('NOT_FOUND');
      }
    });

    it("bodies cannot reference another community's records", async () => {
      const ownGroup = bOwnGroup;
      const cases: [string, object, string][] = [
        [`/groups/${ownGroup.id}/memberships`, { memberId: ids.member.id }, '/memberId'],
        [`/groups/${ownGroup.id}/memberships/_bulk`, { groupMemberships: [{ memberId: ids.member.id }] }, '/groupMemberships/0/memberId'],
        ['/members', { firstName: 'x', additionalFields: [{ id: ids.field.id, value: 'v' }] }, '/additionalFields/0/id'],
        ['/notifications', { title: 't', message: 'm', memberIds: [ids.member.id] }, '/memberIds/0'],
      ];
      for (const [path, body, pointer] of cases) {
        const res = await app.http.post(`/api/v1${path}`).set('X-API-Key', b.key).send(body);
        if (opts.swapAppCommunity) {
          // the application looks for B's own group in A's community, and the database shows it none of A's
          expect(res.status, `${path} ${res.text}`).toBeGreaterThanOrEqual(400);
          expect(res.status, `${path} ${res.text}`).toBeLessThan(500);
          continue;
        }
        expect(res.status, `${path} ${res.text}`).toBe(400);
        expect(res.body.errors.map((e: any) => e.pointer)).toContain(pointer);
      }
    });
  });
}
