import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from 'pg';
import { testDatabaseUrl } from '../helpers/database';

/**
 * The tenant keys, read from the catalog (pg_constraint): every foreign key between tenant
 * tables (tables with a community_id) is `(community_id, x_id)` referencing
 * `(community_id, id)`, and every unique constraint or index of a tenant table leads with
 * community_id. It also lists what Citus would still need (docs/scaling.md, "Sharding by
 * community"): primary keys without community_id, and child tables without the column.
 */
let db: Client;
beforeAll(async () => {
  db = new Client({ connectionString: testDatabaseUrl() });
  await db.connect();
});
afterAll(() => db.end());

interface Constraint {
  table: string;
  name: string;
  type: 'p' | 'u' | 'f';
  columns: string[];
  refTable: string | null;
  refColumns: string[] | null;
}

async function constraints(): Promise<Constraint[]> {
  const { rows } = await db.query<Constraint>(`
    select c.conrelid::regclass::text as table, c.conname as name, c.contype as type,
           array(select a.attname::text from unnest(c.conkey) with ordinality k(n, i) join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.i) as columns,
           c.confrelid::regclass::text as "refTable",
           case when c.contype = 'f' then array(select a.attname::text from unnest(c.confkey) with ordinality k(n, i) join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.n order by k.i) end as "refColumns"
      from pg_constraint c join pg_namespace n on n.oid = c.connamespace
     where n.nspname = 'public' and c.contype in ('p', 'u', 'f')
     order by 1, 2`);
  return rows.map((r) => ({ ...r, refTable: r.type === 'f' ? r.refTable : null }));
}

async function tenantTables(): Promise<Set<string>> {
  const { rows } = await db.query<{ table: string }>(
    `select table_name as table from information_schema.columns where table_schema = 'public' and column_name = 'community_id'`,
  );
  return new Set(rows.map((r) => r.table));
}

/** Looked up by key hash before any community is known: a reference table for Citus, keyed globally. */
const GLOBAL_UNIQUES = ['api_keys_key_hash_unique'];

