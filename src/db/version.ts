import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../errors/app-error';

/**
 * A record's version is PostgreSQL's `xmin` of its row, as text: the id of the transaction
 * that wrote the row's current version. Every write of the row (whatever the code path:
 * entity flush, set-based SQL, a trigger keeping a count) gives it a new value, even two
 * writes within one millisecond, which `modifiedAt` could not tell apart. It needs no column,
 * no trigger and no code on the write paths. It is opaque to clients (the REST ETag, the
 * GraphQL `version` field); a restore from a logical backup changes every version, which
 * only costs clients a re-read (their If-Match then fails safe with 412).
 */
export const VERSION_COLUMN = (alias: string): string => `${alias}.xmin::text`;

/**
 * The entities whose records carry a version (GraphQL `version`, REST ETag/If-Match, lean rows
 * select it): each feature module lists its own in `versioned` (src/modules/module.ts).
 */
const versioned = new Set<EntityClass<object>>();

/** Called once with every feature module's `versioned` (src/modules/index.ts). */
export function registerVersioned(entities: EntityClass<object>[]): void {
  for (const entity of entities) versioned.add(entity);
}

export const isVersioned = (entity: EntityClass<object>): boolean => versioned.has(entity);

export const preconditionFailed = (): AppError =>
  new AppError('PRECONDITION_FAILED', 'The record was changed since the version given (If-Match / expectedVersion); read it again', [
    { path: ['expectedVersion'], detail: 'The record has another version now' },
  ]);

/**
 * The conditional-write check: locks the row (`for update`) and compares its version with
 * the expected one, in the caller's transaction. The write that follows in the same
 * transaction cannot interleave with another writer, so there is no window between check
 * and write; a concurrent writer that changed the row first makes this one fail with 412.
 * No expectation: nothing to check (and no lock taken).
 */
export async function assertVersion(em: EntityManager, table: string, id: string, expected: string | null | undefined): Promise<void> {
  if (expected == null) return;
  const rows: { version: string }[] = await em.execute(`select ${VERSION_COLUMN('t')} as version from ${table} t where t.id = ? for update`, [id]);
  if (rows[0]?.version !== expected) throw preconditionFailed();
}

/** The argument of conditional updates and deletes (GraphQL); REST passes `If-Match` into it. */
export const EXPECTED_VERSION =
  'The version (field `version`) the change is based on: the write happens only if the record still has it, ' +
  'else PRECONDITION_FAILED (REST: 412). Omitted: unconditional.';
