import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../../src/auth/keys';
import { KeyUsage } from '../../../src/auth/key-usage';
import { announceExpiredKeys } from '../../../src/modules/communities/key-events';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { expectProblem } from '../../helpers/factories';
import { sleep, sqlWith } from '../../helpers/jobs';
import { asTestOwner } from '../../helpers/owner';
import { testDatabaseUrl } from '../../helpers/database';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');

let app: TestApp;
let sql: ReturnType<typeof sqlWith>;

beforeAll(async () => {
  // No key cache: a key's expiry moved by SQL shows on the next request.
  app = await startTestApp({ KEY_CACHE_TTL_MS: '0' });
  sql = sqlWith(app);
});
afterAll(() => app.close());

const KEY_FIELDS = 'id communityId scopes rateLimitPerHour createdAt expiresAt lastUsedAt revokedAt replacedBy';
const keysOf = async (communityId: string) =>
  (await app.operator(`query($c: ID!) { apiKeys(communityId: $c) { ${KEY_FIELDS} } }`, { c: communityId })).apiKeys as Record<string, any>[];
const rotate = (input: Record<string, unknown>) =>
  app.http
    .post('/graphql')
    .set('Authorization', 'Bearer test-operator-token-0123456789')
    .send({ query: `mutation($i: RotateApiKeyInput!) { rotateApiKey(input: $i) { successor { id key expiresAt scopes rateLimitPerHour } previous { ${KEY_FIELDS} } } }`, variables: { i: input } });
const groups = (key: string) => app.http.get('/api/v1/groups').set('X-API-Key', key);
const feed = async (t: Tenant) => {
  const res = await app.http.get('/api/v1/events?limit=100&types=api_key.created,api_key.rotated,api_key.revoked,api_key.expired').set('X-API-Key', t.key);
  expect(res.status, res.text).toBe(200);
  return res.body.results as { type: string; data: Record<string, any> }[];
};

describe('API key expiry', () => {
  it('an expiry must lie in the future; an expired key gets 401', async () => {
    const t = await app.tenant();
    const past = await app.http
      .post('/graphql')
      .set('Authorization', 'Bearer test-operator-token-0123456789')
      .send({ query: 'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id } }', variables: { i: { communityId: t.communityId, expiresAt: '2020-01-01T00:00:00.000Z' } } });
    expect(past.body.errors[0].extensions.code).toBe('VALIDATION');
    expect(JSON.stringify(past.body.errors[0].extensions)).toContain('expiresAt');

    const soon = new Date(Date.now() + 3_600_000).toISOString();
    const { createApiKey } = await app.operator('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id key expiresAt } }', {
      i: { communityId: t.communityId, expiresAt: soon },
    });
    expect(createApiKey.expiresAt).toBe(soon);
    expect((await groups(createApiKey.key)).status).toBe(200);
    await sql(`update api_keys set expires_at = now() - interval '1 second' where id = ?`, [createApiKey.id]);
    const res = await groups(createApiKey.key);
    expectProblem(res, 401);
    expect(res.body.detail).toBe('The API key has expired');
  });
});

describe('lastUsedAt', () => {
  it('is written after a request, off its path', async () => {
    const t = await app.tenant();
    expect((await keysOf(t.communityId))[0].lastUsedAt).toBeNull();
    const before = Date.now();
    expect((await groups(t.key)).status).toBe(200);
    let used: string | null = null;
    for (const end = Date.now() + 10_000; !used && Date.now() < end; await sleep(100)) used = (await keysOf(t.communityId))[0].lastUsedAt;
    expect(used).not.toBeNull();
    expect(new Date(used!).getTime()).toBeGreaterThanOrEqual(before - 5);
  });

  it('is noted at most once a minute per key, in one batched statement', async () => {
    const a = await app.tenant();
    const b = await app.tenant();
    const errors: Error[] = [];
    const usage = new KeyUsage(app.runtime.pool, (e) => errors.push(e), 60_000, 60_000);
    const t0 = Date.now();
    usage.touch(a.keyId, t0);
    usage.touch(b.keyId, t0);
    usage.touch(a.keyId, t0 + 1_000);
    await usage.flush();
    const at = async (id: string) => new Date((await sql('select last_used_at from api_keys where id = ?', [id]))[0].last_used_at).getTime();
    expect([await at(a.keyId), await at(b.keyId)]).toEqual([t0, t0]);
    usage.touch(a.keyId, t0 + 30_000); // within the minute: not noted
    await usage.flush();
    expect(await at(a.keyId)).toBe(t0);
    usage.touch(a.keyId, t0 + 61_000);
    await usage.flush();
    expect(await at(a.keyId)).toBe(t0 + 61_000);
    // An older time written late (another instance) does not move it back.
    const late = new KeyUsage(app.runtime.pool, (e) => errors.push(e));
    late.touch(a.keyId, t0);
    await late.flush();
    expect(await at(a.keyId)).toBe(t0 + 61_000);
    expect(errors).toEqual([]);
  });
});

