import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config';
import { ensureDatabase } from '../../src/db/embedded';
import { openOrm } from '../../src/db/orm';
import { openSecret, resealWebhookSecrets, sealSecret } from '../../src/modules/webhooks/webhook-secrets';
import { keyId, localKey, SECRET_BOX, SecretBox, SecretError } from '../../src/security/secret-box';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { auth } from '../helpers/members';
import { sqlWith } from '../helpers/jobs';
import { asTestOwner } from '../helpers/owner';
import { testDatabaseUrl } from '../helpers/database';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const newKey = () => randomBytes(32);

describe('SecretBox (AES-256-GCM)', () => {
  it('the newest key seals; every listed key opens; the value and its record are bound', () => {
    const [older, newer] = [newKey(), newKey()];
    const before = new SecretBox([older]);
    // A plaintext long enough that random key ids and ciphertext never contain it by chance.
    const plain = 'whsec_plaintext-must-not-show';
    const sealed = before.seal(plain, 'webhook_endpoints:1');
    expect(sealed).toMatch(new RegExp(`^enc1:${keyId(older)}:`));
    expect(sealed).not.toContain('plaintext-must-not-show');
    const after = new SecretBox([newer, older]);
    expect(after.open(sealed, 'webhook_endpoints:1')).toBe(plain);
    expect(after.isCurrent(sealed)).toBe(false);
    expect(after.isCurrent(after.seal('x', 'c'))).toBe(true);
    // A sealed value copied to another record does not open there.
    expect(() => after.open(sealed, 'webhook_endpoints:2')).toThrow(SecretError);
    // Two seals of one value differ (random IV).
    expect(before.seal('same', 'c')).not.toBe(before.seal('same', 'c'));
  });

  it('every seal has its own IV, across the blocks its IVs are drawn in', () => {
    const box = new SecretBox([randomBytes(32)]);
    const ivs = new Set<string>();
    for (let i = 0; i < 1500; i++) {
      const sealed = box.seal('the same value', 'record');
      ivs.add(Buffer.from(sealed.split(':')[2], 'base64').subarray(0, 12).toString('hex'));
      expect(box.open(sealed, 'record')).toBe('the same value');
    }
    expect(ivs.size).toBe(1500);
  });

  it('errors name the key id, never the value', () => {
    const sealed = new SecretBox([newKey()]).seal('whsec_topsecret', 'c');
    const other = new SecretBox([newKey()]);
    expect(() => other.open(sealed, 'c')).toThrow(/encrypted with key [0-9a-f]{8}, which is not among SECRET_ENCRYPTION_KEYS/);
    try {
      other.open(sealed, 'c');
    } catch (err) {
      expect(String((err as Error).message)).not.toContain('topsecret');
    }
    const tampered = sealed.slice(0, -4) + (sealed.endsWith('AAA=') ? 'BBB=' : 'AAA=');
    expect(() => new SecretBox([newKey()]).open(tampered, 'c')).toThrow(SecretError);
  });

  it('the local key file is made once, mode 0600, and read again', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'capi-key-')), 'sub', 'secret-encryption.key');
    const first = localKey(file);
    expect(first.created).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const second = localKey(file);
    expect(second).toEqual({ key: first.key, created: false });
    fs.rmSync(path.dirname(path.dirname(file)), { recursive: true, force: true });
  });

  it('SECRET_ENCRYPTION_KEYS: newest first, each 32 bytes; required in production with DATABASE_URL', () => {
    const [a, b] = [newKey(), newKey()];
    expect(loadConfig({ SECRET_ENCRYPTION_KEYS: `${a.toString('base64')}, ${b.toString('base64')}` }).secretEncryptionKeys).toEqual([a, b]);
    expect(() => loadConfig({ SECRET_ENCRYPTION_KEYS: `${a.toString('base64')},c2hvcnQ=` })).toThrow(/SECRET_ENCRYPTION_KEYS entry 2: .*32/);
    expect(() => loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x' })).toThrow(ConfigError);
    expect(loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x', SECRET_KEY_FILE: '/keys/k' }).secretKeyFile).toBe('/keys/k');
    expect(loadConfig({ NODE_ENV: 'production' }).secretEncryptionKeys).toEqual([]); // embedded: the key file
    expect(loadConfig({ DATABASE_URL: 'postgres://db/x' }).secretEncryptionKeys).toEqual([]); // not production: the key file
  });
});

