import { ConnectionException, DeadlockException, LockWaitTimeoutException } from '@mikro-orm/core';

// 40P01/40001: a deadlock or serialization failure that outlived its retries; trying again works.
const CODES = new Set(['40P01', '40001', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300', '08006', '08001', '08003']);

/** True when the error means the database (or another store) is unreachable: a 503, not a bug. */
export function isUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    if (current instanceof ConnectionException || current instanceof DeadlockException || current instanceof LockWaitTimeoutException) return true;
    const code = (current as { code?: string }).code;
    if (code && CODES.has(code)) return true;
    const message = (current as { message?: string }).message ?? '';
    if (/Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED/i.test(message)) return true;
    current = (current as { originalError?: unknown; cause?: unknown }).originalError ?? (current as { cause?: unknown }).cause;
  }
  return false;
}
