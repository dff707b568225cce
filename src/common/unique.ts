import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { conflict } from '../errors/app-error';

/**
 * Runs a write and turns a unique violation of a known constraint into a 409
 * naming the field. Checking first would race with a concurrent writer.
 */
export async function mapUnique<T>(
  write: () => Promise<T>,
  constraints: Record<string, { path: (string | number)[]; detail: string }>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      const name = (err as unknown as { constraint?: string }).constraint ?? '';
      const hit = constraints[name] ?? Object.entries(constraints).find(([k]) => err.message.includes(k))?.[1];
      if (hit) throw conflict(hit.path, hit.detail);
    }
    throw err;
  }
}
