import type { Server } from 'node:http';
import type net from 'node:net';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
} from 'graphql';
import { expect } from 'vitest';
import { buildSchema } from '../../src/graphql/schema';
import { routes } from '../../src/rest/routes';
import { listen } from '../../src/runtime';
import { startTestApp, type TestApp } from './app';
import { docArb, jsonish, LEAK, weird } from './fuzz';
import { rawRequest, type RawAnswer } from './raw-request';

/*
 * A stateful, model-based fuzzer (fast-check `fc.commands` + `fc.asyncModelRun`): a model of
 * two communities' groups, members, memberships, additional fields and webhook endpoints,
 * driven through every REST route and /graphql, with hostile requests mixed in at every
 * layer. Oracles (docs/reliability.md): no 5xx and no INTERNAL_SERVER_ERROR; a 4xx is
 * problem+json (a 400 names the field or parameter) and leaves the community's records
 * byte-identical; a 2xx agrees with the model; no answer to one community names an id of
 * the other.
 */

/* ------------------------------------------------------------------ model */

interface Group { externalId: string | null; name: string; about?: string; color?: string; isVisibleInApp: boolean }
interface Member { externalId: string | null; firstName: string; lastName: string; emailAddress: string | null }
interface Membership { groupId: string; memberId: string; externalId: string | null; title: string | null; orderNumber: number }
interface Field { name: string; placeholder: string | null; type: 'TEXT' }
interface Webhook { url: string; events: string[]; description: string | null }

interface Community {
  id: string;
  key: string;
  groups: Map<string, Group>;
  members: Map<string, Member>;
  memberships: Map<string, Membership>;
  fields: Map<string, Field>;
  webhooks: Map<string, Webhook>;
  imports: string[];
}

export interface Model {
  c: [Community, Community];
}

export interface Real {
  port: number;
  app: TestApp;
  stats: Stats;
}

export interface Stats {
  commands: number;
  requests: number;
  statuses: Record<string, number>;
  resyncs: number;
}

