import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inCommunity } from '../../src/db/tenancy';
import { deferStatement, holdStatement, prepared } from '../../src/db/prepared';
import { ROW_SECURITY_MODES, startTestApp, type TestApp, type Tenant } from '../helpers/app';

/**
 * A transaction's BEGIN goes in its first statement's pipeline (src/db/tenancy.ts, `pending`):
 * one round trip less, the same transaction. A deferred statement (deferStatement, `held`) goes
 * in the next statement's or the COMMIT's, and so does a held one whose rows are read later
 * (holdStatement). One ORM connection (DB_POOL_MAX=1), whose
 * round trips (ReadyForQuery messages) the tests count on the wire.
 */
describe.each(ROW_SECURITY_MODES)('deferred BEGIN, row-level security %s', (_mode, env) => {
  let app: TestApp;
  let t: Tenant;
  let trips = 0;

  beforeAll(async () => {
    app = await startTestApp({ DB_POOL_MAX: '1', ...env });
    t = await app.tenant();
    const client = app.runtime.orm.em.getConnection().getKnex().client as {
      acquireConnection(): Promise<{ connection: { on(event: string, listener: () => void): void } }>;
      releaseConnection(c: unknown): Promise<void>;
    };
    const connection = await client.acquireConnection();
    connection.connection.on('readyForQuery', () => trips++);
    await client.releaseConnection(connection);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  const em = () => app.runtime.orm.em.fork() as EntityManager;
  const asTenant = <T>(work: () => Promise<T>) => inCommunity(t.communityId, work);
  /** The round trips `work` took. */
  const tripsOf = async (work: () => Promise<unknown>) => {
    const before = trips;
    await work();
    return trips - before;
  };

  it('a transaction of one statement takes two round trips (the statement with its BEGIN, then COMMIT), and is one transaction', async () => {
    const sql = 'select txid_current() as a, txid_current() as b, now() = statement_timestamp() as first';
    await asTenant(() => em().transactional((tx) => prepared(tx, sql, []))); // parsed once on the connection
    let rows: { a: string; b: string; first: boolean }[] = [];
    const n = await tripsOf(() => asTenant(() => em().transactional(async (tx) => {
      rows = (await prepared<{ a: string; b: string; first: boolean }>(tx, sql, [])).rows;
      const again = (await prepared<{ a: string }>(tx, 'select txid_current()::text as a, $1::int as x', [1])).rows[0];
      expect(again.a).toBe(rows[0].a); // the same transaction
    })));
    expect(rows[0].a).toBe(rows[0].b);
    expect(n).toBe(3); // statement + BEGIN, the second statement, COMMIT
  });

  it('a transaction with no statement sends nothing', async () => {
    expect(await tripsOf(() => asTenant(() => em().transactional(async () => undefined)))).toBe(0);
  });

  it('the first statement runs inside the transaction: its effect is rolled back with it', async () => {
    const name = `rolled-back-${Math.random()}`;
    await expect(
      asTenant(() => em().transactional(async (tx) => {
        await tx.execute(`insert into groups (id, community_id, name, created_at, modified_at) values (gen_random_uuid(), ?, ?, now(), now())`, [t.communityId, name]);
        throw new Error('roll back');
      })),
    ).rejects.toThrow('roll back');
    const left = await asTenant(() => em().execute<{ n: number }[]>('select count(*)::int as n from groups where name = ?', [name]));
    expect(left).toEqual([{ n: 0 }]);
  });

  it('a first statement that fails leaves the transaction aborted, as PostgreSQL does', async () => {
    const codes: string[] = [];
    await asTenant(() => em().transactional(async (tx) => {
      for (const sql of ['select 1 / (0 * ?::int)', 'select ?::int as one']) {
        await prepared(tx, sql, [1]).catch((err: { code?: string }) => codes.push(String(err.code)));
      }
    })).catch(() => undefined);
    // 22012 division by zero, then 25P02: in a failed transaction (a statement outside one would have answered).
    expect(codes).toEqual(['22012', '25P02']);
  });

  it('a named statement not parsed on the connection yet gets its own round trip after the BEGIN, once', async () => {
    const sql = `select ?::int + ${Math.floor(Math.random() * 1e6)} as n`;
    const once = () => asTenant(() => em().transactional((tx) => prepared(tx, sql, [1])));
    expect(await tripsOf(once)).toBe(3); // BEGIN, Parse + statement, COMMIT
    expect(await tripsOf(once)).toBe(2); // the statement with its BEGIN, COMMIT
  });

  describe('deferStatement', () => {
    const insert = 'insert into groups (id, community_id, name, created_at, modified_at) values (gen_random_uuid(), ?, ?, now(), now())';
    const named = (name: string) => asTenant(() => em().execute<{ n: number }[]>('select count(*)::int as n from groups where name = ?', [name]));
    const warm = () => asTenant(() => em().transactional(async (tx) => {
      await prepared(tx, 'select ?::int as one', [1]);
      await prepared(tx, insert, [t.communityId, 'warm']); // parsed on the connection: it can be held from now on
      await prepared(tx, 'select count(*)::int as n from groups where name = ?', ['warm']); // and this can carry it
    }));

    it('goes with the COMMIT: a transaction of one statement and a deferred one takes two round trips, and both commit', async () => {
      await warm();
      const name = `held-${Math.random()}`;
      const n = await tripsOf(() => asTenant(() => em().transactional(async (tx) => {
        await prepared(tx, 'select ?::int as one', [1]);
        await deferStatement(tx, insert, [t.communityId, name]);
      })));
      expect(n).toBe(2);
      expect(await named(name)).toEqual([{ n: 1 }]);
    });

    it('runs before the next statement of its transaction, in that statement\'s round trip', async () => {
      await warm();
      const name = `held-${Math.random()}`;
      let seen: unknown;
      const n = await tripsOf(() => asTenant(() => em().transactional(async (tx) => {
        await prepared(tx, 'select ?::int as one', [1]);
        await deferStatement(tx, insert, [t.communityId, name]);
        seen = (await prepared<{ n: number }>(tx, 'select count(*)::int as n from groups where name = ?', [name])).rows;
      })));
      expect(seen).toEqual([{ n: 1 }]);
      expect(n).toBe(3); // first statement with BEGIN; held + count; COMMIT
    });

    it('a failing deferred statement fails the COMMIT with its error; the whole transaction is rolled back and the connection is clean', async () => {
      await warm();
      const name = `held-${Math.random()}`;
      const error = await asTenant(() => em().transactional(async (tx) => {
        await prepared(tx, insert, [t.communityId, name]);
        await deferStatement(tx, 'select 1 / (0 * ?::int)', [1]).catch(() => undefined); // parsed now (ran at once)
      })).then(() => null, (err: { code?: string }) => err.code);
      expect(error).toBe('22012'); // the statement was new on the connection: it ran at once and failed the transaction
      const failed = await asTenant(() => em().transactional(async (tx) => {
        await prepared(tx, insert, [t.communityId, name]);
        await deferStatement(tx, 'select 1 / (0 * ?::int)', [1]);
      })).then(() => null, (err: { code?: string }) => err.code);
      expect(failed).toBe('22012');
      expect(await named(name)).toEqual([{ n: 0 }]);
      // Not left in a failed transaction: the next statement on the (only) connection runs.
      expect((await asTenant(() => prepared<{ one: number }>(em(), 'select ?::int as one', [1]))).rows).toEqual([{ one: 1 }]);
    });

    it('a ROLLBACK drops it: it never runs', async () => {
      await warm();
      const name = `held-${Math.random()}`;
      await asTenant(() => em().transactional(async (tx) => {
        await prepared(tx, 'select ?::int as one', [1]);
        await deferStatement(tx, insert, [t.communityId, name]);
        throw new Error('roll back');
      })).catch(() => undefined);
      expect(await named(name)).toEqual([{ n: 0 }]);
    });
  });

  describe('holdStatement', () => {
    const check = 'select ?::int as n, ?::text as label, null::text as nothing, true as yes';
    const warm = () => asTenant(() => em().transactional(async (tx) => {
      await prepared(tx, check, [0, 'warm']); // parsed on the connection: it can be held from now on
      await prepared(tx, 'select ?::int as one', [1]);
    }));

    it('goes in front of the next statement, in its round trip; its rows are read after, as text', async () => {
      await warm();
      let rows: unknown;
      const n = await tripsOf(() => asTenant(() => em().transactional(async (tx) => {
        const read = await holdStatement(tx, check, [7, 'seven']);
        expect((await prepared(tx, 'select ?::int as one', [1])).rows).toEqual([{ one: 1 }]);
        rows = await read();
      })));
      expect(rows).toEqual([['7', 'seven', null, 't']]);
      expect(n).toBe(2); // BEGIN + held + statement; COMMIT
    });

    it('goes on its own round trip when read before any other statement took it', async () => {
      await warm();
      let rows: unknown;
      const n = await tripsOf(() => asTenant(() => em().transactional(async (tx) => {
        const read = await holdStatement(tx, check, [8, 'eight']);
        rows = await read();
        expect(await read()).toEqual(rows); // read again: nothing more is sent
      })));
      expect(rows).toEqual([['8', 'eight', null, 't']]);
      expect(n).toBe(2); // BEGIN + held; COMMIT
    });

    it('fails the statement it went with, and its reader, with its own error', async () => {
      await warm();
      await asTenant(() => em().transactional((tx) => prepared(tx, 'select 1 / (0 * ?::int) as n', [1]))).catch(() => undefined); // parsed
      const codes: string[] = [];
      await asTenant(() => em().transactional(async (tx) => {
        const read = await holdStatement(tx, 'select 1 / (0 * ?::int) as n', [1]);
        await prepared(tx, 'select ?::int as one', [1]).catch((err: { code?: string }) => codes.push(String(err.code)));
        await read().catch((err: { code?: string }) => codes.push(String(err.code)));
      })).catch(() => undefined);
      expect(codes).toEqual(['22012', '22012']);
      expect((await asTenant(() => prepared<{ one: number }>(em(), 'select ?::int as one', [1]))).rows).toEqual([{ one: 1 }]);
    });

    it('a veto on its rows fails the statement that carried it: the transaction goes no further', async () => {
      await warm();
      const name = `vetoed-${Math.random()}`;
      const insert = 'insert into groups (id, community_id, name, created_at, modified_at) values (gen_random_uuid(), ?, ?, now(), now())';
      await asTenant(() => em().transactional((tx) => prepared(tx, insert, [t.communityId, 'warm-veto'])));
      let seen: unknown;
      const n = await tripsOf(async () => {
        const outcome = await asTenant(() => em().transactional(async (tx) => {
          const read = await holdStatement(tx, check, [9, 'nine'], (rows) => (rows[0][0] === '9' ? new Error('vetoed') : undefined));
          await prepared(tx, insert, [t.communityId, name]);
          seen = await read();
        })).then(() => 'committed', (err: Error) => err.message);
        expect(outcome).toMatch(/vetoed/);
      });
      expect(seen).toBeUndefined();
      expect(n).toBe(2); // BEGIN + held + insert; ROLLBACK
      const left = await asTenant(() => em().execute<{ n: number }[]>('select count(*)::int as n from groups where name = ?', [name]));
      expect(left).toEqual([{ n: 0 }]);
    });

    it('a ROLLBACK drops it: it never runs, and a late reader hears so', async () => {
      await warm();
      const name = `held-${Math.random()}`;
      const insert = 'insert into groups (id, community_id, name, created_at, modified_at) values (gen_random_uuid(), ?, ?, now(), now()) returning 1';
      await asTenant(() => em().transactional((tx) => prepared(tx, insert, [t.communityId, 'warm-held'])));
      let read: (() => Promise<unknown>) | undefined;
      await asTenant(() => em().transactional(async (tx) => {
        read = await holdStatement(tx, insert, [t.communityId, name]);
        throw new Error('roll back');
      })).catch(() => undefined);
      await expect(read!()).rejects.toThrow();
      const left = await asTenant(() => em().execute<{ n: number }[]>('select count(*)::int as n from groups where name = ?', [name]));
      expect(left).toEqual([{ n: 0 }]);
    });

    it('a statement new on the connection runs at once; its rows read alike', async () => {
      const sql = `select ?::int + ${Math.floor(Math.random() * 1e6)} - ?::int as n, null::int as none`;
      let rows: unknown;
      await asTenant(() => em().transactional(async (tx) => {
        const read = await holdStatement(tx, sql, [5, 0]);
        rows = await read();
      }));
      expect((rows as string[][])[0][1]).toBeNull();
      expect(Number((rows as string[][])[0][0])).toBeGreaterThan(4);
    });
  });

  it('a create with an Idempotency-Key takes two round trips: BEGIN, lookup and the write; the stored answer and COMMIT', async () => {
    const create = (key: string) => app.http.post('/api/v1/groups').set('X-API-Key', t.key).set('Idempotency-Key', key).send({ name: `Keyed ${key}` });
    expect((await create(`warm-${Math.random()}`)).status).toBe(201); // the statements parsed on the connection
    const key = `k-${Math.random()}`;
    let status = 0;
    expect(await tripsOf(async () => (status = (await create(key)).status))).toBe(2);
    expect(status).toBe(201);
    // The replay: the lookup with the speculative write, which is rolled back; nothing is created twice.
    const again = await create(key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const made = await asTenant(() => em().execute<{ n: number }[]>('select count(*)::int as n from groups where name = ?', [`Keyed ${key}`]));
    expect(made).toEqual([{ n: 1 }]);
  });

  it('requests that write in transactions still answer as before', async () => {
    const g = await app.http.post('/api/v1/groups').set('X-API-Key', t.key).set('Idempotency-Key', `k-${Math.random()}`).send({ name: 'Deferred' });
    expect(g.status).toBe(201);
    const m = await app.http.post('/api/v1/members').set('X-API-Key', t.key).send({ firstName: 'D', lastName: 'B' });
    expect(m.status).toBe(201);
    const ms = await app.http.post(`/api/v1/groups/${g.body.id}/memberships`).set('X-API-Key', t.key).send({ memberId: m.body.id });
    expect(ms.status).toBe(201);
    expect((await app.http.get(`/api/v1/groups/${g.body.id}`).set('X-API-Key', t.key)).body.membershipCount).toBe(1);
  });
});
