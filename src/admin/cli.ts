import 'reflect-metadata';
import { parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { loadConfig } from '../config';
import { openOrm } from '../db/orm';
import { asOwner } from '../db/tenancy';
import type { ApiKey } from '../auth/api-key.entity';
import { AppError } from '../errors/app-error';
import { createLogger } from '../logger';
import { AdminService } from '../modules/communities/admin.service';
import { RuntimeState } from '../state';
import { resolveDatabase } from '../runtime';
import { resealWebhookSecrets } from '../modules/webhooks/webhook-secrets';
import { openSecretBox, type SecretBox } from '../security/secret-box';

const USAGE = `usage: npm run admin -- <command> [options]
  create-community --name <name>
  create-key --community <id> [--scopes groups,members:read,...] [--rate-limit <per hour>] [--expires-at <ISO time>]
  rotate-key --id <key id> [--overlap <seconds, default 86400>] [--expires-at <ISO time, the successor's>]
  revoke-key --id <key id>
  list-keys --community <id>
  reencrypt-secrets   seal every stored webhook secret with the first of SECRET_ENCRYPTION_KEYS
  --help, -h   prints this text
Prints JSON. Uses DATABASE_URL, or the embedded PostgreSQL in .data/ when unset.`;

async function run(service: AdminService, command: string, values: Record<string, string | undefined>, em: EntityManager, box: SecretBox) {
  switch (command) {
    case 'reencrypt-secrets': {
      const { checked, resealed } = await resealWebhookSecrets(em, box, 'all');
      return { keyId: box.current.id, webhookSecrets: { checked, resealed } };
    }
    case 'create-community': {
      const c = await service.createCommunity(values.name ?? '');
      return { id: c.id, name: c.name, createdAt: c.createdAt.toISOString() };
    }
    case 'create-key': {
      const rate = values['rate-limit'];
      if (rate !== undefined && !/^\d+$/.test(rate)) throw new AppError('VALIDATION', '--rate-limit must be a positive integer');
      const { key, plain } = await service.createKey({
        communityId: values.community ?? '',
        scopes: values.scopes ? values.scopes.split(',').map((s) => s.trim()).filter(Boolean) : [],
        rateLimitPerHour: rate === undefined ? null : Number(rate),
        expiresAt: time(values['expires-at'], '--expires-at'),
      });
      return { ...keyInfo(key), key: plain };
    }
    case 'rotate-key': {
      const overlap = values.overlap;
      if (overlap !== undefined && !/^\d+$/.test(overlap)) throw new AppError('VALIDATION', '--overlap must be a number of seconds');
      const { key, plain, previous } = await service.rotateKey({
        id: values.id ?? '',
        overlapSeconds: overlap === undefined ? null : Number(overlap),
        expiresAt: time(values['expires-at'], '--expires-at'),
      });
      return { successor: { ...keyInfo(key), key: plain }, previous: keyInfo(previous) };
    }
    case 'list-keys':
      return (await service.listKeys(values.community ?? '')).map(keyInfo);
    case 'revoke-key':
      return { id: values.id, revoked: await service.revokeKey(values.id ?? '') };
    default:
      throw new Error(USAGE);
  }
}

const COMMANDS = ['create-community', 'create-key', 'rotate-key', 'revoke-key', 'list-keys', 'reencrypt-secrets'];

function time(value: string | undefined, name: string): Date | null {
  if (value === undefined) return null;
  const date = new Date(value);
  if (!/^\d{4}-\d\d-\d\dT/.test(value) || Number.isNaN(date.getTime())) throw new AppError('VALIDATION', `${name} must be an ISO 8601 time`);
  return date;
}

/** A key as the operator sees it: never the key (except once, at creation) nor its hash. */
const keyInfo = (k: ApiKey) => ({
  id: k.id,
  communityId: k.communityId,
  scopes: k.scopes,
  rateLimitPerHour: k.rateLimitPerHour ?? null,
  createdAt: k.createdAt.toISOString(),
  expiresAt: k.expiresAt?.toISOString() ?? null,
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  revokedAt: k.revokedAt?.toISOString() ?? null,
  replacedBy: k.replacedBy ?? null,
});

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      community: { type: 'string' },
      scopes: { type: 'string' },
      'rate-limit': { type: 'string' },
      id: { type: 'string' },
      overlap: { type: 'string' },
      'expires-at': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (values.help || command === 'help') {
    console.log(USAGE);
    return;
  }
  if (!command || !COMMANDS.includes(command)) {
    console.error(USAGE);
    process.exit(2);
  }
  const config = loadConfig();
  const { url, embedded } = await resolveDatabase(config, createLogger('silent'));
  const orm = await openOrm(url, 2);
  try {
    // The same keys as the service: SECRET_ENCRYPTION_KEYS, else the local key file (logged to stderr).
    const box = openSecretBox(config, (msg, fields) => console.error(JSON.stringify({ msg, ...fields })));
    const em = orm.em.fork() as EntityManager;
    const { help: _help, ...options } = values;
    // The operator's tool spans communities: under the named bypass, recorded on stderr (src/db/tenancy.ts).
    const audit = (fields: object, msg: string) => console.error(JSON.stringify({ msg, ...fields }));
    const result = await asOwner(`admin cli: ${command}`, audit, () => run(new AdminService(em, new RuntimeState()), command, options, em, box));
    console.log(JSON.stringify(result, null, 2));
  } catch (err) {
    if (err instanceof AppError) {
      console.error(JSON.stringify({ error: err.code, detail: err.message, errors: err.issues }, null, 2));
      process.exitCode = 1;
    } else throw err;
  } finally {
    await orm.close(true);
    await embedded?.stop();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
