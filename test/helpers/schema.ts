import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { Client } from 'pg';

const run = promisify(execFile);

/** Runs `fn` with a client on `url`. */
export async function withClient<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A new database on the server of `url`, empty or a copy of `template`; returns its url and a
 * drop function.
 */
export async function scratchDatabase(url: string, name: string, template?: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  await withClient(admin.toString(), (c) => c.query(`create database "${name}"${template ? ` template "${template}"` : ''}`));
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    url: own.toString(),
    drop: () => withClient(admin.toString(), (c) => c.query(`drop database if exists "${name}" with (force)`)).then(() => undefined),
  };
}

/**
 * A pg_dump of the server's major version (pg_dump refuses a newer server, and an older
 * one's dump differs): Debian's /usr/lib/postgresql/<major>/bin, else `pg_dump` on PATH when
 * its version matches. Undefined when there is none (the embedded server ships no pg_dump).
 */
export async function pgDumpFor(url: string): Promise<string | undefined> {
  const major = await withClient(url, async (c) => Math.floor(Number((await c.query('show server_version_num')).rows[0].server_version_num) / 10000));
  for (const bin of [`/usr/lib/postgresql/${major}/bin/pg_dump`, 'pg_dump']) {
    if (bin.startsWith('/') && !fs.existsSync(bin)) continue;
    const version = await run(bin, ['--version']).then((r) => r.stdout, () => '');
    if (new RegExp(`\\) ${major}\\.`).test(version)) return bin;
  }
  return undefined;
}

/** `pg_dump --schema-only` of the application's schema, without the migrator's own table and pg_dump's per-run \restrict key. */
export async function pgDumpSchema(pgDump: string, url: string): Promise<string> {
  const { stdout } = await run(pgDump, ['--schema-only', '--no-owner', '--no-privileges', '--exclude-table=mikro_orm_migrations*', '--dbname', url], { maxBuffer: 64 << 20 });
  return stdout.replace(/^\\(un)?restrict .*$/gm, '');
}

/**
 * The same schema read from the catalog, for servers without a matching pg_dump: tables and
 * composite types with their columns in order, constraints, indexes, sequences, functions
 * and triggers of the `public` schema, each as PostgreSQL itself prints it.
 */
export async function catalogSchema(url: string): Promise<string[]> {
  const q = `
    select 'column ' || c.relname || ' (' || c.relkind::text || c.relpersistence::text || ') ' || a.attnum || ' ' || a.attname || ' ' ||
           format_type(a.atttypid, a.atttypmod) || case when a.attnotnull then ' not null' else '' end ||
           coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') || coalesce(' identity ' || nullif(a.attidentity::text, ''), '') as line
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
     where n.nspname = 'public' and c.relkind in ('r', 'c', 'p', 'v', 'm') and c.relname not like 'mikro_orm_migrations%'
    union all
    select 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
      from pg_constraint where connamespace = 'public'::regnamespace and conrelid <> 0 and conrelid::regclass::text not like 'mikro_orm_migrations%'
    union all
    select 'index ' || indexdef from pg_indexes where schemaname = 'public' and tablename not like 'mikro_orm_migrations%'
    union all
    select 'sequence ' || sequencename || ' ' || data_type || ' ' || increment_by || ' ' || cache_size
      from pg_sequences where schemaname = 'public' and sequencename not like 'mikro_orm_migrations%'
    union all
    select 'function ' || pg_get_functiondef(p.oid) from pg_proc p where p.pronamespace = 'public'::regnamespace
    union all
    select 'trigger ' || pg_get_triggerdef(t.oid) from pg_trigger t join pg_class c on c.oid = t.tgrelid
     where c.relnamespace = 'public'::regnamespace and not t.tgisinternal
     order by 1`;
  return withClient(url, async (c) => (await c.query<{ line: string }>(q)).rows.map((r) => r.line));
}
