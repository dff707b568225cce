import { AsyncLocalStorage } from 'node:async_hooks';
import { Pool } from 'pg';
import type Redis from 'ioredis';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger';
import { BusyError } from '../errors/classify';
import { slot } from '../state';
import { replicaConnections, routeReads, type OrmConnection } from './driver-pool';
import { readFallbacks, readsPerNode, replicaLag, replicaUp } from './replica-metrics';

/**
 * Reads on streaming replicas, with read-your-writes (docs/architecture.md, "Reads on
 * replicas"; docs/scaling.md).
 *
 * - MikroORM owns the replica connections (its `replicas` option: one knex pool per replica,
 *   with the primary's pool size and start-up options). Which one serves a read is decided here,
 *   once per request, and kept in `readRoute` (an AsyncLocalStorage); the driver-pool adapter
 *   (src/db/driver-pool.ts, `routeReads`) makes the driver's `getConnection('read')` (what
 *   MikroORM's finds use with `preferReadReplicas`) and `em.execute` outside a transaction take
 *   that node, and the prepared reads of src/db/prepared.ts take it too.
 * - One ReadRouter per runtime, kept in the runtime's state (slot READ_ROUTER) when
 *   DATABASE_REPLICA_URLS names any replica.
 *   Outside a read scope everything runs on the primary, as does any transaction, unless it is a
 *   read-only transaction opened by `readTransaction` (src/db/transaction.ts) in a read scope.
 * - Each write of a caller (an API key) records the primary's WAL insert position after its
 *   commit, in Redis when configured (as the rate limiter's counters) or in an unlogged
 *   PostgreSQL table. A caller's read goes to a replica only when the replica's replayed
 *   position (polled every POLL_MS) has reached the caller's last write and the position the
 *   client sent back as a `Consistency-Token`; otherwise to the primary.
 * - A replica that fails its poll, is not in recovery, or lags more than maxLagMs gets no
 *   reads until a poll finds it well again. A read that fails on a replica is run again on the
 *   primary (a read changes nothing, so running it twice is safe).
 */

/** How often each replica's replayed position and the primary's position are read. */
export const POLL_MS = 100;
/** A poll that takes longer fails: the replica stops receiving reads. */
const POLL_TIMEOUT_MS = 500;

export type FallbackReason = 'down' | 'lag' | 'behind' | 'position_unknown' | 'error';

export class Replica {
  up = false;
  /** Replayed WAL position at the last poll. */
  replayed = 0n;
  lagMs = Number.POSITIVE_INFINITY;
  readonly poll: Pool;

  constructor(
    readonly name: string,
    url: string,
    readonly connection: OrmConnection,
  ) {
    this.poll = new Pool({ connectionString: url, max: 1, connectionTimeoutMillis: POLL_TIMEOUT_MS, query_timeout: POLL_TIMEOUT_MS, idleTimeoutMillis: 0 });
    this.poll.on('error', () => undefined); // a dropped idle poll connection: the next poll reconnects
  }
}

interface RouteState {
  /** The replica serving this scope's reads; null: the primary. */
  replica: Replica | null;
  /** Set by readTransaction: the transaction itself is opened on `replica`. */
  transaction?: boolean;
}

const readRoute = new AsyncLocalStorage<RouteState>();

/** The replica the current read scope reads from, if any. */
export const currentReplica = (): Replica | null => readRoute.getStore()?.replica ?? null;

/** Runs `work` with its reads on the primary (e.g. when a replica turned out to be behind). */
export const onPrimary = <T>(work: () => Promise<T>): Promise<T> => readRoute.run({ replica: null }, work);

/** Runs `work` (a read-only transaction) on the current read scope's replica, if any. */
export function inReplicaTransaction<T>(work: () => Promise<T>): Promise<T> {
  const replica = currentReplica();
  return replica ? readRoute.run({ replica, transaction: true }, work) : work();
}