describe('rotation', () => {
  it('issues a successor with the same scopes and limit; the old key works for the overlap, then expires', async () => {
    const t = await app.tenant({ scopes: ['groups:read'], rateLimitPerHour: 500 });
    const res = await rotate({ id: t.keyId, overlapSeconds: 3600 });
    expect(res.body.errors).toBeUndefined();
    const { successor, previous } = res.body.data.rotateApiKey;
    expect(successor).toMatchObject({ scopes: ['groups:read'], rateLimitPerHour: 500, expiresAt: null });
    expect(successor.key).not.toBe(t.key);
    expect(previous).toMatchObject({ id: t.keyId, replacedBy: successor.id, revokedAt: null });
    expect(Math.abs(new Date(previous.expiresAt).getTime() - (Date.now() + 3_600_000))).toBeLessThan(60_000);
    expect((await groups(t.key)).status).toBe(200);
    expect((await groups(successor.key)).status).toBe(200);
    // The overlap ends.
    await sql(`update api_keys set expires_at = now() - interval '1 second' where id = ?`, [t.keyId]);
    expectProblem(await groups(t.key), 401);
    expect((await groups(successor.key)).status).toBe(200);
    // A rotated key is not rotated again; its successor is.
    expect((await rotate({ id: t.keyId })).body.errors[0].extensions.code).toBe('CONFLICT');
    expect((await rotate({ id: successor.id, overlapSeconds: 0 })).body.errors).toBeUndefined();
    expectProblem(await groups(successor.key), 401); // overlap 0: the old key stops at once
  });

  it('refuses a bad overlap, an unknown or revoked key', async () => {
    const t = await app.tenant();
    for (const overlapSeconds of [-1, 30 * 86_400 + 1]) {
      const res = await rotate({ id: t.keyId, overlapSeconds });
      expect(res.body.errors[0].extensions.code).toBe('VALIDATION');
      expect(JSON.stringify(res.body.errors[0].extensions)).toContain('overlapSeconds');
    }
    expect((await rotate({ id: '00000000-0000-7000-8000-000000000000' })).body.errors[0].extensions.code).toBe('NOT_FOUND');
    await app.operator('mutation($id: ID!) { revokeApiKey(id: $id) }', { id: t.keyId });
    expect((await rotate({ id: t.keyId })).body.errors[0].extensions.code).toBe('CONFLICT');
  });

  it('keys see no operator operation', async () => {
    const t = await app.tenant();
    const res = await app.http.post('/graphql').set('X-API-Key', t.key).send({ query: `mutation { rotateApiKey(input: { id: "${t.keyId}" }) { previous { id } } }` });
    expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });
});

describe('api_key.* events', () => {
  it('created, rotated, revoked and expired appear in the community feed, without the key', async () => {
    const t = await app.tenant();
    const other = await app.tenant();
    const rotated = (await rotate({ id: t.keyId, overlapSeconds: 60 })).body.data.rotateApiKey;
    const spare = await app.operator('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id key } }', { i: { communityId: t.communityId } });
    await app.operator('mutation($id: ID!) { revokeApiKey(id: $id) }', { id: spare.createApiKey.id });
    await app.operator('mutation($id: ID!) { revokeApiKey(id: $id) }', { id: spare.createApiKey.id }); // idempotent: one event
    await sql(`update api_keys set expires_at = now() - interval '1 second' where id = ?`, [t.keyId]);
    expect(await asTestOwner(() => announceExpiredKeys(app.runtime.orm.em.fork() as EntityManager))).toBeGreaterThanOrEqual(1);
    expect(await asTestOwner(() => announceExpiredKeys(app.runtime.orm.em.fork() as EntityManager))).toBe(0); // once

    const events = await feed({ ...t, key: rotated.successor.key });
    expect(events.map((e) => [e.type, e.data.id])).toEqual([
      ['api_key.created', t.keyId],
      ['api_key.created', rotated.successor.id],
      ['api_key.rotated', t.keyId],
      ['api_key.created', spare.createApiKey.id],
      ['api_key.revoked', spare.createApiKey.id],
      ['api_key.expired', t.keyId],
    ]);
    expect(events[2].data).toMatchObject({ id: t.keyId, replacedBy: rotated.successor.id, expiresAt: expect.any(String), revokedAt: null, scopes: [] });
    expect(events[4].data.revokedAt).toEqual(expect.any(String));
    const text = JSON.stringify(events);
    for (const secret of [t.key, rotated.successor.key, spare.createApiKey.key]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(hashKey(secret));
    }
    // Another community sees none of them.
    const theirs = await feed(other);
    expect(theirs.map((e) => e.data.id)).toEqual([other.keyId]);
  });
});

describe('npm run admin: key lifecycle', () => {
  it('create-key --expires-at, rotate-key --overlap, list-keys', async () => {
    const t = await app.tenant();
    const admin = (...args: string[]) =>
      run(process.execPath, ['-r', '@swc-node/register', 'src/admin/cli.ts', ...args], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent' },
      }).then((r) => JSON.parse(r.stdout));
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await admin('create-key', '--community', t.communityId, '--expires-at', expiresAt);
    expect(created).toMatchObject({ communityId: t.communityId, expiresAt, key: expect.stringMatching(/^cm_/) });
    const rotated = await admin('rotate-key', '--id', created.id, '--overlap', '60');
    expect(rotated.previous).toMatchObject({ id: created.id, replacedBy: rotated.successor.id });
    expect((await groups(rotated.successor.key)).status).toBe(200);
    const list = await admin('list-keys', '--community', t.communityId);
    expect(list.map((k: { id: string }) => k.id).sort()).toEqual([t.keyId, created.id, rotated.successor.id].sort());
    expect(JSON.stringify(list)).not.toContain('cm_');
    await expect(admin('rotate-key', '--id', created.id, '--overlap', 'soon')).rejects.toThrow();
  }, 120_000);
});
