import type { Pool } from 'pg';
import type { Logger } from '../logger';

/**
 * The tables whose statistics no longer describe them: a table that holds pages but was never
 * analyzed, or that has doubled (and 8 pages more) since its last ANALYZE. Its page count
 * now (`pg_relation_size`, exact at once, unlike the statistics collector's row counts) against
 * the `relpages` that ANALYZE recorded. Tables of the service's schema that this role owns
 * (ANALYZE would skip any other, with a warning, at every round).
 */
export const GROWN_TABLES = `select c.relname as "table"
   from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = current_schema() and c.relkind = 'r' and pg_has_role(c.relowner, 'USAGE')
    and pg_relation_size(c.oid) / current_setting('block_size')::int
        >= case when c.reltuples < 0 then 1 else c.relpages * 2 + 8 end
  order by 1`;

/** Seconds between two looks for grown tables, unless DB_STATISTICS_REFRESH_SECONDS says otherwise. */
export const STATISTICS_REFRESH_SECONDS = 2;

/** One instance analyzes at a time (a session advisory lock, released at the round's end); the others skip that round. */
const LOCK_KEY = `hashtext('community_api.refresh_statistics')`;

/**
 * ANALYZE of the tables that grew since their statistics were taken, every few seconds
 * (docs/performance.md, "Statistics of a growing database"). PostgreSQL makes its plans from
 * those statistics and keeps them: a connection's named statements, PL/pgSQL's statements in
 * the event triggers, and its own foreign-key checks. Autovacuum refreshes statistics only
 * after its nap (a minute) and a tenth of the table, so in a young database the plans made
 * while the tables were nearly empty stayed in use while a community grew to thousands of
 * members: each foreign-key check of a member's additional field value then took a
 * community-only index with the id as a filter, a walk of the whole community per row, and a
 * bulk of 1,000 members went from 190 ms in a community of 1,000 to 1,190 ms in one of 10,000.
 * ANALYZE also invalidates those plans, so every connection plans again from the new
 * statistics. Once a table's statistics describe it, only doubling analyzes it again:
 * for a large table, rarely, and then a sample of at most 30,000 rows read off the request path.
 *
 * Runs with the queue's connections, as the owner (ANALYZE needs the table's owner), on every
 * instance that runs a worker; requests never wait for it. Each table is analyzed in its own
 * transaction, `SKIP_LOCKED`: a table autovacuum is working on is left to the next round, at
 * once, and never waited for (a wait past `deadlock_timeout` would cancel autovacuum's vacuum).
 */
export class StatisticsRefresher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
    private readonly everyMs: number,
  ) {}

  start(): void {
    const tick = () => {
      this.running ??= this.refresh()
        .catch((err) => this.logger.warn({ err: (err as Error).message }, 'statistics refresh failed'))
        .finally(() => (this.running = undefined));
    };
    this.timer = setInterval(tick, this.everyMs);
    this.timer.unref();
  }

  /** One round: the tables analyzed (none when another instance holds the round, or none grew). */
  async refresh(): Promise<string[]> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      if (!(await client.query<{ held: boolean }>(`select pg_try_advisory_lock(${LOCK_KEY}) as "held"`)).rows[0].held) return [];
      try {
        const grown = async () => (await client.query<{ table: string }>(GROWN_TABLES)).rows.map((r) => r.table);
        const before = await grown();
        for (const table of before) {
          try {
            await client.query(`analyze (skip_locked) "${table.replaceAll('"', '""')}"`);
          } catch (err) {
            this.logger.debug({ table, err: (err as Error).message }, 'statistics refresh skipped a table');
          }
        }
        const left = new Set(before.length ? await grown() : []);
        const done = before.filter((t) => !left.has(t));
        if (done.length) this.logger.info({ tables: done }, 'statistics refreshed');
        return done;
      } finally {
        await client.query(`select pg_advisory_unlock(${LOCK_KEY})`);
      }
    } catch (err) {
      broken = err as Error;
      throw err;
    } finally {
      // A connection whose unlock may not have run is closed, not handed back holding the lock.
      client.release(broken);
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