/** `0/16B3748` as a number. */
export function parseLsn(text: string): bigint {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

/** The opaque `Consistency-Token`: a WAL position as 16 hex digits. */
export const tokenOf = (lsn: bigint): string => lsn.toString(16).toUpperCase().padStart(16, '0');

/** The position in a `Consistency-Token`, undefined when absent; null when malformed. */
export function parseToken(value: string | undefined): bigint | undefined | null {
  if (value === undefined) return undefined;
  return /^[0-9A-Fa-f]{16}$/.test(value.trim()) ? BigInt(`0x${value.trim()}`) : null;
}

/** Where a caller's last write position is kept. */
export interface PositionStore {
  get(caller: string): Promise<bigint>;
  /** Records the primary's current WAL insert position for `caller`; returns it. */
  record(caller: string): Promise<bigint>;
}

/** In the primary: an unlogged table (no WAL, not replicated; lost on a crash, see docs/scaling.md). */
export class PgPositions implements PositionStore {
  constructor(private readonly primary: Pool) {}

  async get(caller: string): Promise<bigint> {
    const { rows } = await this.primary.query<{ lsn: string }>({
      name: 'rp_get',
      text: 'select lsn::text as lsn from caller_wal_positions where caller = $1',
      values: [caller],
    });
    return rows.length ? parseLsn(rows[0].lsn) : 0n;
  }

  async record(caller: string): Promise<bigint> {
    const { rows } = await this.primary.query<{ lsn: string }>({
      name: 'rp_record',
      text: `insert into caller_wal_positions as p (caller, lsn) values ($1, pg_current_wal_insert_lsn())
             on conflict (caller) do update set lsn = greatest(p.lsn, excluded.lsn) returning lsn::text as lsn`,
      values: [caller],
    });
    return parseLsn(rows[0].lsn);
  }
}

/** A caller's position key in Redis. */
export const positionKey = (caller: string): string => `rp:${caller}`;

/** In Redis (where the rate limiter counts when REDIS_URL is set): one key per caller, only ever raised. */
export class RedisPositions implements PositionStore {
  constructor(
    private readonly primary: Pool,
    private readonly redis: Redis,
    private readonly ttlMs: number,
  ) {}

  async get(caller: string): Promise<bigint> {
    const v = await this.redis.get(positionKey(caller));
    return v ? BigInt(v) : 0n;
  }

  async record(caller: string): Promise<bigint> {
    const { rows } = await this.primary.query<{ lsn: string }>({ name: 'rp_now', text: 'select pg_current_wal_insert_lsn()::text as lsn', values: [] });
    const lsn = parseLsn(rows[0].lsn);
    // Raise only: a slower request of the same caller must not lower its position.
    await this.redis.eval(
      `local c = redis.call('GET', KEYS[1])
       if (not c) or (tonumber(c) < tonumber(ARGV[1])) then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
       return 1`,
      1,
      positionKey(caller),
      lsn.toString(),
      String(this.ttlMs),
    );
    return lsn;
  }
}

export interface ReadRouterOptions {
  maxLagMs: number;
  /** Connections to the primary for the position store and the polls (as many as the ORM's pool: every read looks up its caller). */
  poolMax?: number;
  logger: Logger;
  redis?: Redis;
}

interface Sample {
  at: number;
  lsn: bigint;
}

export class ReadRouter {
  readonly replicas: Replica[];
  private readonly primary: Pool;
  readonly positions: PositionStore;
  private samples: Sample[] = [];
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private next = 0;

  constructor(
    orm: MikroORM,
    primaryUrl: string,
    replicaUrls: string[],
    private readonly opts: ReadRouterOptions,
  ) {
    const connections = replicaConnections(orm.em);
    if (connections.length !== replicaUrls.length) throw new Error('the ORM was opened without the replicas (ormOptions replicaUrls)');
    this.replicas = replicaUrls.map((url, i) => new Replica(`replica${i}`, url, connections[i]));
    this.primary = new Pool({ connectionString: primaryUrl, max: opts.poolMax ?? 10, connectionTimeoutMillis: 3000 });
    this.primary.on('error', (err) => opts.logger.warn({ err: err.message }, 'read router pool error'));
    this.positions = opts.redis ? new RedisPositions(this.primary, opts.redis, Math.max(60_000, opts.maxLagMs * 10)) : new PgPositions(this.primary);
    routeReads(orm.em, {
      replicas: this.replicas,
      current: currentReplica,
      inTransaction: () => readRoute.getStore()?.transaction === true,
      failed: replicaFailed,
    });
    for (const r of this.replicas) replicaUp.set({ replica: r.name }, 0);
  }

  /** Polls until close(); resolves after the first round, so a fresh instance already knows its replicas. */
  async start(): Promise<void> {
    await this.pollOnce();
    const tick = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => void this.pollOnce().finally(tick), POLL_MS);
      this.timer.unref();
    };
    tick();
  }

  private async pollOnce(): Promise<void> {
    const now = Date.now();
    try {
      const { rows } = await this.primary.query<{ lsn: string }>({ name: 'rp_now', text: 'select pg_current_wal_insert_lsn()::text as lsn', values: [] });
      const lsn = parseLsn(rows[0].lsn);
      if (!this.samples.length || this.samples[this.samples.length - 1].lsn !== lsn) this.samples.push({ at: now, lsn });
      // Keep enough history to tell any lag up to twice the limit.
      const keepFrom = now - Math.max(2 * this.opts.maxLagMs, 2000);
      while (this.samples.length > 1 && this.samples[1].at < keepFrom) this.samples.shift();
    } catch {
      // The primary is unreachable: the replicas keep their last state; requests fail on the primary anyway.
    }
    await Promise.all(this.replicas.map((r) => this.pollReplica(r, now)));
  }

  private async pollReplica(r: Replica, now: number): Promise<void> {
    const wasUp = r.up;
    try {
      const { rows } = await r.poll.query<{ lsn: string | null; recovery: boolean }>('select pg_last_wal_replay_lsn()::text as lsn, pg_is_in_recovery() as recovery');
      if (!rows[0].recovery || rows[0].lsn === null) throw new Error('not a streaming standby');
      r.replayed = parseLsn(rows[0].lsn);
      r.lagMs = this.lagOf(r.replayed, now);
      r.up = r.lagMs <= this.opts.maxLagMs;
    } catch (err) {
      r.up = false;
      r.lagMs = Number.POSITIVE_INFINITY;
      if (wasUp) this.opts.logger.warn({ replica: r.name, err: (err as Error).message }, 'replica stopped answering; reads go elsewhere');
    }
    if (r.up && !wasUp) this.opts.logger.info({ replica: r.name }, 'replica receives reads');
    replicaUp.set({ replica: r.name }, r.up ? 1 : 0);
    if (Number.isFinite(r.lagMs)) replicaLag.set({ replica: r.name }, r.lagMs / 1000);
  }

  /** How long ago the primary was at the first position the replica has not replayed yet (0: caught up). */
  private lagOf(replayed: bigint, now: number): number {
    const firstAhead = this.samples.find((s) => s.lsn > replayed);
    return firstAhead ? now - firstAhead.at : 0;
  }

  /**
   * The replica for a read of `caller` (a budget key) that must see `token`; null: the primary.
   * `known`: the caller's last write position as read by the statement that counted the
   * request (src/rate-limit/limiter.ts), so no lookup of its own.
   */
  async pick(caller: string | undefined, token: bigint | undefined, known?: bigint): Promise<Replica | null> {
    const ready = this.replicas.filter((r) => r.up);
    if (!ready.length) return this.fallback(this.replicas.some((r) => Number.isFinite(r.lagMs)) ? 'lag' : 'down');
    let needed = token ?? 0n;
    if (known !== undefined) {
      if (known > needed) needed = known;
    } else if (caller !== undefined) {
      try {
        const own = await this.positions.get(caller);
        if (own > needed) needed = own;
      } catch {
        return this.fallback('position_unknown');
      }
    }
    const able = ready.filter((r) => r.replayed >= needed);
    if (!able.length) return this.fallback('behind');
    const chosen = able[this.next++ % able.length];
    readsPerNode.inc({ node: chosen.name });
    return chosen;
  }

  private fallback(reason: FallbackReason): null {
    readFallbacks.inc({ reason });
    readsPerNode.inc({ node: 'primary' });
    return null;
  }

  /**
   * Runs a read-only request: on the picked node, and once more on the primary when it
   * failed on a replica (`failed` judges a result that is not a thrown error).
   */
  async read<T>(caller: string | undefined, token: bigint | undefined, work: () => Promise<T>, failed: (result: T) => boolean = () => false, known?: bigint): Promise<T> {
    const replica = await this.pick(caller, token, known);
    if (!replica) return readRoute.run({ replica: null }, work);
    try {
      const result = await readRoute.run({ replica }, work);
      if (!failed(result)) return result;
    } catch {
      // below: the primary answers
    }
    // The statements that failed there already took the replica out if it looked unreachable.
    readFallbacks.inc({ reason: 'error' });
    readsPerNode.inc({ node: 'primary' });
    return readRoute.run({ replica: null }, work);
  }

  /** Picks the node of the current read scope (opened by withReadScope), for callers that run the work themselves (GraphQL). */
  async scope(caller: string | undefined, token: bigint | undefined, known?: bigint): Promise<Replica | null> {
    const replica = await this.pick(caller, token, known);
    const state = readRoute.getStore();
    if (state) state.replica = replica;
    return replica;
  }

  /** After a caller's write committed: its position, recorded; the `Consistency-Token`. */
  async recordWrite(caller: string): Promise<string> {
    return tokenOf(await this.positions.record(caller));
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all(this.replicas.map((r) => r.poll.end().catch(() => undefined)));
    await this.primary.end().catch(() => undefined);
  }
}