describe('webhook secrets at rest', () => {
  let app: TestApp;
  let t: Tenant;
  let sql: ReturnType<typeof sqlWith>;
  beforeAll(async () => {
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    t = await app.tenant();
    sql = sqlWith(app);
  });
  afterAll(() => app.close());

  it('the database holds the secret sealed, never in plain text, and refuses a plaintext one', async () => {
    const res = await app.http.post('/api/v1/webhook_endpoints').set(auth(t)).send({ url: 'http://127.0.0.1:9/x', events: ['*'] });
    expect(res.status).toBe(201);
    const [row] = await sql('select secret, previous_secret from webhook_endpoints where id = ?', [res.body.id]);
    expect(row.secret).toMatch(/^enc1:[0-9a-f]{8}:/);
    expect(row.secret).not.toContain(res.body.secret.slice(6));
    expect(openSecret(app.runtime.state.get(SECRET_BOX), res.body.id, row.secret)).toBe(res.body.secret);
    await expect(sql('update webhook_endpoints set secret = ? where id = ?', ['whsec_plain', res.body.id])).rejects.toMatchObject({ code: '23514' });
  });

  it('an Idempotency-Key answer that shows a secret is stored sealed and replayed in clear', async () => {
    const key = `idem-${Date.now()}`;
    const send = () => app.http.post('/api/v1/webhook_endpoints').set(auth(t)).set('Idempotency-Key', key).send({ url: 'http://127.0.0.1:9/i', events: ['*'] });
    const first = await send();
    expect(first.status).toBe(201);
    const [stored] = await sql('select body from idempotency_keys where key = ?', [key]);
    expect(stored.body).toMatch(/^enc1:/);
    expect(stored.body).not.toContain(first.body.secret);
    const again = await send();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    // The operator's new API key too.
    const opKey = `idem-op-${Date.now()}`;
    const mutation = { query: 'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id key } }', variables: { i: { communityId: t.communityId } } };
    const op = () => app.http.post('/graphql').set('Authorization', 'Bearer test-operator-token-0123456789').set('Idempotency-Key', opKey).send(mutation);
    const created = (await op()).body.data.createApiKey;
    const [opStored] = await sql('select body from idempotency_keys where key = ?', [opKey]);
    expect(opStored.body).not.toContain(created.key);
    expect((await op()).body.data.createApiKey).toEqual(created);
  });

  it('a plaintext secret written before encryption is sealed by the start-up pass', async () => {
    const em = app.runtime.orm.em.fork() as EntityManager;
    // Rows from before the check constraint existed: made here by dropping it inside a
    // transaction that is rolled back afterwards (as the owner, as the start-up pass runs).
    await asTestOwner(() => em.transactional(async (tem) => {
        await tem.execute('alter table webhook_endpoints drop constraint webhook_endpoints_secret_sealed');
        const id = '00000000-0000-7000-8000-00000000beef';
        await tem.execute(
          `insert into webhook_endpoints (id, community_id, url, events, secret, enabled, created_at, modified_at)
           values (?, ?, 'http://127.0.0.1:9/old', '{*}', 'whsec_legacyplaintext', true, now(), now())`,
          [id, t.communityId],
        );
        const first = await resealWebhookSecrets(tem, app.runtime.state.get(SECRET_BOX), 'plaintext');
        expect(first.resealed).toBe(1);
        const [row] = await tem.execute('select secret from webhook_endpoints where id = ?', [id]);
        expect(row.secret).toMatch(/^enc1:/);
        expect(openSecret(app.runtime.state.get(SECRET_BOX), id, row.secret)).toBe('whsec_legacyplaintext');
        expect((await resealWebhookSecrets(tem, app.runtime.state.get(SECRET_BOX), 'plaintext')).resealed).toBe(0);
        throw new Error('rollback');
      })).catch((err: Error) => {
        if (err.message !== 'rollback') throw err;
      });
  });
});

describe('npm run admin -- reencrypt-secrets', () => {
  it('re-seals every webhook secret under the first key; the old key is then no longer needed', async () => {
    const url = new URL(testDatabaseUrl());
    const admin = new URL(url);
    admin.pathname = '/postgres';
    const dbUrl = await ensureDatabase(admin.toString(), `capi_reencrypt_${process.pid}_${Date.now()}`);
    const orm = await openOrm(dbUrl, 1, true);
    await orm.close(true);
    const [older, newer] = [newKey(), newKey()];
    const client = new Client({ connectionString: dbUrl });
    await client.connect();
    try {
      const community = '00000000-0000-7000-8000-0000000000c1';
      const endpoint = '00000000-0000-7000-8000-0000000000e1';
      await client.query(`insert into communities (id, name, created_at) values ($1, 'c', now())`, [community]);
      await client.query(
        `insert into webhook_endpoints (id, community_id, url, events, secret, enabled, created_at, modified_at)
         values ($1, $2, 'http://127.0.0.1:9/x', '{*}', $3, true, now(), now())`,
        [endpoint, community, sealSecret(new SecretBox([older]), endpoint, 'whsec_rotateme')],
      );
      const keys = `${newer.toString('base64')},${older.toString('base64')}`;
      const { stdout } = await run(process.execPath, ['-r', '@swc-node/register', 'src/admin/cli.ts', 'reencrypt-secrets'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: dbUrl, SECRET_ENCRYPTION_KEYS: keys },
      });
      expect(JSON.parse(stdout)).toEqual({ keyId: keyId(newer), webhookSecrets: { checked: 1, resealed: 1 } });
      const { rows } = await client.query('select secret from webhook_endpoints where id = $1', [endpoint]);
      expect(rows[0].secret.startsWith(`enc1:${keyId(newer)}:`)).toBe(true);
      expect(openSecret(new SecretBox([newer]), endpoint, rows[0].secret)).toBe('whsec_rotateme');
    } finally {
      await client.end();
      const c = new Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`drop database if exists "${new URL(dbUrl).pathname.slice(1)}" with (force)`);
      await c.end();
    }
  }, 120_000);
});
