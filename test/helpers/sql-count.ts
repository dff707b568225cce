import type { Runtime } from '../../src/runtime';

export interface SqlStatement {
  /** `orm`: MikroORM (the GraphQL core); `pool`: the gate's pg pool (key lookup, rate limit). */
  source: 'orm' | 'pool';
  sql: string;
}

export interface SqlCounter {
  readonly statements: SqlStatement[];
  count(source?: SqlStatement['source']): number;
  reset(): void;
  stop(): void;
}

/**
 * Background work of the same process whose statements can land in a request's window, never
 * the request's own: the batched `lastUsedAt` write, a second after a key's first use in a
 * minute (src/auth/key-usage.ts), and the worker's hourly purge of idempotency keys. On a slow
 * machine a request can take that second (CI, 2026-11-28: a search page counted 4 statements
 * instead of 3).
 */
const BACKGROUND = [/^update api_keys k set last_used_at\b/, /^delete from idempotency_keys\b/];

/**
 * Records every SQL statement the app sends while installed (but BACKGROUND's). MikroORM 6 runs all SQL,
 * transaction control included, through its knex client, which emits `query` for each
 * statement; the gate's pg Pool is wrapped. Counts are exact only while nothing else
 * in this process talks to the database (vitest runs a file's tests one at a time).
 */
export function countSql(runtime: Runtime): SqlCounter {
  const statements: SqlStatement[] = [];
  const record = (statement: SqlStatement) => {
    if (!BACKGROUND.some((b) => b.test(statement.sql.trim()))) statements.push(statement);
  };
  const knex = (runtime.orm.em.getConnection() as unknown as { getKnex(): NodeJS.EventEmitter }).getKnex();
  const onQuery = (q: { sql?: string }) => record({ source: 'orm', sql: q.sql ?? '' });
  knex.on('query', onQuery);
  const pool = runtime.pool as unknown as { query: (...args: unknown[]) => unknown };
  const original = pool.query;
  pool.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    record({ source: 'pool', sql: typeof first === 'string' ? first : (first?.text ?? '') });
    return original.apply(this, args);
  };
  return {
    statements,
    count: (source) => statements.filter((s) => !source || s.source === source).length,
    reset: () => void (statements.length = 0),
    stop() {
      knex.off('query', onQuery);
      pool.query = original;
    },
  };
}

/** Runs `fn` (typically one HTTP request) and returns its result with the statements it caused. */
export async function withSqlCount<T>(runtime: Runtime, fn: () => Promise<T>): Promise<{ result: T; statements: SqlStatement[]; orm: number; all: number }> {
  const counter = countSql(runtime);
  try {
    const result = await fn();
    return { result, statements: [...counter.statements], orm: counter.count('orm'), all: counter.count() };
  } finally {
    counter.stop();
  }
}
