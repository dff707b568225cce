import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import { isDeadlock, joinTransaction, retryDeadlocks } from '../db/transaction';
import { deferStatement, holdStatement } from '../db/prepared';
import type { HeldRows } from '../db/tenancy';
import { problem, type Problem } from '../errors/problem';
import { AppError } from '../errors/app-error';
import type { Answer } from './answer';
import type { SecretBox } from '../security/secret-box';

/**
 * Idempotency-Key (docs/api.md, "Safe retries and conditional requests"), in the spirit of
 * the IETF draft "The Idempotency-Key HTTP Header Field": the first answer to a key is
 * stored for 24 hours per API key; a repeat of the same request gets it again.
 *
 * Correctness rests on PostgreSQL alone, so it holds across instances and crashes:
 * - the request runs in ONE transaction that also writes the stored answer, so the effects
 *   and the record commit together or not at all (a crash mid-request leaves neither, and
 *   the retry runs afresh); the primary key (API key, key) forbids a second record;
 * - that transaction first looks the key up and takes a transaction-scoped advisory lock on
 *   (API key, key) with `pg_try_advisory_xact_lock`, in one statement sent in front of the
 *   operation's first statement (holdStatement): when the key has its answer already, or
 *   another request holds the lock, that first statement fails, nothing after it runs, the
 *   transaction is rolled back and the request replays the answer or answers 409. A concurrent
 *   request with the same key does not wait for the key (its first statement may wait for a
 *   row the other one is writing); the lock goes with the commit, after which the record is
 *   visible.
 *
 * What is stored: 2xx answers, and the 400/404/409/422 answers of the operation. Those keep
 * no effects: the answer is stored by a single statement on another connection while the
 * request's transaction still holds the key, then that transaction is rolled back (no
 * savepoint on the common path: every round trip counts, see bench). 401/403/429/5xx are
 * not stored: they depend on the moment, not on the request, and the effects are rolled back.
 *
 * Cost (docs/performance.md, "Decisions"): a key adds two statements to the request's
 * transaction, both prepared once per connection, and no round trip of their own: the lookup
 * goes with the operation's first statement (holdStatement), the answer's INSERT with the
 * COMMIT (deferStatement); the operation joins the transaction
 * (`joinTransaction`: no savepoint of its own). A deadlock aborts the whole transaction,
 * so it is retried here as a whole, like the operation alone would retry itself.
 */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const IDEMPOTENCY_TTL_HOURS = 24;

const KEY = /^[\x20-\x7E]{1,255}$/;
export const STORED_ERRORS = new Set([400, 404, 409, 422]);

/** The key of a POST, or a 400 problem for a malformed one; undefined without the header. */
export function idempotencyKeyOf(req: Request): { key?: string; problem?: Problem } {
  const key = req.get(IDEMPOTENCY_HEADER);
  if (key === undefined) return {};
  if (!KEY.test(key)) {
    const detail = 'Idempotency-Key must be 1-255 printable ASCII characters';
    return { problem: problem(400, detail, [{ pointer: '#/header/Idempotency-Key', detail }]) };
  }
  return { key };
}

/** Method, path with query, and body: what a repeat must match to be "the same request". */
export function fingerprintOf(req: Request, body: unknown): string {
  return createHash('sha256')
    .update(`${req.method} ${req.originalUrl}\n`)
    .update(body === undefined ? '' : JSON.stringify(body))
    .digest('base64url');
}

/** Thrown through MikroORM's transactional() to roll back while keeping the answer. */
class Discard extends Error {
  constructor(readonly answer: Answer) {
    super('discard');
  }
}

/** The operation deadlocked: PostgreSQL aborted the transaction, which is run again. */
class Deadlocked extends Error {
  constructor(readonly answer: Answer) {
    super('deadlocked');
  }
}

export interface IdempotentRun {
  em: EntityManager;
  /** A pool apart from the ORM's: an error answer is stored through it while the request's transaction still holds the key. */
  pool: Pool;
  /** Seals the stored answers (the runtime's SECRET_BOX). */
  box: SecretBox;
  owner: string;
  key: string;
  fingerprint: string;
  /** Runs the request on the given transaction's entity manager. */
  run: (em: EntityManager) => Promise<Answer>;
  /** Builds a problem answer of this request (path, request id). */
  problemAnswer: (p: Problem) => Answer;
}

type Stored = { fingerprint: string; status: number; content_type: string; body: string; headers: Record<string, string> | null };

/** Inserts the answer unless a live one exists (an expired one is replaced); false when one existed. */
const INSERT = `insert into idempotency_keys (owner, key, fingerprint, status, content_type, body, headers, expires_at)
  values ($1, $2, $3, $4, $5, $6, $7::jsonb, now() + interval '${IDEMPOTENCY_TTL_HOURS} hours')
  on conflict (owner, key) do update set fingerprint = excluded.fingerprint, status = excluded.status,
    content_type = excluded.content_type, body = excluded.body, headers = excluded.headers, created_at = now(), expires_at = excluded.expires_at
  where idempotency_keys.expires_at <= now()
  returning 1`;

/**
 * The INSERT as the transaction's last write, sent in the COMMIT's round trip (deferStatement,
 * src/db/prepared.ts). An answer stored meanwhile for the key (a request that committed between
 * this one's snapshot and its lock) inserts no row, and the division makes that an error
 * (22012, division_by_zero): PostgreSQL then skips the COMMIT and the transaction is rolled
 * back, as the row count of 0 did before, one round trip later.
 */
const STORE = `with stored as (${INSERT}) select 1 / count(*)::int as stored from stored`;
const STORED_MEANWHILE = '22012';