const GRAPHQL_LEAK = /\bat [\w.<>]+ \(|\.ts:\d+|node_modules|\binsert into\b|\bviolates\b|syntax error at|MikroORM/i;

const other = (m: Model, i: number) => m.c[1 - i];

/** Every id of community `c`, and the community's own id: none may appear in an answer to the other community. */
function idsOf(c: Community): string[] {
  return [c.id, ...c.groups.keys(), ...c.members.keys(), ...c.memberships.keys(), ...c.fields.keys(), ...c.webhooks.keys(), ...c.imports];
}

const pick = <T>(items: T[], n: number): T | undefined => (items.length ? items[n % items.length] : undefined);

/* ---------------------------------------------------------------- requests */

interface Req {
  method: string;
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  json?: unknown;
}

/** Sends one request as community `ci` (its key unless `headers` say otherwise) and applies the oracles every answer meets. */
async function call(m: Model, r: Real, ci: number, req: Req): Promise<RawAnswer> {
  const c = m.c[ci];
  const headers: Record<string, string | string[]> = { 'x-api-key': c.key, ...(req.headers ?? {}) };
  let body = req.body;
  if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await rawRequest(r.port, { method: req.method, path: req.path, headers, body });
  r.stats.requests++;
  r.stats.statuses[res.status] = (r.stats.statuses[res.status] ?? 0) + 1;
  const what = `${req.method} ${req.path.slice(0, 200)} -> ${res.status} ${res.text.slice(0, 400)}`;
  expect(res.status, what).toBeLessThan(500);
  expect(res.status, what).toBeGreaterThanOrEqual(200);
  expect(res.text, what).not.toMatch(/INTERNAL_SERVER_ERROR/);
  // GraphQL clients name the schema's types themselves; stack frames, SQL and paths stay hidden there too.
  expect(res.text, `leak: ${what}`).not.toMatch(req.path.startsWith('/graphql') ? GRAPHQL_LEAK : LEAK);
  if (res.status >= 400 && req.method !== 'HEAD' && !req.path.startsWith('/graphql')) {
    expect(res.headers['content-type'], what).toMatch(/^application\/problem\+json/);
    expect(res.body, what).toMatchObject({ status: res.status, title: expect.any(String), type: expect.any(String), detail: expect.any(String) });
    if (res.status === 400) {
      expect(res.body.errors ?? [], `a 400 names the field or parameter: ${what}`).not.toHaveLength(0);
      for (const e of res.body.errors) expect(e).toEqual({ pointer: expect.stringMatching(/^(\/|#\/(path|query|header)\/)/), detail: expect.any(String) });
    }
  }
  for (const id of idsOf(other(m, ci))) expect(res.text.includes(id), `answer to one community names ${id} of the other: ${what}`).toBe(false);
  return res;
}

const enc = encodeURIComponent;

/** A digest of the rows a refused request must not change (as text, so equal means byte-identical). */
async function records(r: Real, communityId: string, imports = true): Promise<string> {
  const { rows } = await r.app.runtime.pool.query(
    `select
       (select coalesce(string_agg(t::text, E'\\n' order by t.id), '') from groups t where community_id = $1) || '|' ||
       (select coalesce(string_agg(t::text, E'\\n' order by t.id), '') from members t where community_id = $1) || '|' ||
       (select coalesce(string_agg(t::text, E'\\n' order by t.id), '') from group_memberships t where community_id = $1) || '|' ||
       (select coalesce(string_agg(t::text, E'\\n' order by t.id), '') from additional_fields t where community_id = $1) || '|' ||
       (select coalesce(string_agg(t::text, E'\\n' order by t.id), '') from webhook_endpoints t where community_id = $1) || '|' ||
       (select coalesce(string_agg(t::text, E'\\n' order by t.id), '') from import_jobs t where community_id = $1 and $2) || '|' ||
       (select coalesce(string_agg(v::text, E'\\n' order by v::text), '') from member_field_values v join members m on m.id = v.member_id where m.community_id = $1)
     as digest`,
    [communityId, imports],
  );
  return rows[0].digest;
}

/** After a hostile write that succeeded, the model is read back from the service (the request was legal after all). */
async function resync(m: Model, r: Real, ci: number): Promise<void> {
  r.stats.resyncs++;
  const c = m.c[ci];
  const list = async (path: string) => {
    const res = await call(m, r, ci, { method: 'GET', path: `${path}${path.includes('?') ? '&' : '?'}limit=100` });
    expect(res.status).toBe(200);
    return res.body.results as Record<string, any>[];
  };
  c.groups = new Map((await list('/api/v1/groups')).map((g) => [g.id, { externalId: g.externalId, name: g.name, about: g.about ?? undefined, color: g.color ?? undefined, isVisibleInApp: g.isVisibleInApp }]));
  c.members = new Map((await list('/api/v1/members')).map((x) => [x.id, { externalId: x.externalId, firstName: x.firstName, lastName: x.lastName, emailAddress: x.emailAddress }]));
  c.fields = new Map((await list('/api/v1/additional_fields')).map((f) => [f.id, { name: f.name, placeholder: f.placeholder, type: f.type }]));
  c.webhooks = new Map((await list('/api/v1/webhook_endpoints')).map((w) => [w.id, { url: w.url, events: w.events, description: w.description }]));
  c.imports = (await list('/api/v1/import_jobs')).map((j) => j.id);
  c.memberships = new Map();
  for (const gid of c.groups.keys()) {
    for (const x of await list(`/api/v1/groups/${gid}/memberships`)) {
      c.memberships.set(x.id, { groupId: gid, memberId: x.memberId, externalId: x.externalId, title: x.title, orderNumber: x.orderNumber });
    }
  }
}

/* ------------------------------------------------------------- arbitraries */

const NAMES = fc.constantFrom('Board', 'Choir', 'Élan', 'Ünïcödé 😀', 'a', 'x'.repeat(256), ' spaced ');
const EXTERNAL = fc.option(fc.constantFrom('e1', 'e2', 'e3', 'e.4', 'E@5'), { nil: null });
const EMAILS = fc.option(fc.constantFrom('a@example.org', 'B@example.org', 'b@example.org', 'c@example.org'), { nil: null });
const TITLES = fc.option(fc.constantFrom('Chair', '', 'Secretary', 't'.repeat(256)), { nil: null });
const COMMUNITY = fc.constantFrom(0, 1);
const CAP = 25;

/* ---------------------------------------------------------------- commands */

type Cmd = fc.AsyncCommand<Model, Real>;

/** One command: `run` does its requests; every answer already went through `call`'s oracles. */
function command(label: string, run: (m: Model, r: Real) => Promise<void>, check: (m: Model) => boolean = () => true): Cmd {
  return {
    check,
    async run(m, r) {
      r.stats.commands++;
      await run(m, r);
    },
    toString: () => label,
  };
}

const groupView = (m: Model, c: Community, id: string) => {
  const g = c.groups.get(id)!;
  let count = 0;
  for (const x of c.memberships.values()) if (x.groupId === id) count++;
  return { id, externalId: g.externalId, name: g.name, isVisibleInApp: g.isVisibleInApp, membershipCount: count, state: 'ORIGINAL', ...(g.about !== undefined ? { about: g.about } : {}), ...(g.color !== undefined ? { color: g.color } : {}) };
};

function createGroup(ci: number, name: string, externalId: string | null, about: string | undefined, idempotent: boolean): Cmd {
  return command(
    `createGroup(${ci}, ${JSON.stringify(name).slice(0, 20)}, ${externalId}, idem=${idempotent})`,
    async (m, r) => {
      const c = m.c[ci];
      const json = { name, ...(externalId !== null ? { externalId } : {}), ...(about !== undefined ? { about } : {}) };
      const key = idempotent ? randomUUID() : undefined;
      const req: Req = { method: 'POST', path: '/api/v1/groups', json, headers: key ? { 'idempotency-key': key } : {} };
      const res = await call(m, r, ci, req);
      const taken = externalId !== null && [...c.groups.values()].some((g) => g.externalId === externalId);
      if (taken) {
        expect(res.status, res.text).toBe(409);
        return;
      }
      expect(res.status, res.text).toBe(201);
      expect(res.body).toEqual({ id: expect.any(String), externalId });
      c.groups.set(res.body.id, { externalId, name, about, isVisibleInApp: true });
      if (key) {
        const again = await call(m, r, ci, req);
        expect(again.status).toBe(201);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.body).toEqual(res.body);
        const changed = await call(m, r, ci, { ...req, json: { ...json, name: name + '!' } });
        expect(changed.status, changed.text).toBe(422);
      }
    },
    (m) => m.c[ci].groups.size < CAP,
  );
}

function getGroup(ci: number, n: number, byExternal: boolean, conditional: boolean, foreign: boolean): Cmd {
  return command(`getGroup(${ci}, ${n}, ext=${byExternal}, etag=${conditional}, foreign=${foreign})`, async (m, r) => {
    const c = m.c[ci];
    const source = foreign ? other(m, ci) : c;
    const id = pick([...source.groups.keys()], n);
    if (!id) return;
    const ext = source.groups.get(id)!.externalId;
    const path = byExternal && ext ? `/api/v1/groups/${enc(ext)}?key=externalId` : `/api/v1/groups/${id}`;
    if (foreign) {
      // The other community's id is not sent in the answer check (call scans for it), so only its status is asserted.
      const res = await rawRequest(r.port, { method: 'GET', path, headers: { 'x-api-key': c.key } });
      const own = byExternal && ext ? [...c.groups.values()].some((g) => g.externalId === ext) : false;
      if (!own) expect(res.status, res.text).toBe(404);
      return;
    }
    const res = await call(m, r, ci, { method: 'GET', path });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject(groupView(m, c, id));
    if (conditional) {
      const etag = res.headers.etag as string;
      expect(etag).toBeTruthy();
      const again = await call(m, r, ci, { method: 'GET', path, headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
    }
  });
}

function patchGroup(ci: number, n: number, patch: Partial<Group>, ifMatch: 'none' | 'fresh' | 'stale'): Cmd {
  return command(`patchGroup(${ci}, ${n}, ${JSON.stringify(patch).slice(0, 60)}, ${ifMatch})`, async (m, r) => {
    const c = m.c[ci];
    const id = pick([...c.groups.keys()], n) ?? randomUUID();
    const headers: Record<string, string> = {};
    if (ifMatch !== 'none' && c.groups.has(id)) {
      const cur = await call(m, r, ci, { method: 'GET', path: `/api/v1/groups/${id}` });
      headers['if-match'] = ifMatch === 'fresh' ? (cur.headers.etag as string) : '"1"';
    }
    const before = await records(r, c.id);
    const res = await call(m, r, ci, { method: 'PATCH', path: `/api/v1/groups/${id}`, json: patch, headers });
    const g = c.groups.get(id);
    const taken = patch.externalId != null && [...c.groups].some(([gid, x]) => gid !== id && x.externalId === patch.externalId);
    const expected = !g ? 404 : ifMatch === 'stale' ? 412 : taken ? 409 : 204;
    expect(res.status, res.text).toBe(expected);
    if (expected === 204) Object.assign(g!, patch);
    else expect(await records(r, c.id)).toBe(before);
  });
}

function deleteGroup(ci: number, n: number): Cmd {
  return command(`deleteGroup(${ci}, ${n})`, async (m, r) => {
    const c = m.c[ci];
    const id = pick([...c.groups.keys()], n) ?? randomUUID();
    const res = await call(m, r, ci, { method: 'DELETE', path: `/api/v1/groups/${id}` });
    if (!c.groups.has(id)) return void expect(res.status).toBe(404);
    expect(res.status, res.text).toBe(204);
    c.groups.delete(id);
    for (const [mid, x] of c.memberships) if (x.groupId === id) c.memberships.delete(mid);
  });
}

function createMember(ci: number, firstName: string, lastName: string, externalId: string | null, emailAddress: string | null): Cmd {
  return command(
    `createMember(${ci}, ${externalId}, ${emailAddress})`,
    async (m, r) => {
      const c = m.c[ci];
      const json = { firstName, lastName, ...(externalId !== null ? { externalId } : {}), ...(emailAddress !== null ? { emailAddress } : {}) };
      const before = await records(r, c.id);
      const res = await call(m, r, ci, { method: 'POST', path: '/api/v1/members', json });
      const taken =
        (externalId !== null && [...c.members.values()].some((x) => x.externalId === externalId)) ||
        (emailAddress !== null && [...c.members.values()].some((x) => x.emailAddress?.toLowerCase() === emailAddress.toLowerCase()));
      if (taken) {
        expect(res.status, res.text).toBe(409);
        expect(await records(r, c.id)).toBe(before);
        return;
      }
      expect(res.status, res.text).toBe(201);
      c.members.set(res.body.id, { externalId, firstName, lastName, emailAddress });
    },
    (m) => m.c[ci].members.size < CAP,
  );
}

function deleteMember(ci: number, n: number): Cmd {
  return command(`deleteMember(${ci}, ${n})`, async (m, r) => {
    const c = m.c[ci];
    const id = pick([...c.members.keys()], n) ?? randomUUID();
    const res = await call(m, r, ci, { method: 'DELETE', path: `/api/v1/members/${id}` });
    if (!c.members.has(id)) return void expect(res.status).toBe(404);
    expect(res.status, res.text).toBe(204);
    c.members.delete(id);
    for (const [mid, x] of c.memberships) if (x.memberId === id) c.memberships.delete(mid);
  });
}

const nextOrder = (c: Community, groupId: string) => Math.max(0, ...[...c.memberships.values()].filter((x) => x.groupId === groupId).map((x) => x.orderNumber)) + 1;

function createMembership(ci: number, gn: number, mn: number, byExternal: boolean, externalId: string | null, title: string | null): Cmd {
  return command(`createMembership(${ci}, g${gn}, m${mn}, ext=${byExternal}, ${externalId})`, async (m, r) => {
    const c = m.c[ci];
    const groupId = pick([...c.groups.keys()], gn);
    const memberId = pick([...c.members.keys()], mn);
    if (!groupId || !memberId) return;
    const member = c.members.get(memberId)!;
    const ref = byExternal && member.externalId ? { memberExternalId: member.externalId } : { memberId };
    const json = { ...ref, ...(externalId !== null ? { externalId } : {}), ...(title !== null ? { title } : {}) };
    const before = await records(r, c.id);
    const res = await call(m, r, ci, { method: 'POST', path: `/api/v1/groups/${groupId}/memberships`, json });
    const inGroup = [...c.memberships.values()].filter((x) => x.groupId === groupId);
    if (inGroup.some((x) => x.memberId === memberId || (externalId !== null && x.externalId === externalId))) {
      expect(res.status, res.text).toBe(409);
      expect(await records(r, c.id)).toBe(before);
      return;
    }
    expect(res.status, res.text).toBe(201);
    c.memberships.set(res.body.id, { groupId, memberId, externalId, title, orderNumber: nextOrder(c, groupId) });
  });
}

function bulkMemberships(ci: number, gn: number, picks: number[]): Cmd {
  return command(`bulkMemberships(${ci}, g${gn}, [${picks}])`, async (m, r) => {
    const c = m.c[ci];
    const groupId = pick([...c.groups.keys()], gn);
    const ids = [...c.members.keys()];
    if (!groupId || !ids.length) return;
    const chosen = picks.map((p) => ids[p % ids.length]);
    const before = await records(r, c.id);
    const res = await call(m, r, ci, { method: 'POST', path: `/api/v1/groups/${groupId}/memberships/_bulk`, json: { groupMemberships: chosen.map((memberId) => ({ memberId })) } });
    const present = new Set([...c.memberships.values()].filter((x) => x.groupId === groupId).map((x) => x.memberId));
    if (new Set(chosen).size !== chosen.length || chosen.some((id) => present.has(id))) {
      expect([400, 409], res.text).toContain(res.status);
      expect(await records(r, c.id)).toBe(before);
      return;
    }
    expect(res.status, res.text).toBe(201);
    expect(res.body).toHaveLength(chosen.length);
    let order = nextOrder(c, groupId);
    res.body.forEach((x: { id: string }, i: number) => c.memberships.set(x.id, { groupId, memberId: chosen[i], externalId: null, title: null, orderNumber: order++ }));
  });
}

function reorder(ci: number, gn: number, seed: number): Cmd {
  return command(`reorder(${ci}, g${gn}, ${seed})`, async (m, r) => {
    const c = m.c[ci];
    const groupId = pick([...c.groups.keys()], gn);
    if (!groupId) return;
    const ids = [...c.memberships].filter(([, x]) => x.groupId === groupId).map(([id]) => id);
    if (!ids.length) return;
    const order = ids.map((id, i) => ({ id, k: (i * 7919 + seed) % 1009 })).sort((a, b) => a.k - b.k).map((x) => x.id);
    const res = await call(m, r, ci, { method: 'PATCH', path: `/api/v1/groups/${groupId}/memberships/order`, json: { order: order.map((id) => ({ id })) } });
    expect(res.status, res.text).toBe(204);
    order.forEach((id, i) => (c.memberships.get(id)!.orderNumber = i + 1));
  });
}

function membershipOne(ci: number, n: number, action: 'get' | 'patch' | 'delete', title: string | null): Cmd {
  return command(`membership ${action}(${ci}, ${n})`, async (m, r) => {
    const c = m.c[ci];
    const id = pick([...c.memberships.keys()], n);
    if (!id) return;
    const x = c.memberships.get(id)!;
    const path = `/api/v1/groups/${x.groupId}/memberships/${id}`;
    if (action === 'get') {
      const res = await call(m, r, ci, { method: 'GET', path });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id, memberId: x.memberId, externalId: x.externalId, orderNumber: x.orderNumber, role: 'MEMBER' });
    } else if (action === 'patch') {
      const res = await call(m, r, ci, { method: 'PATCH', path, json: { title } });
      expect(res.status, res.text).toBe(204);
      x.title = title;
    } else {
      const res = await call(m, r, ci, { method: 'DELETE', path });
      expect(res.status, res.text).toBe(204);
      c.memberships.delete(id);
    }
  });
}

function fieldCommand(ci: number, n: number, action: 'create' | 'patch' | 'delete' | 'get', name: string, placeholder: string | null): Cmd {
  return command(`field ${action}(${ci}, ${n})`, async (m, r) => {
    const c = m.c[ci];
    if (action === 'create') {
      if (c.fields.size >= CAP) return;
      const res = await call(m, r, ci, { method: 'POST', path: '/api/v1/additional_fields', json: { name, type: 'TEXT', ...(placeholder !== null ? { placeholder } : {}) } });
      expect(res.status, res.text).toBe(201);
      c.fields.set(res.body.id, { name, placeholder, type: 'TEXT' });
      return;
    }
    const id = pick([...c.fields.keys()], n) ?? randomUUID();
    const f = c.fields.get(id);
    const path = `/api/v1/additional_fields/${id}`;
    const res = await call(m, r, ci, action === 'get' ? { method: 'GET', path } : action === 'patch' ? { method: 'PATCH', path, json: { name } } : { method: 'DELETE', path });
    if (!f) return void expect(res.status).toBe(404);
    if (action === 'get') {
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id, ...f });
    } else if (action === 'patch') {
      expect(res.status, res.text).toBe(204);
      f.name = name;
    } else {
      expect(res.status, res.text).toBe(204);
      c.fields.delete(id);
    }
  });
}

function webhookCommand(ci: number, n: number, action: 'create' | 'patch' | 'delete' | 'get' | 'deliveries', description: string | null): Cmd {
  return command(`webhook ${action}(${ci}, ${n})`, async (m, r) => {
    const c = m.c[ci];
    if (action === 'create') {
      if (c.webhooks.size >= 5) return;
      const w = { url: 'http://127.0.0.1:9/hook', events: ['group.created'], description };
      const res = await call(m, r, ci, { method: 'POST', path: '/api/v1/webhook_endpoints', json: w });
      expect(res.status, res.text).toBe(201);
      expect(res.body.secret).toMatch(/^whsec_/);
      c.webhooks.set(res.body.id, w);
      return;
    }
    const id = pick([...c.webhooks.keys()], n) ?? randomUUID();
    const w = c.webhooks.get(id);
    const path = `/api/v1/webhook_endpoints/${id}`;
    const req: Req =
      action === 'get' ? { method: 'GET', path } : action === 'deliveries' ? { method: 'GET', path: `${path}/deliveries` } : action === 'patch' ? { method: 'PATCH', path, json: { description } } : { method: 'DELETE', path };
    const res = await call(m, r, ci, req);
    if (!w) return void expect(res.status).toBe(404);
    if (action === 'get') {
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id, url: w.url, events: w.events, description: w.description });
      expect(res.body.secret).toBeUndefined();
    } else if (action === 'deliveries') {
      expect(res.status, res.text).toBe(200);
    } else if (action === 'patch') {
      expect(res.status, res.text).toBe(204);
      w.description = description;
    } else {
      expect(res.status, res.text).toBe(204);
      c.webhooks.delete(id);
    }
  });
}

