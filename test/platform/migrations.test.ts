import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsList } from '../../src/db/migrations';
import { ormOptions } from '../../src/db/orm';
import { Migration20991231000000_fixture } from '../fixtures/migrations/Migration20991231000000_fixture';
import { catalogSchema, pgDumpFor, pgDumpSchema, scratchDatabase } from '../helpers/schema';
import { testDatabaseUrl } from '../helpers/database';

const fixture = { name: 'Migration20991231000000_fixture', class: Migration20991231000000_fixture };

/** Migrates `url` with `list` (the app's options otherwise). */
async function migrate(url: string, list: typeof migrationsList): Promise<void> {
  const options = ormOptions(url, 1);
  const orm = await MikroORM.init({ ...options, migrations: { ...options.migrations, migrationsList: list } });
  try {
    await orm.getMigrator().up();
  } finally {
    await orm.close(true);
  }
}

describe('migrations', () => {
  it('import nothing but @mikro-orm/migrations, and are literal SQL', async () => {
    const fs = await import('node:fs');
    const dir = 'src/db/migrations';
    for (const file of fs.readdirSync(dir).filter((f) => f.startsWith('Migration'))) {
      const text = fs.readFileSync(`${dir}/${file}`, 'utf8');
      const imports = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
      expect(imports, file).toEqual(['@mikro-orm/migrations']);
      // literal: no template substitution inside the SQL
      expect(text.includes('${'), file).toBe(false);
    }
  });

  it('leave no drift between the entities and the schema (MikroORM schema diff)', async () => {
    const orm = await MikroORM.init(ormOptions(testDatabaseUrl(), 1));
    try {
      const sql = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
      const statements = sql.split(/;\s*\n/).map((s) => s.trim()).filter(Boolean);
      // What the schema holds that the entities do not model, on purpose: tables read and written
      // by SQL only (the outbox, idempotency, worker heartbeats, webhook attempts), and indexes,
      // foreign keys, checks and unique constraints, which are the migrations' business. Any other
      // statement (a column added, dropped, retyped, made nullable; a table created) is drift.
      const sqlOnlyTables = ['event_commits', 'event_listeners', 'events', 'idempotency_keys', 'webhook_delivery_attempts', 'worker_heartbeats'];
      const ignored = [
        new RegExp(`^drop table if exists "(${sqlOnlyTables.join('|')})" cascade$`),
        /^drop index "\w+"$/,
        /^alter table "\w+" drop constraint "?\w+"?$/,
        // An identity column: MikroORM 6 models only serial ones (import_job_errors.id).
        /^alter table "import_job_errors" (drop column "id"|add column "id" bigserial primary key)$/,
        // A stored digest PostgreSQL computes for the field filter's index (Migration20261125080000); read by SQL only.
        /^alter table "member_field_values" drop column "value_md5"$/,
        // The lower-cased joined text PostgreSQL computes for `q` (Migration20261125130000); read by SQL only.
        /^alter table "members" drop column "search_text"$/,
      ];
      expect(statements.filter((s) => !ignored.some((re) => re.test(s)))).toEqual([]);
    } finally {
      await orm.close(true);
    }
  });
});

describe('a database migrated in one go equals one upgraded migration by migration', () => {
  const dbs: { url: string; drop(): Promise<void> }[] = [];
  let fresh: string;
  let upgraded: string;

  beforeAll(async () => {
    const stamp = `${Date.now()}_${process.pid}`;
    const [a, b] = await Promise.all([scratchDatabase(testDatabaseUrl(), `capi_fresh_${stamp}`), scratchDatabase(testDatabaseUrl(), `capi_upgraded_${stamp}`)]);
    dbs.push(a, b);
    fresh = a.url;
    upgraded = b.url;
    // A: the whole history in one run. B: every release in turn, each an upgrade of the one
    // before (the fixture is the release after today's).
    const history = [...migrationsList, fixture];
    await migrate(fresh, history);
    for (let i = 1; i <= history.length; i++) await migrate(upgraded, history.slice(0, i));
  });
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  it('the same catalog: tables, columns, types, constraints, indexes, functions, triggers', async () => {
    const [a, b] = await Promise.all([catalogSchema(fresh), catalogSchema(upgraded)]);
    expect(a.some((l) => l.includes('groups_fixture_probe_idx'))).toBe(true);
    expect(a.some((l) => l.startsWith('function CREATE OR REPLACE FUNCTION public.events_capture_groups()'))).toBe(true);
    expect(b).toEqual(a);
  });

  it('the same pg_dump --schema-only (with a pg_dump of the server version)', async (ctx) => {
    const pgDump = await pgDumpFor(fresh);
    // The embedded server ships no pg_dump: the catalog comparison above stands in for it.
    if (!pgDump) return ctx.skip();
    const [a, b] = await Promise.all([pgDumpSchema(pgDump, fresh), pgDumpSchema(pgDump, upgraded)]);
    expect(a).toContain('CREATE INDEX groups_fixture_probe_idx');
    expect(b).toBe(a);
  });
});
