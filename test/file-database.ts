import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';

/**
 * Each test file runs on a database of its own, cloned from the run's migrated one
 * (test/global-setup.ts) before the file's first test and dropped after its last: files run
 * side by side (vitest's workers), and one file's job workers must not run another file's jobs,
 * nor its rows shift another file's counts. `testDatabaseUrl()` (test/helpers/database.ts) is its
 * address.
 */
const template = new URL(inject('databaseUrl'));
const name = `${template.pathname.slice(1)}_${randomBytes(4).toString('hex')}`;
const admin = new URL(template);
admin.pathname = '/postgres';

async function onAdmin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

await onAdmin(`create database "${name}" template "${template.pathname.slice(1)}"`);
const url = new URL(template);
url.pathname = `/${name}`;
process.env.TEST_DATABASE_URL = url.toString();

// Registered first, so it runs after the file's own afterAll hooks (vitest's default 'stack' order).
afterAll(() => onAdmin(`drop database if exists "${name}" with (force)`));
