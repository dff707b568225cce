import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded';
import { openOrm } from '../src/db/orm';

export interface BenchDatabase {
  url: string;
  /** Where it runs, for the report. */
  label: string;
  /** CPU ms of the whole PostgreSQL server so far (embedded only: its processes are ours to read). */
  cpuMs?: () => number;
  /**
   * A copy of the database as it is now (CREATE DATABASE ... TEMPLATE: nothing may be connected
   * to it), dropped with it; undefined where the bench cannot create databases.
   */
  twin(): Promise<string | undefined>;
  close(): Promise<void>;
}

const EMBEDDED_DIR = path.resolve('.data/bench-pg');
// Not the dev service's 54329: a bench must never touch `npm start` data.
const EMBEDDED_PORT = Number(process.env.BENCH_PG_PORT || 54339);

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database per run, so every run measures the same data: on DATABASE_URL's
 * server when set, else on an embedded PostgreSQL in .data/bench-pg (fsync off, as for
 * tests: the bench measures the service, not the disk). Migrated here, before seeding.
 */
export async function openBenchDatabase(): Promise<BenchDatabase> {
  let embedded: EmbeddedServer | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    embedded = await startEmbeddedPostgres({ dir: EMBEDDED_DIR, port: EMBEDDED_PORT, fast: true });
    adminUrl = embedded.url;
  }
  const name = `capi_bench_${process.pid}`;
  await adminQuery(adminUrl, `drop database if exists "${name}" with (force)`);
  let url: string;
  let created = true;
  try {
    url = await ensureDatabase(adminUrl, name);
  } catch (err) {
    // A role without CREATEDB: use the given database as it is (the seed adds its own community).
    if (!process.env.DATABASE_URL) throw err;
    console.warn(`bench: cannot create a database (${(err as Error).message}); using DATABASE_URL as it is`);
    url = adminUrl;
    created = false;
  }
  const orm = await openOrm(url, 2, true);
  await orm.close(true);
  const label = embedded ? `embedded PostgreSQL (${EMBEDDED_DIR}, fsync off)` : 'DATABASE_URL server';
  const postmaster = embedded ? Number(fs.readFileSync(path.join(EMBEDDED_DIR, 'postmaster.pid'), 'utf8').split('\n')[0]) : 0;
  return {
    url,
    label,
    cpuMs: embedded ? () => treeCpuMs(postmaster) : undefined,
    async twin() {
      if (!created) return undefined;
      await adminQuery(adminUrl!, `drop database if exists "${name}_twin" with (force)`);
      await adminQuery(adminUrl!, `create database "${name}_twin" template "${name}"`);
      const twin = new URL(url);
      twin.pathname = `/${name}_twin`;
      return twin.toString();
    },
    async close() {
      if (created) await adminQuery(adminUrl!, `drop database if exists "${name}_twin" with (force)`).catch(() => undefined);
      if (created) await adminQuery(adminUrl!, `drop database if exists "${name}" with (force)`).catch(() => undefined);
      await embedded?.stop();
    },
  };
}

/** utime + stime of `pid` and its children, live and reaped (PostgreSQL: the postmaster and its backends), ms. */
export function treeCpuMs(pid: number): number {
  let ticks = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[1]) === pid) ticks += Number(f[11]) + Number(f[12]);
      // The postmaster's own time and, in cutime + cstime, that of every backend it has reaped:
      // without them a backend that exits (a pool closing an idle connection) takes its CPU
      // out of the sum, and an arm measured meanwhile got a negative share.
      if (Number(entry) === pid) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks * 10; // CLK_TCK 100
}

/** The server's version string, for the report. */
export async function serverVersion(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string }>("select current_setting('server_version') as v");
    return rows[0].v;
  } finally {
    await client.end();
  }
}