function importCommand(ci: number, kind: 'groups' | 'members', csv: boolean, n: number): Cmd {
  return command(`import ${kind}(${ci}, csv=${csv})`, async (m, r) => {
    const c = m.c[ci];
    const before = await records(r, c.id, false);
    const row = kind === 'groups' ? { externalId: `imp${n}`, name: 'Imported' } : { externalId: `imp${n}`, firstName: 'Imp', lastName: 'Orted' };
    const req: Req = csv
      ? { method: 'POST', path: `/api/v1/triggers/${kind}/import`, headers: { 'content-type': 'text/csv' }, body: `${Object.keys(row).join(',')}\r\n${Object.values(row).join(',')}\r\n` }
      : { method: 'POST', path: `/api/v1/triggers/${kind}/import`, json: { [kind]: [row] } };
    const res = await call(m, r, ci, req);
    expect(res.status, res.text).toBe(202);
    expect(res.headers.location).toBe(`/api/v1/import_jobs/${res.body.id}`);
    c.imports.push(res.body.id);
    // No worker runs in this process: the job waits, and nothing of the records changed yet.
    expect(await records(r, c.id, false)).toBe(before);
    const job = await call(m, r, ci, { method: 'GET', path: `/api/v1/import_jobs/${res.body.id}` });
    expect(job.status, job.text).toBe(200);
    expect(job.body).toMatchObject({ id: res.body.id, kind: kind.toUpperCase(), status: 'QUEUED' });
  });
}

