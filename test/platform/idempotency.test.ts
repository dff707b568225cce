import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { testDatabaseUrl } from '../helpers/database';
import { serviceTenant, startService } from '../helpers/process';
import { sqlWith } from '../helpers/jobs';
import { sleep } from '../helpers/jobs';
import { expectProblem } from '../helpers/problem';
import { countSql } from '../helpers/sql-count';
import type { EntityManager } from '@mikro-orm/postgresql';
import { inCommunity } from '../../src/db/tenancy';
import { runIdempotent } from '../../src/http/idempotency';
import { SECRET_BOX } from '../../src/security/secret-box';

let app: TestApp;
let t: Tenant;
let sql: ReturnType<typeof sqlWith>;
const auth = (tenant: Tenant, key?: string) => ({ 'X-API-Key': tenant.key, ...(key ? { 'Idempotency-Key': key } : {}) });
const count = async (table: string, communityId: string) =>
  Number(((await sql(`select count(*)::int as n from ${table} where community_id = ?`, [communityId])) as { n: number }[])[0].n);

beforeAll(async () => {
  app = await startTestApp({}, { worker: { pollInterval: 200 } });
  t = await app.tenant();
  sql = sqlWith(app);
});
afterAll(() => app.close());

describe('Idempotency-Key on POST', () => {
  it('a repeat replays the first answer (same status and body) with Idempotent-Replayed and creates nothing', async () => {
    const body = { members: [{ externalId: 'idem-1', firstName: 'A' }, { externalId: 'idem-2', firstName: 'B' }] };
    const first = await app.http.post('/api/v1/members/_bulk').set(auth(t, 'bulk-1')).send(body);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await app.http.post('/api/v1/members/_bulk').set(auth(t, 'bulk-1')).send(body);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await count('members', t.communityId)).toBe(2);
  });

  it('the same key with another body is a 422 naming the header, and changes nothing', async () => {
    await app.http.post('/api/v1/groups').set(auth(t, 'grp-a')).send({ name: 'A' }).expect(201);
    const before = await count('groups', t.communityId);
    const res = await app.http.post('/api/v1/groups').set(auth(t, 'grp-a')).send({ name: 'B' });
    expectProblem(res, 422, '#/header/Idempotency-Key');
    const otherPath = await app.http.post('/api/v1/members').set(auth(t, 'grp-a')).send({ name: 'A' });
    expectProblem(otherPath, 422, '#/header/Idempotency-Key');
    expect(await count('groups', t.communityId)).toBe(before);
  });

  it('an error answer of the operation (409) is stored and replayed; its key does not run again', async () => {
    await app.http.post('/api/v1/groups').set(auth(t)).send({ name: 'X', externalId: 'taken' }).expect(201);
    const first = await app.http.post('/api/v1/groups').set(auth(t, 'dup')).send({ name: 'Y', externalId: 'taken' });
    expectProblem(first, 409, '/externalId');
    // The externalId becomes free; the stored 409 is still the answer to this key.
    await sql('delete from groups where community_id = ? and external_id = ?', [t.communityId, 'taken']);
    const again = await app.http.post('/api/v1/groups').set(auth(t, 'dup')).send({ name: 'Y', externalId: 'taken' });
    expect(again.status).toBe(409);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await count('groups', t.communityId)).toBeGreaterThan(0);
  });

  it('a 404 of the operation is stored too and replayed', async () => {
    const missing = '00000000-0000-7000-8000-000000000000';
    const body = { memberId: missing };
    const first = await app.http.post(`/api/v1/groups/${missing}/memberships`).set(auth(t, 'k404')).send(body);
    expectProblem(first, 404);
    const again = await app.http.post(`/api/v1/groups/${missing}/memberships`).set(auth(t, 'k404')).send(body);
    expect(again.status).toBe(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('keys are per API key: another key with the same Idempotency-Key runs anew', async () => {
    const other = await app.tenant();
    const a = await app.http.post('/api/v1/groups').set(auth(t, 'shared')).send({ name: 'S' });
    const b = await app.http.post('/api/v1/groups').set(auth(other, 'shared')).send({ name: 'S' });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.id).not.toBe(a.body.id);
  });

  it('a 403 is not stored: the same key works once the key may write', async () => {
    const reader = await app.tenant({ scopes: ['groups:read'] });
    const denied = await app.http.post('/api/v1/groups').set(auth(reader, 'k403')).send({ name: 'Z' });
    expectProblem(denied, 403);
    const rows = await sql('select count(*)::int as n from idempotency_keys where key = ?', ['k403']);
    expect((rows as { n: number }[])[0].n).toBe(0);
  });

  it('a malformed Idempotency-Key is a 400 naming the header', async () => {
    for (const key of ['x'.repeat(256), 'tab\tkey', 'é']) {
      const res = await app.http.post('/api/v1/groups').set('X-API-Key', t.key).set('Idempotency-Key', key).send({ name: 'K' });
      expectProblem(res, 400, '#/header/Idempotency-Key');
    }
  });

  it('an invalid body with a key is answered 400 and the repeat replays it', async () => {
    const first = await app.http.post('/api/v1/groups').set(auth(t, 'bad-body')).send({ name: '' });
    expectProblem(first, 400, '/name');
    const again = await app.http.post('/api/v1/groups').set(auth(t, 'bad-body')).send({ name: '' });
    expect(again.status).toBe(400);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('expired keys are purged by the scheduled task and the key can be used again', async () => {
    await app.http.post('/api/v1/groups').set(auth(t, 'old')).send({ name: 'Old' }).expect(201);
    await app.http.post('/api/v1/groups').set(auth(t, 'young')).send({ name: 'Young' }).expect(201);
    await sql(`update idempotency_keys set expires_at = now() - interval '1 second' where key = ?`, ['old']);
    // The worker registered the hourly schedule; run the task now, through the queue.
    const schedules = await sql('select identifier from graphile_worker._private_known_crontabs', []);
    expect(schedules).toContainEqual({ identifier: 'purge_idempotency_keys' });
    await sql(`select graphile_worker.add_job('purge_idempotency_keys', '{}'::json)`, []);
    for (let i = 0; i < 100 && (await sql('select 1 from idempotency_keys where key = ?', ['old'])).length; i++) await sleep(100);
    expect(await sql('select 1 from idempotency_keys where key = ?', ['old'])).toEqual([]);
    expect(await sql('select 1 from idempotency_keys where key = ?', ['young'])).toHaveLength(1);
    const fresh = await app.http.post('/api/v1/groups').set(auth(t, 'old')).send({ name: 'Old' });
    expect(fresh.status).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
  });

  it('GraphQL mutations take the same header: one effect, the repeat replayed, another request 422', async () => {
    const tenant = await app.tenant();
    const send = (name: string, key = 'gql-1') =>
      app.http
        .post('/graphql')
        .set({ 'X-API-Key': tenant.key, 'Idempotency-Key': key })
        .send({ query: 'mutation($n: String!) { createGroup(input: { name: $n }) { id name } }', variables: { n: name } });
    const first = await send('Q');
    expect(first.status).toBe(200);
    expect(first.body.data.createGroup.name).toBe('Q');
    const again = await send('Q');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await count('groups', tenant.communityId)).toBe(1);
    const other = await send('R');
    expect(other.status).toBe(422);
    expect(other.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(await count('groups', tenant.communityId)).toBe(1);
    // The key is the REST key's too: a REST POST with it is another request.
    expectProblem(await app.http.post('/api/v1/groups').set(auth(tenant, 'gql-1')).send({ name: 'Q' }), 422);
  });

  it('import triggers (CSV) and notifications: one job and one notification per key, the repeat replayed', async () => {
    const tenant = await app.tenant();
    const csv = 'externalId,firstName\nimp-a,A\nimp-b,B\n';
    const trigger = () =>
      app.http.post('/api/v1/triggers/members/import').set(auth(tenant, 'import-1')).set('Content-Type', 'text/csv').send(csv);
    const first = await trigger();
    expect(first.status).toBe(202);
    const again = await trigger();
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(await count('import_jobs', tenant.communityId)).toBe(1);

    const member = (await app.http.post('/api/v1/members').set(auth(tenant)).send({ firstName: 'N' })).body.id;
    const body = { title: 'Hi', message: 'Hello', memberIds: [member] };
    const sent = await app.http.post('/api/v1/notifications').set(auth(tenant, 'note-1')).send(body);
    expect(sent.status).toBe(201);
    const resent = await app.http.post('/api/v1/notifications').set(auth(tenant, 'note-1')).send(body);
    expect(resent.headers['idempotent-replayed']).toBe('true');
    expect(resent.body).toEqual(sent.body);
    expect(await count('notifications', tenant.communityId)).toBe(1);
  });

  it('costs two statements (lookup-and-lock, store) and a transaction around the write; a replay its first statement, rolled back; no savepoint', async () => {
    const counter = countSql(app.runtime);
    try {
      // Earlier requests' jobs (the outbox's dispatch of each create's event, this file's imports)
      // run their own transactions in this process's worker: none may be due while a request is
      // counted, or its statements land in the count (CI on a slow machine: a job's 'commit;').
      const idle = async () => {
        for (let i = 0; i < 200; i++) {
          const { rows } = await app.runtime.pool.query<{ n: number }>(
            'select count(*)::int as n from graphile_worker._private_jobs where run_at <= now() and attempts < max_attempts',
          );
          if (rows[0].n === 0) return;
          await sleep(25);
        }
        throw new Error('the worker did not finish its due jobs in 5 s');
      };
      const statements = async (key?: string, path = '/api/v1/groups', body: object = { name: 'counted' }) => {
        await idle();
        counter.reset();
        const req = app.http.post(path).set('X-API-Key', t.key);
        if (key) req.set('Idempotency-Key', key);
        expect((await req.send(body)).status).toBe(201);
        // (The hourly purge of this file's worker is not counted: test/helpers/sql-count.ts, BACKGROUND.)
        return counter.statements.filter((s) => s.source === 'orm').map((s) => s.sql.trim().split(/\s+/)[0].toLowerCase());
      };
      await statements(); // warm
      // A group create is one set-based INSERT (db/write.ts), atomic without a transaction of its own.
      expect(await statements()).toEqual(['insert']);
      expect(await statements('counted-1')).toEqual(['begin;', 'select', 'insert', 'with', 'commit;']);
      // A replay: the lookup went with the write, which is rolled back (src/db/prepared.ts, holdStatement).
      expect(await statements('counted-1')).toEqual(['begin;', 'select', 'insert', 'rollback']);
      // A member create opens a transaction of its own; with a key it joins the request's (no SAVEPOINT/RELEASE).
      // A member create without values is one INSERT too; with a key it is the same as a group's.
      expect(await statements(undefined, '/api/v1/members', { firstName: 'Plain' })).toEqual(['insert']);
      expect(await statements('counted-plain', '/api/v1/members', { firstName: 'Plain' })).toEqual(['begin;', 'select', 'insert', 'with', 'commit;']);
      // One with values writes twice, in a transaction of its own (with its field check).
      const field = (await app.http.post('/api/v1/additional_fields').set('X-API-Key', t.key).send({ name: `Counted ${Math.random()}`, type: 'TEXT' })).body.id;
      const member = { firstName: 'Counted', additionalFields: [{ id: field, value: 'v' }] };
      const alone = await statements(undefined, '/api/v1/members', member);
      expect(alone).toEqual(['begin;', 'select', 'insert', 'insert', 'commit;']);
      expect(await statements('counted-member', '/api/v1/members', member)).toEqual(['begin;', 'select', 'select', 'insert', 'insert', 'with', 'commit;']);
      // Its replay: the lookup's verdict came back with the operation's first statement, and nothing after it ran.
      expect(await statements('counted-member', '/api/v1/members', member)).toEqual(['begin;', 'select', 'select', 'rollback']);
    } finally {
      counter.stop();
    }
  });

  it('an answer another request stored between the lookup and the COMMIT wins: this one rolls back and replays it', async () => {
    // The other request commits its stored answer while this one's operation runs (it took no
    // advisory lock: it went in between this request's snapshot and its lock).
    const key = `race-${Math.random()}`;
    const owner = `key:${t.keyId}`;
    const name = `raced-${Math.random()}`;
    const answer = await inCommunity(t.communityId, () =>
      runIdempotent({
        em: app.runtime.orm.em.fork() as EntityManager,
        pool: app.runtime.pool,
        box: app.runtime.state.get(SECRET_BOX),
        owner,
        key,
        fingerprint: 'same-request',
        problemAnswer: () => ({ status: 500, contentType: 'text/plain', body: 'unexpected' }),
        run: async (tx) => {
          await tx.execute(`insert into groups (id, community_id, name, created_at, modified_at) values (gen_random_uuid(), ?, ?, now(), now())`, [t.communityId, name]);
          await app.runtime.pool.query(
            `insert into idempotency_keys (owner, key, fingerprint, status, content_type, body, headers, expires_at)
             values ($1, $2, 'same-request', 201, 'application/json', '{"first":true}', '{}', now() + interval '1 hour')`,
            [owner, key],
          );
          return { status: 201, contentType: 'application/json', body: '{"second":true}' };
        },
      }),
    );
    expect(answer).toMatchObject({ status: 201, body: '{"first":true}', headers: { 'Idempotent-Replayed': 'true' } });
    // This request's own effect was rolled back with its COMMIT.
    expect(await sql('select count(*)::int as n from groups where name = ?', [name])).toEqual([{ n: 0 }]);
  });
});


describe('a key answered again is a client outcome, not an error in the log', () => {
  it('a replay, a reuse with another body and a concurrent duplicate log no error line (each logged a DriverException with its SQL and values)', async () => {
    const service = await startService({ DATABASE_URL: testDatabaseUrl(), ADMIN_TOKEN, LOG_LEVEL: 'warn' });
    try {
      const { key } = await serviceTenant(service.url, ADMIN_TOKEN, 'quiet log');
      const post = (idem: string, body: object) =>
        fetch(`${service.url}/api/v1/members`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': idem },
          body: JSON.stringify(body),
        });
      const ada = { externalId: 'ada', emailAddress: 'ada@example.org' };
      expect((await post('quiet-1', ada)).status).toBe(201);
      expect((await post('quiet-1', ada)).headers.get('idempotent-replayed')).toBe('true');
      expect((await post('quiet-1', { ...ada, firstName: 'Ada' })).status).toBe(422);
      const pair = await Promise.all([1, 2, 3, 4].map(() => post('quiet-2', { externalId: 'bob', emailAddress: 'bob@example.org' })));
      expect(pair.map((r) => r.status).every((s) => s === 201 || s === 409)).toBe(true);
      await sleep(200);
      const errors = service.output().split('\n').filter((line) => /"level":(50|60)/.test(line));
      expect(errors).toEqual([]);
      expect(service.output()).not.toContain('ada@example.org');
    } finally {
      await service.stop();
    }
  }, 120_000);
});
