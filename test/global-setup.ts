import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded';
import { openOrm } from '../src/db/orm';
import { freePort } from './helpers/process';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

let embedded: EmbeddedServer | undefined;
let dir: string | undefined;
let dropAfter: { adminUrl: string; name: string } | undefined;

/**
 * One real PostgreSQL for the whole run: DATABASE_URL's server when set, else an
 * embedded one. Each run gets a fresh database, migrated once here.
 */
export async function setup(project: TestProject) {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    dir = path.resolve('.data', `test-pg-${process.pid}`);
    embedded = await startEmbeddedPostgres({ dir, port: await freePort(), fast: true, persistent: false });
    adminUrl = embedded.url;
  }
  const name = `capi_test_${Date.now()}_${process.pid}`;
  const url = await ensureDatabase(adminUrl, name);
  if (!embedded) dropAfter = { adminUrl, name };
  const orm = await openOrm(url, 2, true);
  await orm.close(true);
  project.provide('databaseUrl', url);
}

export async function teardown() {
  if (dropAfter) {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: dropAfter.adminUrl });
    await client.connect();
    // The files' clones (test/file-database.ts) drop themselves; one whose worker died did not.
    const { rows } = await client.query<{ datname: string }>('select datname from pg_database where starts_with(datname, $1)', [`${dropAfter.name}_`]);
    for (const { datname } of rows) await client.query(`drop database if exists "${datname}" with (force)`).catch(() => undefined);
    await client.query(`drop database if exists "${dropAfter.name}" with (force)`).catch(() => undefined);
    await client.end();
  }
  await embedded?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
