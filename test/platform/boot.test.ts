import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/process';
import { assertReachable } from '../../src/db/embedded';

const ROOT = path.resolve(__dirname, '../..');

/** Runs `src/main.ts` as `npm start` does and resolves with its exit code and output. */
function runService(env: Record<string, string | undefined>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

function postmasterAlive(dir: string): boolean {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return false;
  try {
    process.kill(Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]), 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start exits non-zero when the service cannot boot', () => {
  const dir = path.resolve(ROOT, '.data', `boot-test-pg-${process.pid}`);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('with DATABASE_URL pointing at no server', async () => {
    const closed = await freePort();
    const { code, out } = await runService({ DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/none`, PORT: String(await freePort()) });
    expect(code, out).not.toBe(0);
    expect(code, out).not.toBeNull();
  }, 90_000);

  it('with the embedded database, when its port is taken: exit 1, and the embedded server is stopped', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, () => resolve()));
    const taken = (blocker.address() as net.AddressInfo).port;
    try {
      const { code, out } = await runService({
        DATABASE_URL: undefined,
        REDIS_URL: undefined,
        EMBEDDED_PG_DIR: dir,
        EMBEDDED_PG_PORT: String(await freePort()),
        PORT: String(taken),
      });
      expect(code, out).toBe(1);
      // It did start the embedded server (the cluster exists) and stopped it on the way out.
      expect(fs.existsSync(path.join(dir, 'PG_VERSION'))).toBe(true);
      for (let i = 0; i < 100 && postmasterAlive(dir); i++) await new Promise((r) => setTimeout(r, 100));
      expect(postmasterAlive(dir)).toBe(false);
    } finally {
      blocker.close();
    }
  }, 90_000);
});

describe('the embedded database under a folder its OS user cannot enter', () => {
  const top = path.resolve(ROOT, '.data', `boot-test-0700-${process.pid}`);
  afterAll(() => fs.rmSync(top, { recursive: true, force: true }));

  // As root (CI), PostgreSQL runs as the OS user postgres, which cannot enter a 0700 folder of root's.
  it.runIf(process.getuid?.() === 0)('npm start says which folder and what to do, not initdb\'s error, and exits 1', async () => {
    fs.mkdirSync(path.join(top, 'inner'), { recursive: true });
    fs.chmodSync(top, 0o700);
    const { code, out } = await runService({
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      EMBEDDED_PG_DIR: path.join(top, 'inner', 'pg'),
      EMBEDDED_PG_PORT: String(await freePort()),
      PORT: String(await freePort()),
    });
    expect(code, out).toBe(1);
    expect(out).toContain(`configuration error: the embedded PostgreSQL cannot use ${path.join(top, 'inner', 'pg')}`);
    expect(out).toContain(`cannot enter ${top} (mode 0700)`);
    expect(out).toContain('EMBEDDED_PG_DIR=');
    expect(out).toContain(`chmod o+x ${top})`);
    expect(out).not.toMatch(/initdb|\n\s+at /); // neither initdb's message nor a stack trace
    expect(fs.existsSync(path.join(top, 'inner', 'pg'))).toBe(false);
  }, 90_000);

  it('judges a folder by the bits of the class the user is in: owner, else group, else others', () => {
    const dir = path.join(top, 'bits');
    fs.mkdirSync(path.join(dir, 'x'), { recursive: true });
    const { uid, gid } = fs.statSync(dir);
    const stranger = { uid: uid + 4242, gid: gid + 4242 };
    const target = path.join(dir, 'x', 'pg');
    // What it says of `dir` alone: the folders above it (the checkout's own) are not this test's.
    const verdict = (ids: { uid?: number; gid?: number }) => {
      try {
        assertReachable(target, ids);
        return 'enters';
      } catch (err) {
        const message = (err as Error).message;
        const at = message.indexOf(`${dir} (mode `);
        return at < 0 ? 'enters' : `blocked ${message.slice(at + dir.length + 7, at + dir.length + 11)}`;
      }
    };
    fs.chmodSync(dir, 0o701);
    expect(verdict(stranger)).toBe('enters');
    fs.chmodSync(dir, 0o770); // group and owner may, others may not
    expect(verdict(stranger)).toBe('blocked 0770');
    expect(verdict({ uid: stranger.uid, gid })).toBe('enters');
    fs.chmodSync(dir, 0o077); // the owner's own bits decide for the owner, even when others may
    expect(verdict({ uid, gid: stranger.gid })).toBe('blocked 0077');
    expect(() => assertReachable(target, {})).not.toThrow(); // not root: PostgreSQL runs as this user
    fs.chmodSync(dir, 0o755);
  });
});
