import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueryResultRow } from 'pg';
import { withConnection, type OrmConnection } from './driver-pool';
import { currentReplica, replicaFailed } from './replicas';
import { DEFERRED, type HeldRows, type Watch } from './tenancy';

/**
 * Named (prepared) statements through the ORM's own pool: the hot reads of src/db/lean.ts
 * and the idempotency statements (pagesPerOwner in src/db/sql.ts selects `m.*` and stays
 * unprepared: a column added by a migration would break its cached statements).
 *
 * MikroORM's `em.execute(sql, params)` inlines every parameter into fresh SQL text
 * (`platform.formatQuery`), so PostgreSQL parses and plans each call afresh. A named pg
 * statement is parsed once per connection, and its plan can be reused (PostgreSQL's
 * plan cache: custom plans for the first executions, then a generic plan when it is not
 * dearer); knex's query building is skipped too (docs/performance.md, "Decisions").
 *
 * The connection is the ORM's: inside a transaction (`em.getTransactionContext()`) the
 * transaction's own; outside one a connection taken from the ORM's knex client (the read
 * scope's replica's, src/db/replicas.ts, else the primary's; a statement that fails on a
 * replica runs again on the primary) and given back at once, exactly as `em.execute` does. Taking it through the driver-pool adapter
 * (`withConnection`, src/db/driver-pool.ts) keeps the per-caller connection cap (src/db/caller-budget.ts) and the
 * pool's per-connection `statement_timeout` / `lock_timeout` (start-up options of every
 * connection, src/db/orm.ts). Errors go through MikroORM's exception converter, so they
 * are the same DriverException subclasses `em.execute` throws (`DeadlockException`,
 * `UniqueConstraintViolationException`, ...) and classify (src/errors/classify.ts) and the
 * retry loops treat both paths alike. The statement is announced like any of the ORM's
 * (knex's `query` event), so SQL counts and logs still see it.
 */

/** A statement's text in `$n` form and its name. */
export interface Statement {
  name: string;
  text: string;
}

const statements = new Map<string, Statement>();
/** Texts come from code (a finite set of shapes); the cap only guards against a shape built from data by mistake. */
const MAX_CACHED = 5000;

/**
 * The named statement of `sql`, built once per text: `?` placeholders (knex's and
 * MikroORM's style) become `$1`, `$2`, ...; a text already in `$n` form is kept. The name
 * is a hash of the final text (pg refuses one name with two texts on a connection).
 */
export function statementOf(sql: string): Statement {
  let s = statements.get(sql);
  if (!s) {
    if (sql.includes('??')) throw new Error('prepared: `??` (identifier bindings) is not supported');
    let n = 0;
    const text = sql.replace(/\?/g, () => `$${++n}`);
    s = { name: `s_${createHash('sha1').update(text).digest('base64url').slice(0, 22)}`, text };
    if (statements.size < MAX_CACHED) statements.set(sql, s);
  }
  return s;
}

/**
 * How PostgreSQL plans a statement:
 * - `cached`: a named statement, its plan cache decides (custom plans for the first five runs,
 *   then a generic plan when it is not dearer; for a page with `limit $n offset $m` it never is).
 * - `replan`: sent unnamed, so PostgreSQL plans it for its values at every call (the values stay
 *   bound parameters): for a statement over a set of rows, whose best plan depends on how large
 *   the table and the set are. A named statement's generic plan is kept for the connection's
 *   life (until the next ANALYZE): one settled while a new community's first import found an
 *   empty table scanned the whole table for every later batch.
 * - `generic`: a named statement planned once per connection, whatever its values
 *   (`plan_cache_mode = force_generic_plan` for that statement alone, set in the same round trip
 *   by src/db/tenancy.ts; inside a transaction it is planned as `cached`). Only for a statement
 *   whose best plan is the same for every value: a community's list page in an index's order,
 *   where re-planning cost PostgreSQL more than running it (docs/performance.md, "Generic plans").
 */
export type Planning = 'cached' | 'replan' | 'generic';

/** Runs `sql` (`?` or `$n` parameters) as a named statement on em's connection (see above), planned as `planning` says. */
export async function prepared<R extends QueryResultRow>(em: EntityManager, sql: string, values: unknown[], planning: Planning = 'cached'): Promise<{ rows: R[]; rowCount: number }> {
  const trx = em.getTransactionContext();
  // Outside a transaction: the read scope's node (src/db/replicas.ts), the primary by default.
  const replica = trx ? null : currentReplica();
  if (replica) {
    try {
      return await run<R>(em, sql, values, planning, replica.connection);
    } catch (err) {
      if (!replicaFailed(replica, err)) throw em.getDriver().convertException(err as Error);
      // once more, on the primary
    }
  }
  try {
    return await run<R>(em, sql, values, planning);
  } catch (err) {
    throw em.getDriver().convertException(err as Error);
  }
}

/** How a deferred statement goes (src/db/tenancy.ts): held, and watched when its rows are wanted; raw text fields in array rows. */
interface Deferral {
  deferred: true;
  watch?: Watch;
  rowMode?: 'array';
  types?: { getTypeParser: () => (value: string) => string };
}

