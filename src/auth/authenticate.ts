import type { Pool } from 'pg';
import { hashKey, looksLikeKey, sameHash } from './keys';
import type { KeyCache, KeyRecord } from './key-cache';
import { expandScopes } from './scopes';

/**
 * Looks a presented key up by its hash. The hash comparison after the indexed
 * lookup is constant-time, so no timing tells how much of a guess was right.
 */
export async function findKey(pool: Pool, plain: string, cache?: KeyCache): Promise<KeyRecord | null> {
  if (!looksLikeKey(plain)) return null;
  const hash = hashKey(plain);
  const cached = cache?.get(hash);
  if (cached !== undefined) return cached;
  const { rows } = await pool.query<{
    id: string;
    community_id: string;
    key_hash: string;
    scopes: string[];
    rate_limit_per_hour: number | null;
    revoked_at: Date | null;
    expires_at: Date | null;
  }>({
    name: 'find-api-key',
    text: 'select id, community_id, key_hash, scopes, rate_limit_per_hour, revoked_at, expires_at from api_keys where key_hash = $1',
    values: [hash],
  });
  const row = rows[0];
  const record = row && sameHash(row.key_hash, hash) ? toRecord(row) : null;
  cache?.set(hash, record);
  return record;
}

function toRecord(row: {
  id: string;
  community_id: string;
  scopes: string[];
  rate_limit_per_hour: number | null;
  revoked_at: Date | null;
  expires_at: Date | null;
}): KeyRecord {
  return {
    keyId: row.id,
    communityId: row.community_id,
    scopes: expandScopes(row.scopes),
    rateLimitPerHour: row.rate_limit_per_hour,
    revoked: row.revoked_at !== null,
    expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null,
  };
}