/** Reads every list and compares it with the model: exactly the model's records, counts agreeing. */
function checkAll(ci: number, modifiedSince: 'none' | 'past' | 'future', sort: string | undefined): Cmd {
  return command(`checkAll(${ci}, ${modifiedSince}, ${sort})`, async (m, r) => {
    const c = m.c[ci];
    const q = (extra = '') => `?limit=100${sort ? `&sort=${sort}` : ''}${modifiedSince === 'past' ? '&modifiedSince=2000-01-01T00:00:00.000Z' : modifiedSince === 'future' ? '&modifiedSince=2999-01-01T00:00:00.000Z' : ''}${extra}`;
    const expectIds = (res: RawAnswer, ids: string[]) => {
      expect(res.status, res.text).toBe(200);
      const want = modifiedSince === 'future' ? [] : ids;
      expect(res.body.results.map((x: { id: string }) => x.id).sort()).toEqual([...want].sort());
      expect(res.body.size).toBe(want.length);
    };
    const groups = await call(m, r, ci, { method: 'GET', path: `/api/v1/groups${q()}` });
    expectIds(groups, [...c.groups.keys()]);
    for (const g of groups.body.results) expect(g).toMatchObject(groupView(m, c, g.id));
    const members = await call(m, r, ci, { method: 'GET', path: `/api/v1/members${q().replace(/&sort=name:desc/, '')}` });
    expectIds(members, [...c.members.keys()]);
    for (const x of members.body.results) expect(x).toMatchObject({ ...c.members.get(x.id)! });
    const fields = await call(m, r, ci, { method: 'GET', path: `/api/v1/additional_fields${q().replace(/&sort=name:desc/, '')}` });
    expectIds(fields, [...c.fields.keys()]);
    for (const f of fields.body.results) expect(f).toMatchObject(c.fields.get(f.id)!);
    const hooks = await call(m, r, ci, { method: 'GET', path: '/api/v1/webhook_endpoints?limit=100' });
    expect(hooks.status).toBe(200);
    expect(hooks.body.results.map((x: { id: string }) => x.id).sort()).toEqual([...c.webhooks.keys()].sort());
    for (const gid of c.groups.keys()) {
      const ms = await call(m, r, ci, { method: 'GET', path: `/api/v1/groups/${gid}/memberships?limit=100&sort=orderNumber${modifiedSince === 'future' ? '&modifiedSince=2999-01-01T00:00:00.000Z' : ''}` });
      expectIds(ms, [...c.memberships].filter(([, x]) => x.groupId === gid).map(([id]) => id));
      for (const x of ms.body.results) {
        const want = c.memberships.get(x.id)!;
        expect(x).toMatchObject({ memberId: want.memberId, externalId: want.externalId, orderNumber: want.orderNumber });
      }
    }
    const events = await call(m, r, ci, { method: 'GET', path: '/api/v1/events?limit=100' });
    expect(events.status, events.text).toBe(200);
    const jobs = await call(m, r, ci, { method: 'GET', path: '/api/v1/import_jobs?limit=100' });
    expect(jobs.status, jobs.text).toBe(200);
    expect(jobs.body.results.map((x: { id: string }) => x.id).sort()).toEqual([...c.imports].sort().slice(0, 100));
  });
}

/* ----------------------------------------------------------- GraphQL model */

