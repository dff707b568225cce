import 'reflect-metadata';
import { parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { loadConfig } from '../config';
import { openOrm } from '../db/orm';
import { AppError } from '../errors/app-error';
import { createLogger } from '../logger';
import { AdminService } from '../modules/communities/admin.service';
import { resolveDatabase } from '../runtime';

const USAGE = `usage: npm run admin -- <command> [options]
  create-community --name <name>
  create-key --community <id> [--scopes groups,members:read,...] [--rate-limit <per hour>]
  revoke-key --id <key id>
  --help, -h   prints this text
Prints JSON. Uses DATABASE_URL, or the embedded PostgreSQL in .data/ when unset.`;

async function run(service: AdminService, command: string, values: Record<string, string | undefined>) {
  switch (command) {
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
      });
      return { id: key.id, key: plain, communityId: key.communityId, scopes: key.scopes, rateLimitPerHour: key.rateLimitPerHour ?? null };
    }
    case 'revoke-key':
      return { id: values.id, revoked: await service.revokeKey(values.id ?? '') };
    default:
      throw new Error(USAGE);
  }
}

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      community: { type: 'string' },
      scopes: { type: 'string' },
      'rate-limit': { type: 'string' },
      id: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (values.help || command === 'help') {
    console.log(USAGE);
    return;
  }
  if (!command || !['create-community', 'create-key', 'revoke-key'].includes(command)) {
    console.error(USAGE);
    process.exit(2);
  }
  const config = loadConfig();
  const { url, embedded } = await resolveDatabase(config, createLogger('silent'));
  const orm = await openOrm(url, 2);
  try {
    const { help: _help, ...options } = values;
    const result = await run(new AdminService(orm.em.fork() as EntityManager), command, options);
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
