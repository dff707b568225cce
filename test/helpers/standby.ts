import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded';
import { openOrm } from '../../src/db/orm';
import { freePort } from './process';

const run = promisify(execFile);

export interface Replicated {
  /** The primary's database, migrated. */
  primaryUrl: string;
  /** The same database on the streaming standby. */
  standbyUrl: string;
  /** Holds `primary/` and `standby/`, the two data directories. */
  dataDir: string;
  stopStandby(): Promise<void>;
  startStandby(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A primary and a real streaming standby of it, both from the embedded PostgreSQL binaries
 * (whatever DATABASE_URL says: the test needs a primary it may stop and copy). The standby is
 * a file copy of the primary's data directory taken after a clean shutdown, with
 * `standby.signal` and `primary_conninfo`; `applyDelay` (recovery_min_apply_delay) makes it lag.
 */
export async function startReplicated(applyDelay: string): Promise<Replicated> {
  const base = path.resolve('.data', `replicas-${process.pid}-${Date.now()}`);
  const primaryDir = path.join(base, 'primary');
  const standbyDir = path.join(base, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const startPrimary = () => startEmbeddedPostgres({ dir: primaryDir, port: primaryPort, fast: true, persistent: true });
  let primary: EmbeddedServer | undefined = await startPrimary();
  let standby: EmbeddedServer | undefined;
  try {
    const primaryUrl = await ensureDatabase(primary.url, 'replicated');
    const orm = await openOrm(primaryUrl, 2, true);
    await orm.close(true);
    await primary.stop();
    fs.cpSync(primaryDir, standbyDir, { recursive: true });
    for (const f of ['postmaster.pid', 'postmaster.opts']) fs.rmSync(path.join(standbyDir, f), { force: true });
    fs.chmodSync(standbyDir, 0o700); // PostgreSQL refuses a data directory others may read
    fs.writeFileSync(path.join(standbyDir, 'standby.signal'), '');
    fs.appendFileSync(
      path.join(standbyDir, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres password=postgres'\nrecovery_min_apply_delay = '${applyDelay}'\n`,
    );
    if (process.getuid?.() === 0) await run('chown', ['-R', 'postgres:postgres', standbyDir]);
    primary = await startPrimary();
    const startStandby = async () => {
      standby = await startEmbeddedPostgres({ dir: standbyDir, port: standbyPort, fast: true, persistent: true });
    };
    await startStandby();
    const standbyUrl = new URL(primaryUrl);
    standbyUrl.port = String(standbyPort);
    return {
      primaryUrl,
      standbyUrl: standbyUrl.toString(),
      dataDir: base,
      stopStandby: async () => {
        await standby?.stop();
        standby = undefined;
      },
      startStandby,
      close: async () => {
        await standby?.stop();
        await primary?.stop();
        fs.rmSync(base, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await standby?.stop();
    await primary?.stop();
    fs.rmSync(base, { recursive: true, force: true });
    throw err;
  }
}