function graphqlGroups(ci: number): Cmd {
  return command(`graphql groups(${ci})`, async (m, r) => {
    const c = m.c[ci];
    const res = await call(m, r, ci, { method: 'POST', path: '/graphql', json: { query: '{ groups(limit: 100) { size results { id name externalId membershipCount } } }' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.groups.size).toBe(c.groups.size);
    for (const g of res.body.data.groups.results) {
      const v = groupView(m, c, g.id);
      expect(g).toEqual({ id: g.id, name: v.name, externalId: v.externalId, membershipCount: v.membershipCount });
    }
  });
}

function graphqlCreateGroup(ci: number, name: string): Cmd {
  return command(
    `graphql createGroup(${ci})`,
    async (m, r) => {
      const c = m.c[ci];
      const res = await call(m, r, ci, { method: 'POST', path: '/graphql', json: { query: 'mutation($input: CreateGroupInput!) { createGroup(input: $input) { id name externalId } }', variables: { input: { name } } } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.errors).toBeUndefined();
      c.groups.set(res.body.data.createGroup.id, { externalId: null, name, isVisibleInApp: true });
    },
    (m) => m.c[ci].groups.size < CAP,
  );
}

/* ---------------------------------------------- GraphQL from the schema, hostile */

const schema = buildSchema();

/** A selection of `type`'s fields to `depth` levels: scalars, and objects below them. */
function selection(type: GraphQLObjectType, depth: number, choose: number[]): string {
  const fields = Object.values(type.getFields()).filter((f) => !f.args.some((a) => isNonNullType(a.type)));
  const picked = fields.filter((_, i) => choose[i % choose.length] % 3 !== 0);
  const parts: string[] = [];
  for (const f of picked.length ? picked : fields.slice(0, 1)) {
    const named = getNamedType(f.type);
    if (isObjectType(named)) {
      if (depth > 0) parts.push(`${f.name} { ${selection(named, depth - 1, choose.slice(1))} }`);
    } else parts.push(f.name);
  }
  return parts.length ? parts.join(' ') : '__typename';
}

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(null, '', '\u0000', '\ud800', 'x'.repeat(70_000), -1, 2 ** 31, 1e308, 0.5, true, [], {}, { id: 'x' }, { externalId: 'e1' }, '2026-13-45T99:00:00Z', randomUUIDConst()),
  fc.constant(JSON.parse('['.repeat(200) + ']'.repeat(200))),
);

function randomUUIDConst() {
  return '00000000-0000-7000-8000-000000000000';
}

/** A value of an input type: mostly well-typed, sometimes hostile at any position. */
function valueFor(type: GraphQLInputType, seed: number[], depth = 0): unknown {
  const s = seed[depth % seed.length] ?? 0;
  if (s % 11 === 0) return fc.sample(hostileValue, { numRuns: 1, seed: s })[0];
  if (isNonNullType(type)) return valueFor(type.ofType, seed, depth + 1);
  if (isListType(type)) return depth > 6 ? [] : [valueFor(type.ofType, seed, depth + 1)];
  if (isInputObjectType(type)) {
    if (depth > 6) return {};
    const out: Record<string, unknown> = {};
    for (const f of Object.values(type.getFields())) if (isNonNullType(f.type) || s % 2) out[f.name] = valueFor(f.type, seed, depth + 1);
    return out;
  }
  if (isEnumType(type)) return type.getValues()[s % type.getValues().length].value;
  if (isScalarType(type)) {
    switch (type.name) {
      case 'Int':
        return s % 50;
      case 'Boolean':
        return s % 2 === 0;
      case 'DateTimeISO':
        return '2026-01-01T00:00:00.000Z';
      case 'ID':
        return s % 3 ? randomUUIDConst() : 'not-an-id';
      default:
        return ['e1', 'Board', '#aabbcc', 'a@example.org', 'TEXT', 'x'][s % 6];
    }
  }
  return null;
}

/** A document for one root field of the schema, its arguments as variables (generated, or hostile). */
function schemaDocument(root: 'query' | 'mutation', fieldIndex: number, choose: number[]): { query: string; variables: Record<string, unknown>; field: GraphQLField<unknown, unknown> } {
  const type = root === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
  const fields = Object.values(type.getFields()).filter((f) => !['createCommunity', 'createApiKey', 'revokeApiKey'].includes(f.name));
  const field = fields[fieldIndex % fields.length];
  const defs = field.args.map((a) => `$${a.name}: ${a.type.toString()}`);
  const args = field.args.map((a) => `${a.name}: $${a.name}`);
  const named = getNamedType(field.type);
  const sel = isObjectType(named) ? ` { ${selection(named, 2, choose)} }` : '';
  const query = `${root}${defs.length ? `(${defs.join(', ')})` : ''} { ${field.name}${args.length ? `(${args.join(', ')})` : ''}${sel} }`;
  const variables = Object.fromEntries(field.args.map((a, i) => [a.name, valueFor(a.type, choose.slice(i))]));
  return { query, variables, field };
}

function graphqlHostile(ci: number, root: 'query' | 'mutation', fieldIndex: number, choose: number[], shape: number): Cmd {
  return command(`graphql ${root} #${fieldIndex} [${choose.slice(0, 4)}] shape ${shape}`, async (m, r) => {
    const c = m.c[ci];
    const { query, variables } = schemaDocument(root, fieldIndex, choose);
    const before = await records(r, c.id);
    const shapes: Req[] = [
      { method: 'POST', path: '/graphql', json: { query, variables } },
      { method: 'POST', path: '/graphql', json: { query, variables, operationName: 'Nope' } },
      { method: 'POST', path: '/graphql', json: [{ query, variables }] },
      { method: 'GET', path: `/graphql?query=${enc(query)}&variables=${enc(JSON.stringify(variables))}`, headers: { 'apollo-require-preflight': 'x' } },
      { method: 'POST', path: '/graphql', json: { query: `${query} fragment F on Query { ...F }`, variables } },
      { method: 'POST', path: '/graphql', json: { query: query.replace('{', '{ __typename @unknown '), variables } },
      { method: 'POST', path: '/graphql', json: { query, variables: { ...variables, extra: '\u0000' } } },
      { method: 'POST', path: '/graphql', json: { query: query.slice(0, Math.max(1, query.length - 3)), variables } },
      { method: 'POST', path: '/graphql', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ query }) },
      { method: 'POST', path: '/graphql', json: { query: `subscription { events { id } }` } },
      { method: 'POST', path: '/graphql', json: { query, variables, extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } } },
      { method: 'POST', path: '/graphql', json: { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } }, variables } },
      { method: 'POST', path: '/graphql', json: { query, variables, operationName: '' } },
      { method: 'POST', path: '/graphql', headers: { 'content-type': 'application/json' }, body: `{"query":${JSON.stringify(query)},"variables":{"x":${'['.repeat(5000)}${']'.repeat(5000)}}}` },
    ];
    const res = await call(m, r, ci, shapes[shape % shapes.length]);
    const failed = res.status >= 400 || (res.body?.errors?.length ?? 0) > 0;
    if (root === 'mutation' && !failed) await resync(m, r, ci);
    else if (root === 'mutation') {
      // A mutation that failed as a whole changed nothing; one with partial data may have written (resync).
      if (res.body?.data && Object.values(res.body.data).some((v) => v != null)) await resync(m, r, ci);
      else expect(await records(r, c.id)).toBe(before);
    }
  });
}

