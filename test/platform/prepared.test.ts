import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallerBudget, callerScope, installCallerBudget } from '../../src/db/caller-budget';
import { openOrm } from '../../src/db/orm';
import { prepared, statementOf } from '../../src/db/prepared';
import { classify } from '../../src/errors/classify';
import { testDatabaseUrl } from '../helpers/database';

/**
 * Named statements (src/db/prepared.ts) run on the ORM's own connections and fail exactly as
 * `em.execute` fails: the same MikroORM exception classes and the same classification, with
 * the pool's per-connection statement and lock timeouts and the per-caller connection cap.
 * Each case runs the same SQL both ways and compares.
 */
let orm: MikroORM;
let budget: CallerBudget;
const em = () => orm.em.fork() as EntityManager;

beforeAll(async () => {
  orm = (await openOrm(testDatabaseUrl(), 3, false, { statementMs: 600, lockMs: 200 })) as MikroORM;
  budget = new CallerBudget(1, 300);
  installCallerBudget(orm, budget);
});
afterAll(async () => {
  await em().execute('drop table if exists prepared_lock_probe, prepared_unique_probe');
  await orm.close(true);
});

/** The error `run` rejects with. */
async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

/** Both paths fail with the same MikroORM exception class and the same classification. */
function expectSame(viaPrepared: unknown, viaExecute: unknown) {
  expect(viaPrepared).toBeInstanceOf(DriverException);
  expect((viaPrepared as object).constructor).toBe((viaExecute as object).constructor);
  expect(classify(viaPrepared)).toEqual(classify(viaExecute));
}

describe('statementOf', () => {
  it('numbers `?` placeholders once per text and names a statement by its text', () => {
    const a = statementOf('select ? as a, ? as b');
    expect(a.text).toBe('select $1 as a, $2 as b');
    expect(statementOf('select ? as a, ? as b')).toBe(a);
    expect(statementOf('select $1 as a').text).toBe('select $1 as a');
    expect(statementOf('select ? as c').name).not.toBe(a.name);
    expect(a.name.length).toBeLessThan(64); // PostgreSQL's identifier limit
    expect(() => statementOf('select ?? from t')).toThrow(/identifier/);
  });
});

