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
      const hit = constraints[violated(err, Object.keys(constraints)) ?? ''];
      if (hit) throw conflict(hit.path, hit.detail);
    }
    throw err;
  }
}

/** Which of `names` a unique violation is about (the driver's constraint field, else the message). */
export function violated(err: UniqueConstraintViolationException, names: string[]): string | undefined {
  const name = (err as unknown as { constraint?: string }).constraint;
  return names.find((k) => k === name) ?? names.find((k) => err.message.includes(k));
}