/** A hostile document of a known shape or a random string, with random variables: no 5xx; if it failed, nothing changed. */
function graphqlDocument(ci: number, query: string, variables: unknown): Cmd {
  return command(`graphql document ${JSON.stringify(query).slice(0, 80)} variables=${String(JSON.stringify(variables)).slice(0, 60)}`, async (m, r) => {
    const c = m.c[ci];
    const before = await records(r, c.id);
    const res = await call(m, r, ci, { method: 'POST', path: '/graphql', json: { query, variables } });
    if (res.status >= 400 || res.body?.errors) expect(await records(r, c.id)).toBe(before);
    else if ((await records(r, c.id)) !== before) await resync(m, r, ci);
  });
}

/**
 * Eight writes at once on one community (as a client with a connection pool sends them):
 * memberships created, bulk-created, reordered and deleted while their groups and members are
 * patched and deleted, and creates racing for one externalId. Oracles: no 5xx; at most one
 * of the racing creates wins; afterwards the model is read back and its invariants hold
 * (each group's membershipCount is its memberships, order numbers are distinct).
 */
function burst(ci: number, kinds: number[], picks: number[]): Cmd {
  return command(`burst(${ci}, [${kinds}], [${picks.slice(0, 8)}])`, async (m, r) => {
    const c = m.c[ci];
    const groups = [...c.groups.keys()];
    const members = [...c.members.keys()];
    const memberships = [...c.memberships.keys()];
    const racingExternal = `race${picks[0] % 3}`;
    const requests: Req[] = kinds.map((k, i) => {
      const p = picks[i % picks.length];
      const g = pick(groups, p) ?? randomUUID();
      const mm = pick(members, p + 1) ?? randomUUID();
      const ms = pick(memberships, p);
      switch (k % 8) {
        case 0:
          return { method: 'POST', path: `/api/v1/groups/${g}/memberships`, json: { memberId: mm } };
        case 1:
          return { method: 'POST', path: `/api/v1/groups/${g}/memberships/_bulk`, json: { groupMemberships: members.slice(p % 3, (p % 3) + 3).map((memberId) => ({ memberId })) } };
        case 2: {
          const ids = [...c.memberships].filter(([, x]) => x.groupId === g).map(([id]) => ({ id }));
          return { method: 'PATCH', path: `/api/v1/groups/${g}/memberships/order`, json: { order: ids.reverse() } };
        }
        case 3:
          return ms ? { method: 'DELETE', path: `/api/v1/groups/${c.memberships.get(ms)!.groupId}/memberships/${ms}` } : { method: 'GET', path: `/api/v1/groups/${g}` };
        case 4:
          return { method: 'DELETE', path: `/api/v1/members/${mm}` };
        case 5:
          return { method: 'DELETE', path: `/api/v1/groups/${g}` };
        case 6:
          return { method: 'PATCH', path: `/api/v1/groups/${g}`, json: { name: `n${p}` } };
        default:
          return { method: 'POST', path: '/api/v1/groups', json: { name: 'race', externalId: racingExternal } };
      }
    });
    const answers = await Promise.all(requests.map((req) => call(m, r, ci, req)));
    const racing = answers.filter((a, i) => requests[i].path === '/api/v1/groups' && requests[i].method === 'POST');
    // Taken before the burst: no racing create wins, unless a group delete of the burst freed the externalId first.
    const freed = requests.some((q) => q.method === 'DELETE' && /^\/api\/v1\/groups\/[^/]+$/.test(q.path));
    const taken = !freed && [...c.groups.values()].some((g) => g.externalId === racingExternal);
    expect(racing.filter((a) => a.status === 201).length, JSON.stringify(racing.map((a) => a.status))).toBeLessThanOrEqual(taken ? 0 : 1);
    await resync(m, r, ci);
    for (const gid of c.groups.keys()) {
      const orders = [...c.memberships.values()].filter((x) => x.groupId === gid).map((x) => x.orderNumber);
      expect(new Set(orders).size, `order numbers of group ${gid}: ${orders}`).toBe(orders.length);
      const res = await call(m, r, ci, { method: 'GET', path: `/api/v1/groups/${gid}` });
      expect(res.body.membershipCount).toBe(orders.length);
    }
  });
}

/* --------------------------------------------------------- hostile REST requests */

const METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL'];

const PATH_MUTATIONS = ['%zz', '%', '%E0%A4%A', '%C0%AE%C0%AE', '%ED%A0%80', '%2e%2e', '..', '.', '%2F', '..%2F..%2Fgroups', '%00', 'a'.repeat(3000), '%F0%9F%98%80', '%25', '%u0041', '9'.repeat(40), '-1', '%09', '%20', '__proto__'];

const QUERY_MUTATIONS = [
  'limit=1&limit=2', 'limit[]=1', 'limit[a]=1', 'sort=name:up', 'sort=', 'skip=-1', 'limit=1e3', `limit=${'9'.repeat(400)}`, 'x=%zz', '%zz=1', 'key=externalId&key=id',
  'key=nope', 'groupsKey=externalId', 'modifiedSince=yesterday', 'modifiedSince=2026-02-30T00:00:00Z', 'after=%00', 'types=a,,b', `q=${'q'.repeat(5000)}`, 'api_key=wrong', 'unknown=1', '&&&', '=', 'limit=%',
];

const HEADER_MUTATIONS: Record<string, string | string[]>[] = [
  { 'x-api-key': ['a', 'b'] },
  { 'x-api-key': '' },
  { 'idempotency-key': 'x'.repeat(300) },
  { 'idempotency-key': ['a', 'b'] },
  { 'idempotency-key': '' },
  { 'if-match': 'garbage' },
  { 'if-match': ['"1"', '"2"'] },
  { 'if-none-match': '*' },
  { 'if-match': '*' },
  { 'x-junk': 'y'.repeat(8000) },
  { 'x-request-id': '\u00ff'.repeat(10) },
  { 'content-length': '0' },
  { accept: 'application/xml' },
  { 'content-encoding': 'gzip' },
  { 'content-type': 'application/json; charset=utf-16' },
  { 'X-API-KEY': 'cm_' + 'A'.repeat(43) },
];

const deepJson = (n: number) => '{"name":"x","about":' + '['.repeat(n) + ']'.repeat(n) + '}';

const BODY_MUTATIONS: (string | Buffer | { type: string; body: string })[] = [
  '', '{', '{"name":', 'null', '[]', '1', '"x"', 'true', '{"name":null}', '{"name":1}', '{"name":"\\u0000"}', '{"name":"\\ud800"}', '{"name":"a","name":"b"}', '{"__proto__":{"x":1}}',
  '{"name":"x","about":"' + 'a'.repeat(600_000) + '"}', JSON.stringify({ groupMemberships: Array.from({ length: 1001 }, () => ({ memberId: 'x' })) }),
  JSON.stringify({ groups: Array.from({ length: 5000 }, (_, i) => ({ externalId: `x${i}`, name: 'y' })) }), deepJson(10_000), deepJson(63), deepJson(65),
  JSON.stringify({ order: [{ id: null }, { externalId: 5 }] }), JSON.stringify({ members: [{ externalId: 'a', additionalFields: [{ id: 'x', value: [] }] }] }),
  JSON.stringify({ url: 'http://169.254.169.254/', events: ['*'] }), JSON.stringify({ title: 'x', message: 'y', memberIds: ['\u0000'] }), '{"name":"x"}garbage',
  Buffer.from([0xff, 0xfe, 0x00, 0x7b]), { type: 'text/csv', body: 'externalId,name\r\n"unterminated' }, { type: 'text/csv', body: 'nope\r\n1' }, { type: 'application/x-www-form-urlencoded', body: 'name=x' },
  { type: 'text/plain', body: '{"name":"x"}' }, { type: 'application/merge-patch+json', body: '{"name":"x"}' },
];

