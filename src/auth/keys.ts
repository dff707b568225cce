import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'cm_';

/** 32 random bytes, base64url: shown once, stored only as its sha256. */
export function generateKey(): string {
  return PREFIX + randomBytes(32).toString('base64url');
}

export function hashKey(plain: string): string {
  return createHash('sha256').update(plain, 'utf8').digest('hex');
}

/** Shape check before any lookup, so junk never reaches the database. */
export function looksLikeKey(plain: string): boolean {
  return plain.length === PREFIX.length + 43 && plain.startsWith(PREFIX) && /^[A-Za-z0-9_-]+$/.test(plain.slice(PREFIX.length));
}

export function sameHash(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
