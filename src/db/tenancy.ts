import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import { createRequire } from 'node:module';
import { callerScope } from './caller-budget';
import { interceptPool, type DriverConnection } from './driver-pool';

/**
 * The database's own tenancy layer (docs/security.md, "Row-level security"): every tenant
 * table has a policy `community_id = app.community_id` (Migration20261124400000), enforced on
 * everyone but a role with BYPASSRLS. The service logs in as the owner (migrations,
 * graphile-worker's own pool, the gate's pool), but every connection of the ORM's pools is
 * switched to SERVICE_ROLE, which owns nothing and lacks BYPASSRLS, as soon as it is first
 * handed out (`set role`, once per connection): by default a statement reads no tenant row.
 * Then, per statement, in the same round trip:
 *
 * - Inside a request scope (callerScope, src/db/caller-budget.ts) with a community: the
 *   transaction's BEGIN is sent as `BEGIN; select set_config('app.community_id', <community>,
 *   true)`; a statement outside a transaction runs in one implicit transaction with that setting
 *   in front of it: one multi-statement simple query (`select set_config(...); execute
 *   <statement>(<literals>)`; statements with parameters are prepared per connection with SQL
 *   PREPARE).
 * - A request scope without a community (before the caller is known) adds nothing: the
 *   service role with no community reads no tenant row and can write none (fails closed).
 * - Work that spans communities, the operator's requests (`bypass`, logged once per request) and
 *   work outside any request scope (job tasks, module start hooks, the admin CLI), gets
 *   `set_config('role', 'none', true)` the same way: the owner's rights, for that transaction or
 *   statement only.
 * - Every setting is transaction-local: a connection given back to the pool carries no
 *   community and is the service role again.
 *
 * The hook sits on the pools through the driver-pool adapter, so every connection the ORM hands
 * out (the primary's and each read replica's: transactions, named statements, MikroORM's own
 * queries) goes through it.
 */
/** pg's own conversion of a parameter to its text form (what it sends for `$n`), for the literals of EXECUTE. */
const { prepareValue } = createRequire(__filename)('pg/lib/utils') as { prepareValue(value: unknown): string | Buffer | null };

export const SERVICE_ROLE = 'community_api_service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BEGIN = /^\s*(begin|start\s+transaction)\b/i;
const END = /^\s*(commit|rollback|end|abort)\s*;?\s*$/i;

type Mode = { owner: true } | { owner: false; community: string };

function modeNow(): Mode {
  const scope = callerScope.getStore();
  if (!scope || scope.bypass) return { owner: true };
  const community = scope.communityId && UUID.test(scope.communityId) ? scope.communityId : '';
  return { owner: false, community };
}

/** The statement that makes the rest of the transaction the tenant's (a checked UUID), or the owner's; none when the community is unknown. */
function settingOf(mode: Mode): string | null {
  if (mode.owner) return "select set_config('role', 'none', true)";
  return mode.community ? `select set_config('app.community_id', '${mode.community}', true)` : null;
}

type Callback = (err: Error | null, result?: unknown) => void;
interface QueryConfig {
  text: string;
  name?: string;
  values?: unknown[];
  submit?: unknown;
  [more: string]: unknown;
}
type Query = (config: unknown, values?: unknown, callback?: Callback) => Promise<unknown> | undefined;
interface PgConnection {
  query: Query;
  escapeLiteral(value: string): string;
}