interface Hostile {
  /** Random layers besides the fixed mutations: a path value, query parameters, a JSON body. */
  randomParam: string | null;
  randomQuery: Record<string, string> | null;
  randomBody: unknown;
  ci: number;
  route: number;
  method: number;
  pathMutation: number | null;
  queryMutation: number | null;
  headerMutation: number | null;
  bodyMutation: number | null;
}

const hostileArb: fc.Arbitrary<Hostile> = fc.record({
  randomParam: fc.option(weird, { nil: null, freq: 4 }),
  randomQuery: fc.option(fc.dictionary(fc.constantFrom('limit', 'skip', 'sort', 'key', 'groupsKey', 'modifiedSince', 'after', 'types', 'q', 'x', 'api_key'), weird, { maxKeys: 3 }), { nil: null, freq: 4 }),
  randomBody: fc.option(jsonish, { nil: undefined, freq: 3 }),
  ci: COMMUNITY,
  route: fc.nat({ max: routes.length - 1 }),
  method: fc.oneof(fc.constant(-1), fc.nat({ max: METHODS.length - 1 })),
  pathMutation: fc.option(fc.nat({ max: PATH_MUTATIONS.length - 1 }), { nil: null }),
  queryMutation: fc.option(fc.nat({ max: QUERY_MUTATIONS.length - 1 }), { nil: null }),
  headerMutation: fc.option(fc.nat({ max: HEADER_MUTATIONS.length - 1 }), { nil: null }),
  bodyMutation: fc.option(fc.nat({ max: BODY_MUTATIONS.length - 1 }), { nil: null }),
});

function hostile(h: Hostile): Cmd {
  const route = routes[h.route];
  const method = h.method < 0 ? route.method : METHODS[h.method];
  const random = `${h.randomParam !== null ? ` param=${JSON.stringify(h.randomParam).slice(0, 40)}` : ''}${h.randomQuery ? ` q=${JSON.stringify(h.randomQuery).slice(0, 60)}` : ''}${h.randomBody !== undefined ? ` json=${String(JSON.stringify(h.randomBody)).slice(0, 80)}` : ''}`;
  return command(`hostile ${method} ${route.path} path=${h.pathMutation} query=${h.queryMutation} header=${h.headerMutation} body=${h.bodyMutation}${random}`, async (m, r) => {
    const c = m.c[h.ci];
    // A real record where the route takes one (so the request reaches the operation), unless the path is mutated there.
    const real: Record<string, string | undefined> = {
      groupIdentifier: pick([...c.groups.keys()], h.route),
      identifier: route.path.startsWith('/groups/:groupIdentifier')
        ? pick([...c.memberships.keys()], h.route)
        : route.path.startsWith('/groups')
          ? pick([...c.groups.keys()], h.route)
          : route.path.startsWith('/members')
            ? pick([...c.members.keys()], h.route)
            : route.path.startsWith('/additional_fields')
              ? pick([...c.fields.keys()], h.route)
              : route.path.startsWith('/webhook_endpoints')
                ? pick([...c.webhooks.keys()], h.route)
                : pick(c.imports, h.route),
    };
    let mutated = false;
    const path =
      '/api/v1' +
      route.path.replace(/:(\w+)/g, (_, name: string) => {
        if (h.pathMutation !== null && !mutated) {
          mutated = true;
          return PATH_MUTATIONS[h.pathMutation];
        }
        if (h.randomParam !== null && !mutated) {
          mutated = true;
          return enc(h.randomParam).replace(/\./g, '%2E');
        }
        return real[name] ?? randomUUID();
      });
    const query = h.queryMutation !== null ? `?${QUERY_MUTATIONS[h.queryMutation]}` : h.randomQuery ? `?${new URLSearchParams(h.randomQuery)}` : '';
    const headers: Record<string, string | string[]> = { ...(h.headerMutation !== null ? HEADER_MUTATIONS[h.headerMutation] : {}) };
    let body: string | Buffer | undefined;
    if (h.bodyMutation === null && h.randomBody !== undefined) {
      body = JSON.stringify(h.randomBody) ?? 'null';
      headers['content-type'] ??= 'application/json';
    } else if (h.bodyMutation !== null) {
      const b = BODY_MUTATIONS[h.bodyMutation];
      if (typeof b === 'string' || Buffer.isBuffer(b)) {
        body = b;
        headers['content-type'] ??= 'application/json';
      } else {
        body = b.body;
        headers['content-type'] ??= b.type;
      }
    }
    if (headers['x-api-key'] === undefined && headers['X-API-KEY'] === undefined) headers['x-api-key'] = c.key;
    else if (headers['X-API-KEY'] !== undefined) {
      headers['x-api-key'] = headers['X-API-KEY'];
      delete headers['X-API-KEY'];
    }
    if (headers['content-length'] !== undefined && body !== undefined) delete headers['content-length'];
    const before = await records(r, c.id);
    const res = await call(m, r, h.ci, { method, path: path + query, headers, body });
    if (res.status >= 300) {
      expect(await records(r, c.id), `a refused request changes nothing: ${method} ${path}${query} -> ${res.status}`).toBe(before);
    } else if (method !== 'GET' && method !== 'HEAD') {
      // The mutated request was legal after all (say a duplicate key, last one wins): read the truth back.
      if ((await records(r, c.id)) !== before) await resync(m, r, h.ci);
      // resync read the import jobs already (the digest holds them): the job is counted once.
      if (route.path.startsWith('/triggers') && res.status === 202 && !c.imports.includes(res.body.id)) c.imports.push(res.body.id);
    }
  });
}

/* --------------------------------------------------------------- the suite */

