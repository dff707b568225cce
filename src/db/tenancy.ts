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
 * handed out (`set role`, once per connection, with `t_set` prepared in the same statement):
 * by default a statement reads no tenant row. Then, per statement, in the same round trip:
 *
 * - Inside a scope (callerScope, src/db/caller-budget.ts) with a community: the transaction's
 *   BEGIN is followed by `t_set('app.community_id', <community>)` in one extended-protocol
 *   pipeline; a statement outside a transaction runs in one implicit transaction with that
 *   setting in front of it, one pipeline too (TenantQuery below: Bind/Execute `t_set`, the
 *   statement's Parse once per connection, Bind/Describe/Execute, one Sync).
 * - Outside every scope, or in a scope without a community (before the caller is known):
 *   nothing is added; the service role with no community reads no tenant row and can write
 *   none (fails closed).
 * - Work that spans communities runs under the one named bypass, asOwner(reason, ...) (the
 *   operator's requests mark their scope the same way, enterCaller): it gets
 *   `set_config('role', 'none', true)` the same way, the owner's rights for that transaction or
 *   statement only. Each use is recorded (auditBypass).
 * - Every setting is transaction-local: a connection given back to the pool carries no
 *   community and is the service role again.
 *
 * The hook sits on the pools through the driver-pool adapter, so every connection the ORM hands
 * out (the primary's and each read replica's: transactions, named statements, MikroORM's own
 * queries) goes through it.
 *
 * The same pipeline carries a statement's planning: a named statement sent as `generic`
 * (src/db/prepared.ts, Planning) outside a transaction gets `t_set('plan_cache_mode',
 * 'force_generic_plan')` in front as well, so PostgreSQL plans it once per connection instead of
 * at every run. That holds with DB_ROW_SECURITY=off too (the guard is installed without the
 * role switch and without community settings), so the two modes plan alike.
 */
const require_ = createRequire(__filename);
/** pg's own conversion of a parameter to its text form (what it sends for `$n`). */
const { prepareValue } = require_('pg/lib/utils') as { prepareValue(value: unknown): string | Buffer | null };
/** pg's query (a Submittable): its result handling (type parsers, fields, rowCount) is reused as is. */
const PgQuery = require_('pg/lib/query') as new (config: object) => PgQueryInstance;
/** pg's result, for the answer to a BEGIN (or its COMMIT) that is not sent on its own. */
const PgResult = require_('pg/lib/result') as new () => { addCommandComplete(msg: { text: string }): void };
/** pg's own wire serializer (pg-protocol, pg's dependency). */
const { serialize } = createRequire(require_.resolve('pg'))('pg-protocol') as { serialize: Serialize };
interface Serialize {
  parse(config: { text: string; name?: string; types?: unknown }): Buffer;
  bind(config: { portal?: string; statement?: string; values?: unknown[]; binary?: boolean; valueMapper?: (v: unknown) => unknown }): Buffer;
  describe(config: { type: 'P' | 'S'; name: string }): Buffer;
  execute(config?: { portal?: string }): Buffer;
}

export const SERVICE_ROLE = 'community_api_service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BEGIN = /^\s*(begin|start\s+transaction)\b/i;
const COMMIT = /^(commit|end)\b/i;
const END = /^\s*(commit|rollback|end|abort)\s*;?\s*$/i;
/** A text that may hold more than one statement (a `;` before its end): it cannot go through Parse. */
const SEVERAL = /;\s*\S/;

/**
 * The per-connection named statement every setting goes through (prepared with SQL PREPARE
 * when the connection is switched to the service role, so it is never parsed again).
 */
const SET = 't_set';
const PREPARE_SET = `prepare ${SET}(text, text) as select set_config($1, $2, true)`;

type Setting = [string, string];
/** What a `generic` statement adds (src/db/prepared.ts): planned once, not at every run. */
const GENERIC_PLAN: Setting = ['plan_cache_mode', 'force_generic_plan'];

/** Parse, Bind and Execute of a transaction's BEGIN (the unnamed statement), kept per text. */
const beginBytes = new Map<string, Buffer>();
function beginMessages(text: string): Buffer {
  let bytes = beginBytes.get(text);
  if (!bytes) {
    bytes = Buffer.concat([serialize.parse({ text }), serialize.bind({}), serialize.execute()]);
    if (beginBytes.size < 100) beginBytes.set(text, bytes);
  }
  return bytes;
}

/** The Bind and Execute of a named statement parsed on the connection already (a held statement). */
function heldMessages(name: string, values: unknown[]): Buffer {
  return Buffer.concat([serialize.bind({ statement: name, values, valueMapper: prepareValue }), serialize.execute()]);
}

/** The Bind and Execute of `t_set` for one setting (a community, the owner, a plan mode), kept: the same bytes for every statement of that community. */
const settingBytes = new Map<string, Buffer>();
function settingMessages([name, value]: Setting): Buffer {
  const key = `${name}=${value}`;
  let bytes = settingBytes.get(key);
  if (!bytes) {
    bytes = Buffer.concat([serialize.bind({ statement: SET, values: [name, value] }), serialize.execute()]);
    if (settingBytes.size >= 10_000) settingBytes.clear();
    settingBytes.set(key, bytes);
  }
  return bytes;
}

type Mode = { owner: true } | { owner: false; community: string };

function modeNow(): Mode {
  const scope = callerScope.getStore();
  if (scope?.bypass) return { owner: true };
  // Outside any scope, or in a scope whose community is not known: the service role with no
  // community, which reads no tenant row. Work that spans communities says so (asOwner).
  const community = scope?.communityId && UUID.test(scope.communityId) ? scope.communityId : '';
  return { owner: false, community };
}

/** The setting that makes the rest of the transaction the tenant's (a checked UUID), or the owner's; none when the community is unknown. */
function settingOf(mode: Mode): Setting | null {
  if (mode.owner) return ['role', 'none'];
  return mode.community ? ['app.community_id', mode.community] : null;
}
const settingSql = ([name, value]: Setting) => `select set_config('${name}', '${value}', true)`;

type Callback = (err: Error | null, result?: unknown) => void;

/**
 * A promise and the pg callback that settles it, made before the query object the callback is
 * given to. pg's own promise form (`client.query(config)` without a callback) makes its Query
 * first and then stores a new closure in `query.callback`; with that order V8's scavenger kept
 * every statement's rows (and what they reach) alive until the next mark-compact: about 60 KB
 * promoted per `GET /groups?limit=100`, a mark-compact every half second at 300 requests a
 * second (docs/performance.md, "Rows promoted by pg's promise form"). Given to the query's
 * constructor, the callback is older than the query and nothing is promoted.
 */
function settlement(): { promise: Promise<unknown>; callback: Callback } {
  let callback!: Callback;
  const promise = new Promise<unknown>((resolve, reject) => {
    callback = (err, result) => (err ? reject(err) : resolve(result));
  });
  return { promise, callback };
}
/** The command tag of the answer to a statement the guard held instead of sending (src/db/prepared.ts tells the two apart by it). */
export const DEFERRED = 'DEFERRED';
/** A held statement's rows as raw text fields (no row description goes with it), or its error. */
export type HeldRows = (string | null)[][];
/**
 * Told a watched held statement's rows (or its error) as soon as they are back. An error it
 * answers (a veto) becomes the error of the statement that carried it, which then reports no
 * result: the rest of the transaction's work is not done for nothing.
 */
export type Watch = (err: Error | null, rows?: HeldRows) => Error | void;
/** What of a pipeline's lead is a watched held statement: its place among the lead's parts, and who is told. */
interface Watched {
  index: number;
  watch: Watch;
}
interface QueryConfig {
  text: string;
  name?: string;
  values?: unknown[];
  submit?: unknown;
  rows?: number;
  /** Planned once per connection (src/db/prepared.ts, Planning). */
  generic?: boolean;
  /** Sent with the transaction's next statement or its COMMIT (src/db/prepared.ts, deferStatement). */
  deferred?: boolean;
  /** A deferred statement whose rows are wanted: told them (raw text fields) or its error once its round trip is back (holdStatement). */
  watch?: Watch;
  /** Sends a held statement now, on its own round trip (nothing when none is held). */
  flush?: boolean;
  [more: string]: unknown;
}
type Query = (config: unknown, values?: unknown, callback?: Callback) => Promise<unknown> | undefined;
interface PgConnection {
  query: Query;
}
/** What of pg's Connection (the wire) the pipeline writes to. */
interface Wire {
  stream: { writable: boolean; cork?(): void; uncork?(): void; write(bytes: Buffer): boolean };
  parsedStatements: Record<string, string>;
  sync(): void;
}
interface PgQueryInstance {
  text: string;
  name?: string;
  values?: unknown[];
  types?: unknown;
  binary?: boolean;
  portal: string;
  callback?: Callback;
  submit(connection: Wire): Error | null | undefined;
  handleDataRow(msg: unknown): void;
  handleCommandComplete(msg: unknown, connection: Wire): void;
  handleError(err: Error, connection: Wire): void;
  handleReadyForQuery(connection: Wire): void;
  hasBeenParsed(connection: Wire): unknown;
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

/**
 * One statement outside a transaction with its settings in front (or a BEGIN with its setting
 * after), in one round trip of the extended protocol: Bind/Execute of the connection's `t_set` per setting, Parse (once per
 * connection for a named statement), Bind/Describe/Execute of the statement, one Sync.
 * PostgreSQL runs everything before a Sync as one implicit transaction, so the
 * transaction-local setting covers the statement and is gone after it. The setting's own
 * row and CommandComplete are dropped; the rest is pg's own Query: rows through pg's type
 * parsers, fields, rowCount, and an error of either part surfaces as pg's error.
 */
class TenantQuery extends PgQuery {
  /** Completions seen: every one but the statement's own (the `before.length`th) is dropped. */
  private completed = 0;
  /**
   * Messages sent in front of the statement (a deferred BEGIN, settings, a deferred statement)
   * and after it (a BEGIN's setting: it then belongs to the transaction, and outlives the Sync).
   * Each is a Bind and an Execute (a BEGIN's also a Parse): one completion, and no row
   * description, so their rows are dropped too.
   */
  private readonly before: readonly Buffer[];
  private readonly after: readonly Buffer[];
  /** The statement's own messages, built already (a lead sent on its own: its last part). */
  private readonly own?: Buffer;
  /** A held statement of the lead whose rows are wanted (its rows so far; told once). */
  private watched?: Watched & { rows: HeldRows };
  /** What the watcher answered to the rows: the statement's error instead of its result. */
  private veto?: Error;

  constructor(config: QueryConfig, { before = [], after = [], own, watched }: { before?: readonly Buffer[]; after?: readonly Buffer[]; own?: Buffer; watched?: Watched }) {
    super(config);
    this.before = before;
    this.after = after;
    this.own = own;
    if (watched) this.watched = { ...watched, rows: [] };
  }

  /** Tells the watched statement's caller, once. */
  private tell(err: Error | null): void {
    const watched = this.watched;
    if (!watched) return;
    this.watched = undefined;
    if (err) watched.watch(err);
    else this.veto = watched.watch(null, watched.rows) || undefined;
  }

  /** True while the messages coming in are not the statement's own. */
  private get inSetting(): boolean {
    return this.completed !== this.before.length;
  }

  override submit(connection: Wire): Error | null {
    if (typeof this.text !== 'string') return new Error('tenancy: a statement needs its text');
    const previous = this.name ? connection.parsedStatements[this.name] : undefined;
    if (previous && previous !== this.text) return new Error(`Prepared statements must be unique - '${this.name}' was used for a different statement`);
    // Every message but the Sync in one buffer, built before anything is written: a value pg
    // cannot convert fails here, with nothing sent.
    let messages: Buffer;
    try {
      const parts: Buffer[] = [];
      if (this.own) parts.push(this.own);
      else {
        if (!this.hasBeenParsed(connection)) parts.push(serialize.parse({ text: this.text, name: this.name, types: this.types }));
        parts.push(
          serialize.bind({ portal: this.portal, statement: this.name, values: this.values, binary: this.binary, valueMapper: prepareValue }),
          serialize.describe({ type: 'P', name: this.portal || '' }),
          serialize.execute({ portal: this.portal }),
        );
      }
      messages = Buffer.concat([...this.before, ...parts, ...this.after]);
    } catch (err) {
      return err as Error;
    }
    connection.stream.cork?.();
    try {
      // As pg's own sending does: nothing on a stream that is no longer writable (the client reports the connection's end).
      if (connection.stream.writable) connection.stream.write(messages);
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  override handleDataRow(msg: unknown): void {
    if (this.watched?.index === this.completed) {
      this.watched.rows.push((msg as { fields: (string | null)[] }).fields);
      return;
    }
    // A lead sent on its own (`own`) has no row description: its rows are never wanted.
    if (!this.inSetting && !this.own) super.handleDataRow(msg);
  }

  override handleCommandComplete(msg: unknown, connection: Wire): void {
    const setting = this.inSetting;
    if (this.watched?.index === this.completed) this.tell(null);
    this.completed++;
    if (!setting) super.handleCommandComplete(msg, connection);
  }

  override handleError(err: Error, connection: Wire): void {
    // Before the watched statement completed: it failed, or did not run (the pipeline stopped before it).
    if (this.watched) this.tell(err);
    super.handleError(err, connection);
  }

  override handleReadyForQuery(connection: Wire): void {
    if (this.watched) this.tell(new Error('tenancy: the held statement was not answered'));
    if (this.veto) return super.handleError(this.veto, connection);
    super.handleReadyForQuery(connection);
  }
}

/** The statement's own result(s), after the setting's: one, or several for a multi-statement text (only ever one setting). */
const afterSetting = (result: unknown): unknown => (Array.isArray(result) ? (result.length === 2 ? result[1] : result.slice(1)) : result);

const guarded = new WeakSet<object>();
/** Connections whose session is the service role (`set role` done, `t_set` prepared). */
const switched = new WeakSet<object>();
/** Each guarded connection's own `query`. */
const originals = new WeakMap<object, Query>();
/** Each guarded connection's reset, run when it goes back to the pool. */
const resets = new WeakMap<object, () => void>();

/** Wraps one driver connection's `query` (once per connection; see above). `rowSecurity` false: no community settings (installTenancy). */
function guard(connection: PgConnection, rowSecurity: boolean): void {
  if (guarded.has(connection)) return;
  guarded.add(connection);
  const query = connection.query.bind(connection) as Query;
  originals.set(connection, query);
  let inTransaction = false;
  /**
   * A BEGIN not sent yet: it goes in front of the transaction's first statement, in that
   * statement's pipeline, with the setting taken when the BEGIN was asked for (one round trip
   * less per transaction; docs/performance.md, "Deferred BEGIN"). A transaction with no
   * statement sends nothing at all.
   */
  let pending: { begin: string; setting: Setting | null } | null = null;
  /**
   * A statement whose caller does not wait for its answer (`deferred`, src/db/prepared.ts,
   * `deferStatement`): its Bind and Execute go in front of the transaction's next statement or its
   * COMMIT, in that round trip. An error of it is that statement's (or the COMMIT's) error.
   */
  let held: { messages: Buffer; watch?: Watch } | null = null;
  /** Forgets the held statement (its transaction ended without it): a watcher hears it never ran. */
  const dropHeld = () => {
    held?.watch?.(new Error('tenancy: the transaction ended before its held statement was sent'));
    held = null;
  };

  connection.query = ((config: unknown, values?: unknown, callback?: Callback) => {
    if (typeof values === 'function') {
      callback = values as Callback;
      values = undefined;
    }
    const base: QueryConfig = typeof config === 'string' ? { text: config } : (config as QueryConfig);
    const text = base?.text;
    // pg's callback form, its callback made first (settlement); a Submittable (a cursor, pg's own Query) is pg's to answer as it is.
    const pass = () => {
      if (callback || typeof (config as { submit?: unknown } | null)?.submit === 'function') return query(config, values, callback);
      const settled = settlement();
      query(config, values, settled.callback);
      return settled.promise;
    };
    if (!switched.has(connection)) {
      // Without row-level security nothing depends on the switch: the statement just goes as it is.
      if (!rowSecurity) return pass();
      const err = new Error('tenancy: this connection could not be switched to the service role');
      if (callback) return void callback(err);
      return Promise.reject(err);
    }
    if (typeof text !== 'string') return pending || held ? leadThen(pass, callback) : pass();
    if (base.flush === true) return held ? leadThen(() => answered('FLUSH', callback), callback) : answered('FLUSH', callback);
    const setting = rowSecurity ? settingOf(modeNow()) : null;
    if (BEGIN.test(text)) {
      inTransaction = true;
      const only = text.trim().replace(/;$/, '');
      if (SEVERAL.test(only)) return sendBegin(base, only, setting, callback);
      // A second BEGIN before any statement changes nothing (PostgreSQL would only warn).
      pending ??= { begin: only, setting };
      return answered(only.split(/\s/)[0].toUpperCase(), callback);
    }
    if (END.test(text)) {
      inTransaction = false;
      const only = text.trim().replace(/;$/, '');
      if (held && COMMIT.test(only)) {
        // The held statement (after the BEGIN, when nothing else ran), then COMMIT, in one round
        // trip. When the statement fails PostgreSQL skips the COMMIT and the transaction stays
        // open and failed: it is rolled back before the COMMIT's caller hears the error.
        const { name: _name, values: _values, ...rest } = base;
        const rollBack = (err: Error) => Promise.resolve(query('ROLLBACK')).then(() => Promise.reject(err), () => Promise.reject(err));
        const lead = takeLead();
        const committed = (submit((cb) => new TenantQuery({ ...rest, text: only, callback: cb }, lead)) as Promise<unknown>).catch(rollBack);
        if (!callback) return committed;
        committed.then((result) => callback!(null, result), (err: Error) => callback!(err));
        return undefined;
      }
      dropHeld(); // a ROLLBACK: what was held never runs
      if (pending) {
        // Nothing ran: there is no transaction to end.
        pending = null;
        return answered(only.split(/\s/)[0].toUpperCase(), callback);
      }
      return pass();
    }
    const params = (values as unknown[] | undefined) ?? base.values ?? [];
    if (inTransaction) {
      if (!pending && !held && base.deferred !== true) return pass();
      const wire = connection as unknown as { connection?: Wire };
      // A named statement parsed already (a failed Parse in a pipeline must not leave pg
      // believing the statement is there, which an earlier message's ParseComplete would).
      const parsed = !base.name || wire.connection?.parsedStatements[base.name] === text;
      const single = !base.submit && !base.rows && parsed && (params.length > 0 || !SEVERAL.test(text));
      // A deferred statement is held (behind a pending BEGIN, if any) until the next statement or the COMMIT.
      if (base.deferred === true && base.name && single && !held) {
        held = { messages: heldMessages(base.name, params), watch: base.watch };
        return answered(DEFERRED, callback);
      }
      if (!pending && !held) return pass();
      // The first statement carries the BEGIN (and the setting), the next one a held statement,
      // when it can go in one pipeline: a single statement, not streamed, parsed already if named.
      if (single) {
        const lead = takeLead();
        return submit((cb) => new TenantQuery({ ...base, values: params, callback: cb }, lead), callback);
      }
      return leadThen(pass, callback);
    }
    const generic = base.generic === true && !!base.name;
    if (!setting && !generic) return pass();
    if (base.submit || base.rows) {
      const err = new Error('tenancy: a streamed statement outside a transaction cannot carry its setting');
      if (callback) return void callback(err);
      return Promise.reject(err);
    }
    if (!params.length && SEVERAL.test(text)) {
      // Several statements in one text (simple protocol only): the setting in front, in the same implicit transaction.
      if (!setting) return pass();
      const { name: _name, values: _values, ...rest } = base;
      return run({ ...rest, text: `${settingSql(setting)}; ${text}` }, afterSetting, callback);
    }
    // A statement with parameters is named (parsed once per connection); one without (the
    // ORM inlines its literals, so its text is new each time) goes through the unnamed statement.
    const name = params.length ? (base.name ?? nameOf(text)) : undefined;
    const settings = [...(setting ? [setting] : []), ...(generic ? [GENERIC_PLAN] : [])];
    const before = settings.map(settingMessages);
    return submit((cb) => new TenantQuery({ ...base, name, values: params, callback: cb }, { before }), callback);
  }) as Query;

  /**
   * What must go in front of the next statement (taken): a pending BEGIN with its setting, then
   * a held statement, and where that one is among them when its caller wants its rows.
   */
  function takeLead(): { before: Buffer[]; watched?: Watched } {
    const before: Buffer[] = [];
    if (pending) before.push(beginMessages(pending.begin), ...(pending.setting ? [settingMessages(pending.setting)] : []));
    const watched = held?.watch ? { index: before.length, watch: held.watch } : undefined;
    if (held) before.push(held.messages);
    pending = null;
    held = null;
    return { before, watched };
  }

  /** The lead on its own round trip, then `next` (which answers `callback` itself). */
  function leadThen(next: () => unknown, callback?: Callback) {
    const { before: lead, watched } = takeLead();
    // The lead's last message carries the round trip: it becomes the pipeline's own statement.
    const own = lead.pop()!;
    const sent = submit((cb) => new TenantQuery({ text: '', callback: cb }, { before: lead, own, watched })) as Promise<unknown>;
    const after = sent.then(next);
    if (!callback) return after;
    after.catch((err: Error) => callback(err));
    return undefined;
  }

  /** BEGIN on its own round trip, with the setting after it in the same pipeline when there is one. */
  function sendBegin(base: QueryConfig, only: string, setting: Setting | null, callback?: Callback) {
    const { name: _name, values: _values, ...rest } = base;
    if (!setting) return callback ? query({ ...rest, text: only }, undefined, callback) : query({ ...rest, text: only });
    // BEGIN, then the setting, in one pipeline: BEGIN turns the pipeline's implicit transaction
    // into the explicit one, so the transaction-local setting lasts until its COMMIT or ROLLBACK.
    // (A text of several statements goes as one simple query, the setting after them.)
    if (SEVERAL.test(only)) return run({ ...rest, text: `${only}; ${settingSql(setting)}` }, (r) => (Array.isArray(r) ? r.slice(0, -1) : r), callback);
    const after = [settingMessages(setting)];
    return submit((cb) => new TenantQuery({ ...rest, text: only, callback: cb }, { after }), callback);
  }

  /** The answer to a BEGIN or an END that is not sent (see `pending`), as pg would give it. */
  function answered(command: string, callback?: Callback) {
    const result = new PgResult();
    result.addCommandComplete({ text: command });
    if (!callback) return Promise.resolve(result);
    process.nextTick(callback, null, result);
    return undefined;
  }

  // Given back to the pool with its BEGIN never sent (the transaction ended without a word): nothing is open.
  // A held statement whose transaction never ended is dropped with it.
  resets.set(connection, () => {
    if (pending) {
      pending = null;
      inTransaction = false;
    }
    dropHeld();
  });

  /** Sends the query `make` builds around its callback (made first: see settlement). */
  function submit(make: (callback: Callback) => PgQueryInstance, callback?: Callback) {
    if (callback) {
      query(make(callback));
      return undefined;
    }
    const settled = settlement();
    query(make(settled.callback));
    return settled.promise;
  }

  function run(config: QueryConfig, pick: (r: unknown) => unknown, callback?: Callback) {
    const settled = settlement();
    query(config, undefined, settled.callback);
    const promise = settled.promise.then(pick);
    if (!callback) return promise;
    promise.then(
      (result) => callback(null, result),
      (err: Error) => callback(err),
    );
    return undefined;
  }
}

/** Where a bypass is recorded: the runtime's logger, the admin CLI's stderr. */
export type AuditLog = (fields: object, msg: string) => void;

const bypassUses = new Map<string, number>();

/** How often each bypass reason was used in this process (asOwner, the operator's requests, the event hub). */
export function bypassCounts(): ReadonlyMap<string, number> {
  return bypassUses;
}

/**
 * Records one use of the tenancy bypass: counted per reason, logged at info the first time a
 * reason is used in this process and at debug after (a job that runs every minute says so once).
 */
export function auditBypass(reason: string, log: AuditLog | { info: AuditLog; debug: AuditLog }): void {
  if (!reason.trim()) throw new Error('tenancy: a bypass needs its reason');
  const uses = (bypassUses.get(reason) ?? 0) + 1;
  bypassUses.set(reason, uses);
  const msg = 'tenancy bypass: this work runs across communities with the owner\'s rights';
  if (typeof log === 'function') {
    if (uses === 1) log({ reason }, msg);
  } else (uses === 1 ? log.info : log.debug).call(log, { reason, uses }, msg);
}

/**
 * The one way to the owner's rights on the ORM's connections: `work` (and everything it
 * starts) runs with every transaction and statement switched to the owner role
 * (`set_config('role', 'none', true)`), which passes row-level security. For work that spans
 * communities by design (the job queue's cross-community tasks, module start hooks, the admin
 * CLI); `reason` says which, and is recorded (auditBypass). Work outside any scope and outside
 * this is the service role with no community: it reads no tenant row (fails closed). The
 * caller's connection budget key, if any, is kept.
 */
export function asOwner<T>(reason: string, log: AuditLog | { info: AuditLog; debug: AuditLog }, work: () => T): T {
  auditBypass(reason, log);
  return callerScope.run({ key: callerScope.getStore()?.key, bypass: reason }, work);
}

/** Runs `work` as `communityId`'s: the database holds it to that community (a job's work that belongs to one). */
export function inCommunity<T>(communityId: string, work: () => T): T {
  return callerScope.run({ key: callerScope.getStore()?.key, communityId }, work);
}

/**
 * Puts the tenancy guard on every connection the ORM's pools hand out (the primary's and each
 * read replica's). `rowSecurity` false (DB_ROW_SECURITY=off): no role switch and no community
 * setting; the statements' plan settings, the deferred BEGIN and held statements stay, so both
 * modes send the same round trips.
 */
export function installTenancy(em: Pick<EntityManager, 'getDriver'>, rowSecurity = true): void {
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
        await Promise.resolve(query(rowSecurity ? `set role ${SERVICE_ROLE}; ${PREPARE_SET}` : PREPARE_SET)).then(
          () => switched.add(pg),
          () => undefined,
        );
        guard(pg, rowSecurity);
      }
      return connection;
    },
    release: (connection: DriverConnection, giveBack) => {
      resets.get(connection)?.();
      return giveBack();
    },
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