const names = new Map<string, string>();
function nameOf(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `t_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    if (names.size < 5000) names.set(text, name);
  }
  return name;
}

function literal(connection: PgConnection, value: unknown): string {
  const v = prepareValue(value);
  if (v === null || v === undefined) return 'null';
  if (Buffer.isBuffer(v)) return `'\\x${v.toString('hex')}'`;
  return connection.escapeLiteral(String(v));
}

const last = (result: unknown): unknown => (Array.isArray(result) ? result[result.length - 1] : result);
/** The statement's own result(s), after the setting's: one, or several for a multi-statement text. */
const afterSetting = (result: unknown): unknown => (Array.isArray(result) ? (result.length === 2 ? result[1] : result.slice(1)) : result);
const first = (result: unknown): unknown => (Array.isArray(result) ? result[0] : result);

const guarded = new WeakSet<object>();
/** Connections whose session is the service role (`set role` done). */
const switched = new WeakSet<object>();
/** Each guarded connection's own `query`. */
const originals = new WeakMap<object, Query>();

/** Wraps one driver connection's `query` (once per connection; see above). */
function guard(connection: PgConnection): void {
  if (guarded.has(connection)) return;
  guarded.add(connection);
  const query = connection.query.bind(connection) as Query;
  originals.set(connection, query);
  const preparedHere = new Set<string>();
  let inTransaction = false;

  connection.query = ((config: unknown, values?: unknown, callback?: Callback) => {
    if (typeof values === 'function') {
      callback = values as Callback;
      values = undefined;
    }
    const base: QueryConfig = typeof config === 'string' ? { text: config } : (config as QueryConfig);
    const text = base?.text;
    const pass = () => (callback ? query(config, values, callback) : values === undefined ? query(config) : query(config, values));
    if (!switched.has(connection)) {
      const err = new Error('tenancy: this connection could not be switched to the service role');
      if (callback) return void callback(err);
      return Promise.reject(err);
    }
    if (typeof text !== 'string') return pass();
    const setting = settingOf(modeNow());
    if (BEGIN.test(text)) {
      inTransaction = true;
      if (!setting) return pass();
      return run({ ...base, text: `${text.trim().replace(/;$/, '')}; ${setting}` }, first, callback);
    }
    if (END.test(text)) {
      inTransaction = false;
      return pass();
    }
    if (inTransaction || !setting) return pass();
    if (base.submit) {
      const err = new Error('tenancy: a streamed statement outside a transaction cannot carry its setting');
      if (callback) return void callback(err);
      return Promise.reject(err);
    }
    // A statement on its own: the setting in front of it, in the same implicit transaction.
    const params = (values as unknown[] | undefined) ?? base.values ?? [];
    const { name: _name, values: _values, ...rest } = base;
    if (!params.length) return run({ ...rest, text: `${setting}; ${text}` }, afterSetting, callback);
    const name = nameOf(text);
    const prepare = preparedHere.has(name) ? '' : `prepare ${name} as ${text}; `;
    const execute = `execute ${name}(${params.map((v) => literal(connection, v)).join(', ')})`;
    return run({ ...rest, text: `${setting}; ${prepare}${execute}` }, last, callback, () => preparedHere.add(name));
  }) as Query;

  function run(config: QueryConfig, pick: (r: unknown) => unknown, callback?: Callback, done?: () => void) {
    const promise = (query(config) as Promise<unknown>).then((result) => {
      done?.();
      return pick(result);
    });
    if (!callback) return promise;
    promise.then(
      (result) => callback(null, result),
      (err: Error) => callback(err),
    );
    return undefined;
  }
}

/** Puts the tenancy guard on every connection the ORM's pools hand out (the primary's and each read replica's). */
export function installTenancy(em: Pick<EntityManager, 'getDriver'>): void {
  interceptPool(em, {
    async acquire(take) {
      const connection = await take();
      const pg = connection as unknown as PgConnection;
      if (!switched.has(pg)) {
        // Once per connection, before its first statement: from then on it is the service role
        // between statements. A failure (e.g. a standby that has not replayed the role yet) must
        // not keep the connection from going back to the pool: its statements are refused
        // instead (the guard), and the next take tries again.
        const query = (guarded.has(pg) ? originals.get(pg)! : pg.query.bind(pg)) as Query;
        await Promise.resolve(query(`set role ${SERVICE_ROLE}`)).then(
          () => switched.add(pg),
          () => undefined,
        );
        guard(pg);
      }
      return connection;
    },
    release: (_connection: DriverConnection, giveBack) => giveBack(),
  });
}

/**
 * Creates SERVICE_ROLE if it is missing and gives it what request work needs (the tables,
 * sequences and functions of `public` and of the job queue's schema), run at start after the
 * migrations. The role owns nothing, cannot log in and has no BYPASSRLS; the owner (the
 * database URL's role) switches to it per transaction, so it must be a member of it, and it
 * must itself pass row-level security (superuser or BYPASSRLS) for the cross-community work.
 */
export async function prepareTenancy(pool: Pool, queueSchema: string): Promise<void> {
  const { rows } = await pool.query<{ bypass: boolean; member: boolean | null }>(
    `select (r.rolsuper or r.rolbypassrls) as bypass,
            (select pg_has_role(current_user, s.oid, 'member') from pg_roles s where s.rolname = $1) as member
       from pg_roles r where r.rolname = current_user`,
    [SERVICE_ROLE],
  );
  if (!rows[0].bypass) {
    throw new Error(
      `The database role of DATABASE_URL needs BYPASSRLS (or superuser) for migrations and cross-community jobs; see docs/security.md ("Row-level security"), or set DB_ROW_SECURITY=off`,
    );
  }
  if (rows[0].member === null) {
    // Several databases of one cluster may start at once: a concurrent create is fine.
    await pool.query(`do $$ begin
        create role ${SERVICE_ROLE} nologin noinherit nobypassrls;
      exception when duplicate_object or unique_violation then null;
      end $$`);
  }
  const member = (await pool.query<{ member: boolean }>(`select pg_has_role(current_user, '${SERVICE_ROLE}', 'member') as member`)).rows[0].member;
  if (!member) await pool.query(`grant ${SERVICE_ROLE} to current_user`);
  // Instances starting together on one database: one at a time (concurrent GRANTs on the same
  // objects fail with "tuple concurrently updated").
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query(`select pg_advisory_xact_lock(hashtext('community_api.tenancy'))`);
    await client.query(`
      grant usage on schema public, ${queueSchema} to ${SERVICE_ROLE};
      grant select, insert, update, delete on all tables in schema public, ${queueSchema} to ${SERVICE_ROLE};
      grant usage, select, update on all sequences in schema public, ${queueSchema} to ${SERVICE_ROLE};
      grant execute on all functions in schema public, ${queueSchema} to ${SERVICE_ROLE};`);
    // graphile-worker keeps row-level security on its own tables with no policy (only its owner
    // passes). Requests add and cancel jobs in their own transactions, so these functions run
    // with their owner's rights (SECURITY DEFINER, a fixed search_path); the tables stay closed.
    await client.query(`do $$ declare f regprocedure; begin
        for f in select p.oid::regprocedure from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                  where n.nspname = '${queueSchema}' and p.proname in ('add_job', 'add_jobs', 'remove_job') and not p.prosecdef loop
          execute format('alter function %s security definer set search_path = pg_catalog, pg_temp', f);
        end loop;
      end $$`);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