export const commandArbs: fc.Arbitrary<Cmd>[] = [
  fc.tuple(COMMUNITY, NAMES, EXTERNAL, fc.option(fc.constantFrom('About us', 'x'.repeat(2048)), { nil: undefined }), fc.boolean()).map(([ci, n, e, a, i]) => createGroup(ci, n, e, a, i)),
  fc.tuple(COMMUNITY, fc.nat(), fc.boolean(), fc.boolean(), fc.boolean()).map(([ci, n, e, c, f]) => getGroup(ci, n, e, c, f)),
  fc
    .tuple(COMMUNITY, fc.nat(), fc.record({ name: NAMES, externalId: EXTERNAL, color: fc.constantFrom('#A1b2C3', '#000000'), isVisibleInApp: fc.boolean() }, { requiredKeys: [] }), fc.constantFrom('none', 'fresh', 'stale') as fc.Arbitrary<'none' | 'fresh' | 'stale'>)
    .map(([ci, n, p, i]) => patchGroup(ci, n, p as Partial<Group>, i)),
  fc.tuple(COMMUNITY, fc.nat()).map(([ci, n]) => deleteGroup(ci, n)),
  fc.tuple(COMMUNITY, NAMES, NAMES, EXTERNAL, EMAILS).map(([ci, f, l, e, a]) => createMember(ci, f.slice(0, 256), l.slice(0, 256), e, a)),
  fc.tuple(COMMUNITY, fc.nat()).map(([ci, n]) => deleteMember(ci, n)),
  fc.tuple(COMMUNITY, fc.nat(), fc.nat(), fc.boolean(), EXTERNAL, TITLES).map(([ci, g, mm, b, e, t]) => createMembership(ci, g, mm, b, e, t)),
  fc.tuple(COMMUNITY, fc.nat(), fc.array(fc.nat(), { minLength: 1, maxLength: 5 })).map(([ci, g, p]) => bulkMemberships(ci, g, p)),
  fc.tuple(COMMUNITY, fc.nat(), fc.nat()).map(([ci, g, s]) => reorder(ci, g, s)),
  fc.tuple(COMMUNITY, fc.nat(), fc.constantFrom('get', 'patch', 'delete') as fc.Arbitrary<'get' | 'patch' | 'delete'>, TITLES).map(([ci, n, a, t]) => membershipOne(ci, n, a, t)),
  fc
    .tuple(COMMUNITY, fc.nat(), fc.constantFrom('create', 'patch', 'delete', 'get') as fc.Arbitrary<'create' | 'patch' | 'delete' | 'get'>, NAMES, fc.option(fc.constantFrom('Your size', ''), { nil: null }))
    .map(([ci, n, a, name, p]) => fieldCommand(ci, n, a, name, p)),
  fc
    .tuple(COMMUNITY, fc.nat(), fc.constantFrom('create', 'patch', 'delete', 'get', 'deliveries') as fc.Arbitrary<'create' | 'patch' | 'delete' | 'get' | 'deliveries'>, fc.option(fc.constantFrom('CRM', ''), { nil: null }))
    .map(([ci, n, a, d]) => webhookCommand(ci, n, a, d)),
  fc.tuple(COMMUNITY, fc.constantFrom('groups', 'members') as fc.Arbitrary<'groups' | 'members'>, fc.boolean(), fc.nat({ max: 5 })).map(([ci, k, csv, n]) => importCommand(ci, k, csv, n)),
  fc.tuple(COMMUNITY, fc.constantFrom('none', 'past', 'future') as fc.Arbitrary<'none' | 'past' | 'future'>, fc.constantFrom(undefined, 'name:desc', 'createdAt:desc,modifiedAt')).map(([ci, ms, s]) => checkAll(ci, ms, s)),
  COMMUNITY.map((ci) => graphqlGroups(ci)),
  fc.tuple(COMMUNITY, NAMES).map(([ci, n]) => graphqlCreateGroup(ci, n)),
  fc.tuple(COMMUNITY, fc.constantFrom('query', 'mutation') as fc.Arbitrary<'query' | 'mutation'>, fc.nat(), fc.array(fc.nat({ max: 1000 }), { minLength: 4, maxLength: 8 }), fc.nat()).map(([ci, root, f, ch, s]) => graphqlHostile(ci, root, f, ch, s)),
  fc.tuple(COMMUNITY, docArb, fc.option(fc.jsonValue(), { nil: undefined })).map(([ci, doc, variables]) => graphqlDocument(ci, doc, variables)),
  fc.tuple(COMMUNITY, fc.array(fc.nat({ max: 7 }), { minLength: 8, maxLength: 8 }), fc.array(fc.nat(), { minLength: 8, maxLength: 8 })).map(([ci, k, p]) => burst(ci, k, p)),
  hostileArb.map(hostile),
  hostileArb.map(hostile),
  hostileArb.map(hostile),
];

export interface ModelFuzzOptions {
  /** Commands per run (fc.commands maxCommands). */
  maxCommands: number;
  /** Runs at least this many commands in all (runs are added until reached). */
  totalCommands: number;
  seed: number;
  /** `FUZZ_PATH`: replays one shrunk counterexample of `seed`. */
  path?: string;
  /** `FUZZ_REPLAY`: fc.commands' replayPath of that counterexample (printed with it). */
  replay?: string;
}

export interface ModelFuzz {
  app: TestApp;
  server: Server;
  port: number;
  close(): Promise<void>;
}

export async function startModelFuzz(): Promise<ModelFuzz> {
  const app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_PER_HOUR: '10000000' });
  const server = await listen(app.runtime.app, 0);
  const port = (server.address() as net.AddressInfo).port;
  return {
    app,
    server,
    port,
    close: async () => {
      await new Promise((res) => server.close(res));
      await app.close();
    },
  };
}

/** Runs the fuzzer; throws with the seed, the path and the shrunk command list on failure. Returns the statistics. */
export async function runModelFuzz(f: ModelFuzz, opts: ModelFuzzOptions): Promise<Stats> {
  const stats: Stats = { commands: 0, requests: 0, statuses: {}, resyncs: 0 };
  const property = fc.asyncProperty(fc.commands(commandArbs, { maxCommands: opts.maxCommands, size: 'max', ...(opts.replay ? { replayPath: opts.replay } : {}) }), async (cmds) => {
    const tenant = async (): Promise<Community> => {
      const t = await f.app.tenant({ rateLimitPerHour: 10_000_000 });
      return { id: t.communityId, key: t.key, groups: new Map(), members: new Map(), memberships: new Map(), fields: new Map(), webhooks: new Map(), imports: [] };
    };
    const c: [Community, Community] = [await tenant(), await tenant()];
    await fc.asyncModelRun(() => ({ model: { c }, real: { port: f.port, app: f.app, stats } }), cmds);
  });
  // Rounds with seeds seed, seed + 1, ... until enough commands ran; a failure names its round's
  // seed, so FUZZ_SEED=<that seed> FUZZ_PATH=<path> replays the shrunk command list at once.
  for (let round = 0; round === 0 || (!opts.path && stats.commands < opts.totalCommands); round++) {
    const seed = opts.seed + round;
    // With a path fast-check runs only that case; its first index must be below numRuns.
    const numRuns = opts.path ? 1_000_000 : Math.max(1, Math.ceil((opts.totalCommands - stats.commands) / (opts.maxCommands * 0.5)));
    const out = await fc.check(property, { numRuns, seed, ...(opts.path ? { path: opts.path } : {}), endOnFailure: false, verbose: 0 });
    if (out.failed) {
      const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
      // fc.commands shrinks by what ran, so a replay needs its replayPath as well as seed and path.
      const replay = /replayPath="([^"]*)"/.exec(String(out.counterexample?.[0]))?.[1];
      throw new Error(
        `model fuzz failure (replay: FUZZ_SEED=${out.seed} FUZZ_PATH=${out.counterexamplePath}${replay ? ` FUZZ_REPLAY='${replay}'` : ''}):\n` +
          `shrunk commands: ${String(out.counterexample?.[0]).slice(0, 4000)}\n${cause.slice(0, 3000)}`,
      );
    }
  }
  return stats;
}