/** Connection-level failures (the replica went away or refuses): no more reads there until a good poll. */
function unreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return true; // "Connection terminated", a pool timeout
  return code.startsWith('08') || code.startsWith('57P') || code.startsWith('E');
}

/**
 * A statement failed on `replica`: the rest of the scope reads from the primary, and a replica
 * that looks unreachable gets no reads until its next good poll (a read of a statement that
 * fails anyway fails again on the primary, and that error is the one reported). False: the
 * error is the caller's own (its connection cap), to be thrown as it is.
 */
export function replicaFailed(replica: Replica, err: unknown): boolean {
  // The caller's own connection cap, not the replica: the primary would make it wait again.
  if (err instanceof BusyError) return false;
  readFallbacks.inc({ reason: 'error' });
  if (unreachable(err)) replica.up = false;
  const state = readRoute.getStore();
  if (state?.replica === replica && !state.transaction) state.replica = null;
  return true;
}

/** Opens an empty read scope for `work`: `ReadRouter.scope` may fill it in later (GraphQL learns the operation late). */
export const withReadScope = <T>(work: () => T): T => readRoute.run({ replica: null }, work);

/** The runtime's read router (src/state.ts), set by startRuntime when replicas are configured. */
export const READ_ROUTER = slot<ReadRouter>('readRouter');