async function run<R extends QueryResultRow>(em: EntityManager, sql: string, values: unknown[], planning: Planning, from?: OrmConnection, deferral?: Deferral) {
  const statement = statementOf(sql);
  const { text } = statement;
  const name = planning === 'replan' ? undefined : statement.name;
  // `generic` is read by the tenancy layer's guard (src/db/tenancy.ts); pg ignores it.
  const generic = planning === 'generic' || undefined;
  const knex = em.getConnection('write').getKnex();
  return withConnection(
    em,
    async (connection) => {
      knex.emit('query', { sql: text, bindings: values, name });
      try {
        const res = await connection.query<R>({ name, text, values, generic, ...deferral } as { name?: string; text: string; values: unknown[] });
        return { rows: res.rows, rowCount: res.rowCount ?? 0, command: res.command };
      } catch (err) {
        knex.emit('query-error', err, { sql: text, bindings: values, name }); // as knex's own queries do (metrics count timeouts)
        throw err;
      }
    },
    from,
  );
}

/**
 * Runs `sql` (a named statement) in em's transaction without waiting for its answer: the
 * tenancy guard (src/db/tenancy.ts, `held`) sends it in front of the transaction's next
 * statement or its COMMIT, in that round trip, and its error is that statement's or the
 * COMMIT's (the guard rolls back a COMMIT that did not run). For a transaction's last write
 * whose rows nobody reads (an Idempotency-Key's stored answer: src/http/idempotency.ts). A
 * statement not parsed on the connection yet runs at once, as any other (its errors then come
 * from here).
 */
export async function deferStatement(em: EntityManager, sql: string, values: unknown[]): Promise<void> {
  if (!em.getTransactionContext()) throw new Error('deferStatement: only inside a transaction');
  try {
    await run(em, sql, values, 'cached', undefined, { deferred: true });
  } catch (err) {
    throw em.getDriver().convertException(err as Error);
  }
}

/** Every column as PostgreSQL sent it (text): a held statement's rows come without a row description to parse them by. */
const RAW = { getTypeParser: () => (value: string) => value };

/**
 * A statement of em's transaction whose rows are wanted, but not before the transaction's next
 * statement: the tenancy guard holds it (as `deferStatement`) and sends it in front of that
 * statement, in its round trip (docs/performance.md, "Decisions": a keyed request's lookup). The answer reads its
 * rows, each an array of the columns' text (NULL as null), once they are back; if no statement
 * took it along by then, it is sent on its own round trip at that moment. Its error is also the
 * next statement's (PostgreSQL skips the rest of a failed pipeline). `veto`, given the rows as
 * soon as they are back, may answer an error: the statement that carried the held one then fails
 * with it, so the transaction's later work is never done. For a check whose verdict
 * can wait until the transaction's first write ran, because the transaction is rolled back when
 * the verdict says no (an Idempotency-Key's lookup: src/http/idempotency.ts). A statement not
 * parsed on the connection yet, or a guard that does not hold it, runs at once (its errors then
 * come from here).
 */
export async function holdStatement(
  em: EntityManager,
  sql: string,
  values: unknown[],
  veto?: (rows: HeldRows) => Error | undefined,
): Promise<() => Promise<HeldRows>> {
  if (!em.getTransactionContext()) throw new Error('holdStatement: only inside a transaction');
  let told: Watch | undefined;
  let answered = false;
  const heard = new Promise<HeldRows>(
    (resolve, reject) =>
      (told = (err, rows) => {
        answered = true;
        if (err) return void reject(err);
        resolve(rows ?? []);
        return veto?.(rows ?? []);
      }),
  );
  heard.catch(() => undefined); // the transaction may end without asking (its rollback drops the statement)
  let res: Awaited<ReturnType<typeof run>>;
  try {
    res = await run(em, sql, values, 'cached', undefined, { deferred: true, watch: told, rowMode: 'array', types: RAW });
  } catch (err) {
    throw em.getDriver().convertException(err as Error);
  }
  // Run at once (not parsed on the connection yet): its rows are here, and no veto is asked (the caller reads them itself).
  if (res.command !== DEFERRED) return async () => res.rows as unknown as HeldRows;
  return async () => {
    try {
      // Still held (no statement went since): it goes now, alone. Its veto fails that round trip
      // (nothing else was in it); its rows, or its own error, are what `heard` holds.
      const failed = await withConnection(em, (connection) => connection.query({ text: '', values: [], flush: true } as { text: string; values: unknown[] })).then(
        () => undefined,
        (err: Error) => err,
      );
      if (failed && !answered) throw failed; // never sent
      return await heard;
    } catch (err) {
      throw em.getDriver().convertException(err as Error);
    }
  };
}

/** The rows of `prepared`, for reads. */
export async function preparedRows<R extends QueryResultRow>(em: EntityManager, sql: string, values: unknown[], planning: Planning = 'cached'): Promise<R[]> {
  return (await prepared<R>(em, sql, values, planning)).rows;
}