/**
 * One statement: the stored answer if any, and the key's advisory lock (not waiting). The
 * snapshot is taken before the lock, so a request that committed just in between is not
 * seen here; the INSERT at the end then meets its row and this attempt is rolled back and
 * answered from the stored row (replay), never committed twice.
 */
const LOOKUP = `select pg_try_advisory_xact_lock(hashtextextended('idempotency:' || $1 || ':' || $2, 0)) as locked, k.fingerprint, k.status, k.content_type, k.body, k.headers
  from (select 1) one left join idempotency_keys k on k.owner = $1 and k.key = $2 and k.expires_at > now()`;

/** The operation must not go on: the key has its answer, or another request holds it. */
const settled = (found: { locked: boolean; stored?: Stored }) => found.stored !== undefined || !found.locked;
const SUPERSEDED = 'This Idempotency-Key already has its answer, or another request holds it';

/** LOOKUP's one row, as raw text columns (holdStatement): locked, then the stored answer's columns or nulls. */
function foundOf(rows: HeldRows): { locked: boolean; stored?: Stored } {
  const [locked, fingerprint, status, contentType, body, headers] = rows[0];
  return {
    locked: locked === 't',
    ...(fingerprint !== null
      ? { stored: { fingerprint, status: Number(status), content_type: contentType!, body: body!, headers: headers === null ? null : (JSON.parse(headers) as Record<string, string>) } }
      : {}),
  };
}

export async function runIdempotent({ em, pool, box, owner, key, fingerprint, run, problemAnswer }: IdempotentRun): Promise<Answer> {
  const reused = () => {
    const detail = 'This Idempotency-Key was already used with another request (method, path or body)';
    return problemAnswer(problem(422, detail, [{ pointer: '#/header/Idempotency-Key', detail }]));
  };
  // Stored answers are sealed (docs/security.md): some carry a secret shown once (a webhook
  // endpoint's, a rotated one, an operator's new API key), and none belongs in the database in clear.
  const sealedFor = `idempotency_keys:${owner}:${key}`;
  const replay = (stored: Stored): Answer =>
    stored.fingerprint !== fingerprint
      ? reused()
      : {
          status: stored.status,
          contentType: stored.content_type,
          body: box.isSealed(stored.body) ? box.open(stored.body, sealedFor) : stored.body,
          headers: { ...stored.headers, [REPLAYED_HEADER]: 'true' },
        };
  const busy = () => problemAnswer(problem(409, 'A request with this Idempotency-Key is still being processed; retry later'));
  let raced = false;
  /** The answer's INSERT was sent (with the COMMIT): a 22012 from here on is STORE's. */
  let storing = false;
  const attempt = () =>
    em.transactional(async (tx) => {
      storing = false;
      // The lookup goes with the operation's first statement (holdStatement): its verdict is
      // read once the operation is done, and an operation that should not have run is rolled back.
      const lookup = await holdStatement(tx, LOOKUP, [owner, key], (rows) => (settled(foundOf(rows)) ? new AppError('CONFLICT', SUPERSEDED) : undefined));
      joinTransaction(tx);
      const answer = await run(tx);
      const found = foundOf(await lookup());
      if (found.stored) throw new Discard(replay(found.stored));
      if (!found.locked) throw new Discard(busy());
      if (answer.deadlocked) throw new Deadlocked(answer);
      const status = answer.classifyAs ?? answer.status;
      // The answer's own headers (e.g. Location) are part of it; Retry-After and the like never are (5xx is not stored).
      const row = [owner, key, fingerprint, answer.status, answer.contentType, box.seal(answer.body, sealedFor), JSON.stringify(answer.headers ?? {})];
      if (status >= 300) {
        // An error answer keeps no effects: store it on another connection while this
        // transaction still holds the key (no other request can slip in), then roll back.
        if (STORED_ERRORS.has(status)) raced = (await pool.query(INSERT, row)).rowCount === 0;
        throw new Discard(STORED_ERRORS.has(status) ? answer : { ...answer, discarded: true });
      }
      storing = true;
      await deferStatement(tx, STORE, row);
      return answer;
    });
  try {
    // A keyed request that deadlocked (PostgreSQL aborted the whole transaction) runs again
    // under the one retry policy (src/db/transaction.ts); the last deadlocked answer is sent, not stored.
    return await retryDeadlocks(attempt, (err) => isDeadlock(err) || err instanceof Deadlocked).catch((err) => {
      throw err instanceof Deadlocked ? new Discard({ ...err.answer, discarded: true }) : err;
    });
  } catch (err) {
    const meanwhile = storing && (err as { code?: string })?.code === STORED_MEANWHILE;
    if (!meanwhile && !(err instanceof Discard)) throw err;
    if (!meanwhile && !raced) return (err as Discard).answer;
    // Another request with this key committed between our snapshot and our lock: answer as it did.
    const { rows } = await pool.query<Stored>('select fingerprint, status, content_type, body, headers from idempotency_keys where owner = $1 and key = $2', [owner, key]);
    return rows[0] ? replay(rows[0]) : meanwhile ? busy() : (err as Discard).answer;
  }
}

/** The scheduled purge (src/jobs): expired keys in batches, so no run holds many row locks. */
export async function purgeExpiredKeys(em: EntityManager, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const res = await em.execute<{ affectedRows?: number } & unknown[]>(
      'delete from idempotency_keys where ctid in (select ctid from idempotency_keys where expires_at <= now() limit ?)',
      [batch],
      'run',
    );
    const deleted = Number((res as { affectedRows?: number }).affectedRows ?? 0);
    total += deleted;
    if (deleted < batch) return total;
  }
}