describe('prepared statements on the ORM connections', () => {
  it('returns the rows with bound parameters, outside and inside a transaction, as a named statement of the connection', async () => {
    const sql = 'select ?::int + 1 as n, ?::text as s';
    expect((await prepared<{ n: number; s: string }>(em(), sql, [41, "it's"])).rows).toEqual([{ n: 42, s: "it's" }]);
    await em().transactional(async (tx) => {
      expect((await prepared<{ n: number }>(tx, sql, [1, 'x'])).rows[0].n).toBe(2);
      // Same connection: the transaction's statement is listed among its prepared statements.
      const listed = await tx.execute<{ name: string }[]>('select name from pg_prepared_statements where name = ?', [statementOf(sql).name]);
      expect(listed).toHaveLength(1);
    });
  });

  it('replan: sent unnamed, planned for its values at every call: no plan of it stays on the connection', async () => {
    await em().transactional(async (tx) => {
      await tx.execute('create temporary table replan_probe (id int primary key, k text) on commit drop');
      await tx.execute('create index on replan_probe (k)');
      const named = 'select id from replan_probe where k = any(?::text[]) order by id';
      const each = 'select id from replan_probe where k = any(?::text[]) order by id -- replanned';
      // While the table is empty: past PostgreSQL's five custom plans, a named statement may settle on a generic one.
      for (let i = 0; i < 7; i++) {
        expect((await prepared(tx, named, [['a']])).rows).toEqual([]);
        expect((await prepared(tx, each, [['a']], 'replan')).rows).toEqual([]);
      }
      await tx.execute("insert into replan_probe select i, 'k' || i from generate_series(1, 20000) i");
      expect((await prepared<{ id: number }>(tx, each, [['k7', 'k19999']], 'replan')).rows).toEqual([{ id: 7 }, { id: 19999 }]);
      const cached = await tx.execute<{ statement: string; generic_plans: string; custom_plans: string }[]>(
        "select statement, generic_plans, custom_plans from pg_prepared_statements where statement like '%replan_probe%'",
      );
      // The named statement is the connection's, with the plans it ran; the replanned one left nothing to reuse.
      expect(cached.map((c) => c.statement)).toEqual([statementOf(named).text]);
      expect(Number(cached[0].generic_plans) + Number(cached[0].custom_plans)).toBe(7);
    });
  });

  it('a statement over the pool statement_timeout (57014) is cancelled and classified as em.execute’s: 503, try again', async () => {
    const viaPrepared = await failure(() => prepared(em(), 'select pg_sleep(?)', [2]));
    const viaExecute = await failure(() => em().execute('select pg_sleep(?)', [2]));
    expectSame(viaPrepared, viaExecute);
    expect(classify(viaPrepared)).toMatchObject({ code: 'UNAVAILABLE', status: 503, retryAfter: 1 });
    expect(classify(viaPrepared).detail).toMatch(/longer than the database allows/);
  });

  it('a lock wait over the pool lock_timeout (55P03) is classified the same either way: 503, locked', async () => {
    const locker = new Client({ connectionString: testDatabaseUrl() });
    await locker.connect();
    try {
      await locker.query('create table if not exists prepared_lock_probe (id int primary key)');
      await locker.query('insert into prepared_lock_probe values (1) on conflict do nothing');
      await locker.query('begin');
      await locker.query('select id from prepared_lock_probe where id = 1 for update');
      const sql = 'select id from prepared_lock_probe where id = ? for update';
      const viaPrepared = await failure(() => em().transactional((tx) => prepared(tx, sql, [1])));
      const viaExecute = await failure(() => em().transactional((tx) => tx.execute(sql, [1])));
      expectSame(viaPrepared, viaExecute);
      // MikroORM's PostgreSQL converter has no class for 55P03: a DriverException with the code, both ways.
      expect((viaPrepared as { code?: string }).code).toBe('55P03');
      expect(classify(viaPrepared)).toMatchObject({ code: 'UNAVAILABLE', status: 503 });
      expect(classify(viaPrepared).detail).toMatch(/locked/);
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
  });

  it('a unique violation (23505) is a UniqueConstraintViolationException naming the column, as with em.execute', async () => {
    await em().execute('create table if not exists prepared_unique_probe (id int primary key, external_id text unique)');
    await em().execute("insert into prepared_unique_probe values (1, 'taken') on conflict do nothing");
    const sql = 'insert into prepared_unique_probe (id, external_id) values (?, ?)';
    const viaPrepared = await failure(() => em().transactional((tx) => prepared(tx, sql, [2, 'taken'])));
    const viaExecute = await failure(() => em().transactional((tx) => tx.execute(sql, [3, 'taken'])));
    expectSame(viaPrepared, viaExecute);
    expect(viaPrepared).toBeInstanceOf(UniqueConstraintViolationException);
    expect(classify(viaPrepared)).toMatchObject({ code: 'CONFLICT', status: 409, issues: [{ path: ['externalId'] }] });
    // Outside a transaction too (the statement runs on a pool connection of its own).
    expectSame(await failure(() => prepared(em(), sql, [4, 'taken'])), viaExecute);
  });

  it('a malformed value (22P02) is a 400 either way', async () => {
    const sql = 'select 1 from groups where id = ?';
    expectSame(await failure(() => prepared(em(), sql, ['not-a-uuid'])), await failure(() => em().execute(sql, ['not-a-uuid'])));
  });

  it('takes its connection through the per-caller cap: a caller over it waits, then is refused as with em.execute; the slot comes back', async () => {
    const key = `caller-${randomUUID()}`;
    const sql = 'select ?::int as n';
    await callerScope.run({ key }, async () => {
      // Two reads at once share the caller's single slot in turn.
      const both = await Promise.all([prepared(em(), sql, [1]), prepared(em(), sql, [2])]);
      expect(both.map((r) => r.rows[0])).toEqual([{ n: 1 }, { n: 2 }]);
      expect(budget.held(key)).toBe(0);
      // A transaction holds the slot: a read outside it waits, then fails like em.execute.
      let viaPrepared: unknown;
      let viaExecute: unknown;
      await em().transactional(async () => {
        viaPrepared = await failure(() => prepared(em(), sql, [3]));
        viaExecute = await failure(() => em().execute(sql, [3]));
      });
      expectSame(viaPrepared, viaExecute);
      expect(classify(viaPrepared)).toMatchObject({ code: 'UNAVAILABLE', status: 503 });
      expect(budget.held(key)).toBe(0);
      expect((await prepared(em(), sql, [4])).rows[0]).toEqual({ n: 4 });
    });
    expect(budget.held(key)).toBe(0);
  });
});
