import { UniqueConstraintViolationException, type EntityClass } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TenantRecord } from '../../db/tenant-record';
import { insertRecords, updateByExternalId } from '../../db/write';
import type { FieldIssue } from '../../errors/app-error';

/** One problem with one data row; rows are numbered from 1 (JSON: index + 1; CSV: record after the header). */
export interface RowIssue {
  row: number;
  field: string | null;
  detail: string;
}

export interface NumberedRow<T> {
  row: number;
  data: T;
}

export interface BatchOutcome {
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  membershipsCreated: number;
  issues: RowIssue[];
}

/** What one run remembers across its batches (rebuilt from the rows when a run resumes). */
export interface RunState {
  /** externalId -> first row that names it; later rows with it are duplicates. */
  firstRow: Map<string, number>;
  /** lower(emailAddress) -> externalId of the first row claiming it in this file. */
  emailOwner: Map<string, string>;
}

/** A path relative to the row (`['additionalFields', 0, 'id']`) -> `additionalFields.0.id`; an empty path concerns the whole row. */
export function fieldOf(path: (string | number)[]): string | null {
  return path.length ? path.join('.') : null;
}

/** A row naming an externalId that an earlier row already gave is one issue (the first row wins). */
export function repeatsEarlierRow(state: RunState, issues: RowIssues, row: number, externalId: string): boolean {
  const first = state.firstRow.get(externalId);
  if (first === row) return false;
  issues.add(row, 'externalId', `externalId "${externalId}" was already given in row ${first}`);
  return true;
}

/**
 * Writes the good rows of a batch with the same set-based writers as the API
 * (src/db/write.ts): new records (time-ordered ids, one createdAt) and the changed values
 * of existing ones; `inserted` tells a created row from an updated one.
 */
export async function writeByExternalId<T extends TenantRecord & { externalId?: string | null }, V extends { row: number; exists: boolean; externalId: string }>(
  em: EntityManager,
  entity: EntityClass<T> & (new () => T),
  communityId: string,
  fields: (keyof T & string)[],
  rows: V[],
  now: Date,
): Promise<{ inserted: boolean }[]> {
  const values = ({ row: _row, exists: _exists, ...v }: V) => v as unknown as { externalId: string } & Partial<T>;
  const created = await insertRecords(em, entity, communityId, rows.filter((r) => !r.exists).map(values), now);
  const updated = await updateByExternalId(em, entity, communityId, fields as never[], rows.filter((r) => r.exists).map(values), now);
  return [...created.map(() => ({ inserted: true })), ...updated.map(() => ({ inserted: false }))];
}

/** Collects the issues of a batch and which rows failed. */
export class RowIssues {
  readonly list: RowIssue[] = [];
  private readonly rows = new Set<number>();

  add(row: number, field: string | null, detail: string): void {
    this.list.push({ row, field, detail });
    this.rows.add(row);
  }

  addAll(row: number, issues: FieldIssue[]): void {
    for (const issue of issues) this.add(row, fieldOf(issue.path), issue.detail);
  }

  has(row: number): boolean {
    return this.rows.has(row);
  }

  get failedRows(): number {
    return this.rows.size;
  }
}

/**
 * Set-based write first, inside a savepoint. When a unique constraint still trips (a
 * concurrent writer, or values swapped between rows of one batch), the batch is written row
 * by row, each in its own savepoint, so only the offending rows fail.
 */
export async function writeRows<T, R>(
  tx: EntityManager,
  rows: T[],
  write: (em: EntityManager, rows: T[]) => Promise<R[]>,
  onConflict: (row: T, err: UniqueConstraintViolationException) => void,
): Promise<R[]> {
  if (!rows.length) return [];
  try {
    return await tx.transactional((sp) => write(sp, rows));
  } catch (err) {
    if (!(err instanceof UniqueConstraintViolationException)) throw err;
  }
  const results: R[] = [];
  for (const row of rows) {
    try {
      results.push(...(await tx.transactional((sp) => write(sp, [row]))));
    } catch (err) {
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
      onConflict(row, err);
    }
  }
  return results;
}

/** Counts of an upsert that returned `inserted` for every row it wrote (unchanged rows return nothing). */
export function countWrites(written: { inserted: boolean }[], attempted: number) {
  const created = written.filter((w) => w.inserted).length;
  return { created, updated: written.length - created, unchanged: attempted - written.length };
}