describe('tenant keys in the catalog', () => {
  it('every foreign key between tenant tables is (community_id, x_id) -> (community_id, id)', async () => {
    const tenant = await tenantTables();
    const fks = (await constraints()).filter((c) => c.type === 'f' && tenant.has(c.table) && c.refTable !== 'communities');
    expect(fks.length).toBeGreaterThanOrEqual(9);
    const offenders = fks.filter(
      (fk) =>
        !tenant.has(fk.refTable!) ||
        fk.columns.length !== 2 ||
        fk.columns[0] !== 'community_id' ||
        JSON.stringify(fk.refColumns) !== JSON.stringify(['community_id', 'id']),
    );
    expect(offenders).toEqual([]);
    // The tables that point at communities do so by community_id alone.
    const roots = (await constraints()).filter((c) => c.type === 'f' && c.refTable === 'communities');
    for (const fk of roots) expect(fk.columns).toEqual(['community_id']);
  });

  it('every unique constraint and unique index of a tenant table leads with community_id', async () => {
    const tenant = await tenantTables();
    const uniques = (await constraints()).filter((c) => c.type === 'u' && tenant.has(c.table));
    expect(uniques.filter((u) => u.columns[0] !== 'community_id').map((u) => u.name)).toEqual(GLOBAL_UNIQUES);
    // Unique indexes that are no constraint (an expression such as lower(email_address)).
    const { rows } = await db.query<{ table: string; name: string; first: string | null }>(`
      select c.relname as table, ic.relname as name, (select a.attname::text from pg_attribute a where a.attrelid = i.indrelid and a.attnum = i.indkey[0]) as first
        from pg_index i join pg_class c on c.oid = i.indrelid join pg_class ic on ic.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and i.indisunique and not i.indisprimary
         and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)`);
    const loose = rows.filter((r) => tenant.has(r.table) && r.first !== 'community_id');
    expect(loose).toEqual([]);
  });

  it('lists what Citus would still need: primary keys without community_id, children without the column', async () => {
    const tenant = await tenantTables();
    const all = await constraints();
    const pks = all
      .filter((c) => c.type === 'p' && tenant.has(c.table) && !c.columns.includes('community_id'))
      .map((c) => `${c.table} (${c.columns.join(', ')})`)
      .sort();
    // docs/scaling.md lists these, and what each would become.
    expect(pks).toEqual([
      'additional_fields (id)',
      'api_keys (id)',
      'events (txid, seq)',
      'group_memberships (id)',
      'groups (id)',
      'import_jobs (id)',
      'member_field_values (member_id, field_id)',
      'members (id)',
      'notification_deliveries (id)',
      'notification_recipients (notification_id, member_id)',
      'notifications (id)',
      'webhook_deliveries (id)',
      'webhook_endpoints (id)',
    ]);
    const children = [...new Set(all.filter((c) => c.type === 'f' && !tenant.has(c.table) && tenant.has(c.refTable!)).map((c) => c.table))].sort();
    expect(children).toEqual(['import_job_errors', 'webhook_delivery_attempts']);
  });

  it('the database refuses a membership or a field value that points into another community', async () => {
    const ids = async () => {
      const { rows } = await db.query<{ c: string; g: string; m: string; f: string }>(`
        with c as (insert into communities (id, name, created_at) values (gen_random_uuid(), 'Keys', now()) returning id),
             g as (insert into groups (id, community_id, name, created_at, modified_at) select gen_random_uuid(), id, 'G', now(), now() from c returning id, community_id),
             m as (insert into members (id, community_id, first_name, last_name, created_at, modified_at) select gen_random_uuid(), id, 'A', 'B', now(), now() from c returning id),
             f as (insert into additional_fields (id, community_id, name, type, order_number, created_at, modified_at) select gen_random_uuid(), id, 'F', 'TEXT', 1, now(), now() from c returning id)
        select (select id from c) as c, (select id from g) as g, (select id from m) as m, (select id from f) as f`);
      return rows[0];
    };
    const a = await ids();
    const b = await ids();
    const membership = (community: string, group: string, member: string) =>
      db.query(
        `insert into group_memberships (id, community_id, group_id, member_id, order_number, created_at, modified_at) values (gen_random_uuid(), $1, $2, $3, 1, now(), now())`,
        [community, group, member],
      );
    await expect(membership(a.c, a.g, b.m)).rejects.toMatchObject({ code: '23503' });
    await expect(membership(b.c, a.g, b.m)).rejects.toMatchObject({ code: '23503' });
    await membership(a.c, a.g, a.m);
    const value = (community: string, member: string, field: string) =>
      db.query(`insert into member_field_values (community_id, member_id, field_id, value, member_created_at) values ($1, $2, $3, 'x', now())`, [community, member, field]);
    await expect(value(a.c, a.m, b.f)).rejects.toMatchObject({ code: '23503' });
    await value(a.c, a.m, a.f);
  });

  it("refuses an API key's successor from another community, and clears only the successor when it is deleted", async () => {
    const key = async (community: string) =>
      (
        await db.query<{ id: string }>(
          `insert into api_keys (id, community_id, key_hash, created_at) values (gen_random_uuid(), $1, md5(random()::text), now()) returning id`,
          [community],
        )
      ).rows[0].id;
    const community = async () =>
      (await db.query<{ id: string }>(`insert into communities (id, name, created_at) values (gen_random_uuid(), 'Keys', now()) returning id`)).rows[0].id;
    const [a, b] = [await community(), await community()];
    const [old, successor, foreign] = [await key(a), await key(a), await key(b)];
    const replace = (id: string, by: string) => db.query('update api_keys set replaced_by = $2 where id = $1', [id, by]);
    await expect(replace(old, foreign)).rejects.toMatchObject({ code: '23503' });
    await replace(old, successor);
    await db.query('delete from api_keys where id = $1', [successor]);
    const { rows } = await db.query('select community_id, replaced_by from api_keys where id = $1', [old]);
    expect(rows).toEqual([{ community_id: a, replaced_by: null }]);
  });
});
