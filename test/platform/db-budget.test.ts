import { Client } from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { createGroup, createMember, expectProblem } from '../helpers/factories';
import { testDatabaseUrl } from '../helpers/database';

/**
 * The database budget of a request: a caller holds at most DB_CONNECTIONS_PER_CALLER pool
 * connections, statements and lock waits are bounded, and every refusal is a 503 with
 * Retry-After, never a 500. A row lock held by a plain PostgreSQL client makes requests
 * wait deterministically (no timing assertions: only the outcomes are checked).
 */
let app: TestApp;
let a: Tenant;
let b: Tenant;
let locker: Client | undefined;

beforeAll(async () => {
  // A long lock timeout: the held request must outlast every step of the cap test however
  // slow the machine is (the lock-timeout test below runs on its own app with a short one).
  app = await startTestApp({ DB_CONNECTIONS_PER_CALLER: '1', DB_CALLER_WAIT_SECONDS: '1', DB_LOCK_TIMEOUT_SECONDS: '60', DB_STATEMENT_TIMEOUT_SECONDS: '120' });
  a = await app.tenant();
  b = await app.tenant();
});
afterAll(() => app.close());
afterEach(async () => {
  await locker?.end();
  locker = undefined;
});

/** Holds `for update` on a group row from outside the service until `release`. */
async function lockGroup(groupId: string) {
  locker = new Client({ connectionString: testDatabaseUrl() });
  await locker.connect();
  await locker.query('begin');
  await locker.query('select id from groups where id = $1 for update', [groupId]);
  const c = locker;
  return () => c.query('rollback');
}

/** Resolves once some request waits for the lock `lockGroup` holds. */
async function someoneWaits() {
  for (;;) {
    const { rows } = await locker!.query('select count(*)::int as n from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))');
    if (rows[0].n > 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('per-caller connection cap', () => {
  it('a caller over its cap waits, then gets 503 with Retry-After; another community is served meanwhile', async () => {
    const group = await createGroup(app, a.communityId);
    const member = await createMember(app, a.communityId);
    const other = await createGroup(app, b.communityId);
    const release = await lockGroup(group.id);
    // A's first write holds A's only connection while it waits for the row lock.
    const first = app.http.post(`/api/v1/groups/${group.id}/memberships`).set('X-API-Key', a.key).send({ memberId: member.id });
    const firstDone = first.then((r) => r);
    await someoneWaits();
    const second = await app.http.get(`/api/v1/groups/${group.id}`).set('X-API-Key', a.key);
    expectProblem(second, 503);
    expect(second.headers['retry-after']).toBe('1');
    const gql = await app.http.post('/graphql').set('X-API-Key', a.key).send({ query: `{ group(ref: { id: "${group.id}" }) { id } }` });
    expect(gql.status).toBe(503);
    expect(gql.headers['retry-after']).toBe('1');
    expect(gql.body.errors[0].extensions.code).toBe('UNAVAILABLE');
    // B is not queued behind A.
    const neighbour = await app.http.get(`/api/v1/groups/${other.id}`).set('X-API-Key', b.key);
    expect(neighbour.status).toBe(200);
    await release();
    expect((await firstDone).status).toBe(201);
    // The slot came back: A is served again.
    expect((await app.http.get(`/api/v1/groups/${group.id}`).set('X-API-Key', a.key)).body.membershipCount).toBe(1);
  });
});

describe('lock timeout', () => {
  let short: TestApp;
  beforeAll(async () => {
    short = await startTestApp({ DB_LOCK_TIMEOUT_SECONDS: '2', DB_STATEMENT_TIMEOUT_SECONDS: '120' });
  });
  afterAll(() => short.close());

  it('a write that waits longer than DB_LOCK_TIMEOUT_SECONDS for a row lock is a 503 with Retry-After and changes nothing', async () => {
    const t = await short.tenant();
    const group = await createGroup(short, t.communityId);
    const member = await createMember(short, t.communityId);
    const release = await lockGroup(group.id);
    const res = await short.http.post(`/api/v1/groups/${group.id}/memberships`).set('X-API-Key', t.key).send({ memberId: member.id });
    await release();
    expectProblem(res, 503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body.detail).toMatch(/locked/);
    const after = await short.http.get(`/api/v1/groups/${group.id}`).set('X-API-Key', t.key);
    expect(after.body.membershipCount).toBe(0);
  });
});

describe('statement timeout', () => {
  let short: TestApp;
  beforeAll(async () => {
    short = await startTestApp({ DB_STATEMENT_TIMEOUT_SECONDS: '1', DB_LOCK_TIMEOUT_SECONDS: '30' });
  });
  afterAll(() => short.close());

  it('a statement running longer than DB_STATEMENT_TIMEOUT_SECONDS is cancelled: 503 with Retry-After (GraphQL: UNAVAILABLE, HTTP 503)', async () => {
    const t = await short.tenant();
    const group = await createGroup(short, t.communityId);
    const member = await createMember(short, t.communityId);
    const release = await lockGroup(group.id);
    const rest = await short.http.post(`/api/v1/groups/${group.id}/memberships`).set('X-API-Key', t.key).send({ memberId: member.id });
    const gql = await short.http
      .post('/graphql')
      .set('X-API-Key', t.key)
      .send({ query: `mutation { createGroupMembership(groupRef: { id: "${group.id}" }, input: { memberId: "${member.id}" }) { id } }` });
    await release();
    expectProblem(rest, 503);
    expect(rest.headers['retry-after']).toBe('1');
    expect(rest.body.detail).toMatch(/longer than the database allows/);
    expect(gql.status).toBe(503);
    expect(gql.body.errors[0].extensions.code).toBe('UNAVAILABLE');
    expect(JSON.stringify(gql.body)).not.toMatch(/canceling|57014|sql|knex/i);
  });
});
