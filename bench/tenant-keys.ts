import 'reflect-metadata';
import { Client } from 'pg';
import { ensureDatabase } from '../src/db/embedded';
import { openOrm } from '../src/db/orm';
import { migrationsList } from '../src/db/migrations';
import { median } from './load';
import { runMain } from './proc';

/**
 * What the tenant keys (composite foreign keys, unique constraints led by community_id) cost
 * writes: two databases on one server, one migrated up to the migration before them and one
 * up to them, the same inserts alternated between the two: 1,000 memberships into a group (one
 * statement, the outbox and membership_count triggers included) and 1,000 additional field
 * values. `node -r @swc-node/register bench/tenant-keys.ts [adminUrl]` (default: the local
 * PostgreSQL at 127.0.0.1:5432); prints medians and the paired overhead.
 */
const REPS = Number(process.env.BENCH_TENANT_KEYS_REPS || 15);

async function database(adminUrl: string, name: string, withKeys: boolean): Promise<string> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.end();
  const url = await ensureDatabase(adminUrl, name);
  const orm = await openOrm(url, 2, false);
  const at = migrationsList.findIndex((m) => m.name.endsWith('_tenant_keys'));
  if (at < 1) throw new Error('bench/tenant-keys.ts: no tenant keys migration in migrationsList');
  await orm.getMigrator().up({ to: migrationsList[withKeys ? at : at - 1].name });
  await orm.close(true);
  return url;
}

async function prepare(url: string) {
  const c = new Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query<{ c: string; g: string; f: string }>(`
    with c as (insert into communities (id, name, created_at) values (gen_random_uuid(), 'Bench', now()) returning id),
         g as (insert into groups (id, community_id, name, created_at, modified_at) select gen_random_uuid(), id, 'G', now(), now() from c returning id),
         f as (insert into additional_fields (id, community_id, name, type, order_number, created_at, modified_at) select gen_random_uuid(), id, 'F', 'TEXT', 1, now(), now() from c returning id),
         m as (insert into members (id, community_id, first_name, last_name, created_at, modified_at)
               select gen_random_uuid(), c.id, 'M', 'N' || i, now(), now() from c, generate_series(1, 1000) i returning 1)
    select (select id from c) as c, (select id from g) as g, (select id from f) as f, (select count(*) from m) as n`);
  await c.query('analyze');
  return { client: c, ...rows[0] };
}

async function main() {
  const adminUrl = process.argv[2] || 'postgres://postgres@127.0.0.1:5432/postgres';
  const without = await prepare(await database(adminUrl, 'bench_tenant_keys_before', false));
  const withKeys = await prepare(await database(adminUrl, 'bench_tenant_keys_after', true));
  const memberships = async (d: typeof without) => {
    await d.client.query('delete from group_memberships where group_id = $1', [d.g]);
    const t = performance.now();
    await d.client.query(
      `insert into group_memberships (id, community_id, group_id, member_id, order_number, created_at, modified_at)
       select gen_random_uuid(), $1, $2, m.id, row_number() over (order by m.id), now(), now() from members m where m.community_id = $1`,
      [d.c, d.g],
    );
    return performance.now() - t;
  };
  const values = async (d: typeof without, keys: boolean) => {
    await d.client.query('delete from member_field_values where field_id = $1', [d.f]);
    const t = performance.now();
    await d.client.query(
      keys
        ? `insert into member_field_values (community_id, member_id, field_id, value) select m.community_id, m.id, $2, 'v' from members m where m.community_id = $1`
        : `insert into member_field_values (member_id, field_id, value) select m.id, $2, 'v' from members m where m.community_id = $1`,
      [d.c, d.f],
    );
    return performance.now() - t;
  };
  const r = { mb: [] as number[], ma: [] as number[], vb: [] as number[], va: [] as number[] };
  for (let i = 0; i < REPS + 2; i++) {
    const pair = i % 2 ? [withKeys, without] : [without, withKeys];
    for (const d of pair) {
      const m = await memberships(d);
      const v = await values(d, d === withKeys);
      if (i < 2) continue; // warm-up
      (d === withKeys ? r.ma : r.mb).push(m);
      (d === withKeys ? r.va : r.vb).push(v);
    }
  }
  const paired = (a: number[], b: number[]) => median(a.map((x, i) => x / b[i] - 1));
  const line = (label: string, a: number[], b: number[]) =>
    `${label}: before ${median(b).toFixed(1)} ms, with tenant keys ${median(a).toFixed(1)} ms (paired ${(paired(a, b) * 100).toFixed(1)}%, ${a.length} pairs)`;
  console.log(line('1,000 memberships, one statement', r.ma, r.mb));
  console.log(line('1,000 additional field values, one statement', r.va, r.vb));
  await without.client.end();
  await withKeys.client.end();
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  for (const name of ['bench_tenant_keys_before', 'bench_tenant_keys_after']) await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.end();
}

runMain(main);
