import type { EntityManager } from '@mikro-orm/postgresql';
import type { TaskHandler } from '../../jobs/queue';
import type { WrittenEventSource } from '../events/event-source';

const ts = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** An API key as its events show it (row alias `k`): never the key itself nor its hash. */
export const apiKeyData = (k: string) => `json_build_object(
  'id', ${k}.id, 'scopes', ${k}.scopes, 'rateLimitPerHour', ${k}.rate_limit_per_hour, 'createdAt', ${ts(`${k}.created_at`)},
  'expiresAt', ${ts(`${k}.expires_at`)}, 'revokedAt', ${ts(`${k}.revoked_at`)}, 'lastUsedAt', ${ts(`${k}.last_used_at`)},
  'replacedBy', ${k}.replaced_by)`;

export type ApiKeyEventType = 'api_key.created' | 'api_key.rotated' | 'api_key.revoked' | 'api_key.expired';

/**
 * The community's API keys as an audit trail in its events (created, rotated, revoked, expired),
 * never the key or its hash; seen by keys holding api_keys:read (keys without scopes do).
 */
export const apiKeyEvents: WrittenEventSource = { resource: 'api_key', scope: 'api_keys', actions: ['created', 'rotated', 'revoked', 'expired'] };

/**
 * Writes an `api_key.*` event of the key's community in the caller's transaction (so it commits
 * with the change, or not at all), as the key is after the change. `opens` lets the outbox's
 * commit trigger give the transaction its place in the feed, as the capture triggers do.
 */
export async function recordKeyEvent(em: EntityManager, type: ApiKeyEventType, keyId: string): Promise<void> {
  await em.execute(
    `insert into events (community_id, type, record_id, data, opens)
     select k.community_id, ?, k.id, ${apiKeyData('k')}, true from api_keys k where k.id = ?`,
    [type, keyId],
  );
}

/**
 * The scheduled announcement of expiries: every key whose expiry has passed (and that was not
 * revoked) gets one `api_key.expired` event, marked in the same statement so it is written
 * once across instances. Returns how many.
 */
export async function announceExpiredKeys(em: EntityManager): Promise<number> {
  const rows: { n: string }[] = await em.execute(
    `with due as (
       update api_keys set expiry_announced_at = now()
        where expires_at <= now() and expiry_announced_at is null and revoked_at is null
       returning *),
     ins as (
       insert into events (community_id, type, record_id, data, opens)
       select k.community_id, 'api_key.expired', k.id, ${apiKeyData('k')}, true from due k order by k.expires_at, k.id
       returning 1)
     select count(*) as n from ins`,
  );
  return Number(rows[0]?.n ?? 0);
}

export const ANNOUNCE_EXPIRED_KEYS = 'api-keys:announce-expired';

/** Scheduled every minute (src/jobs/tasks.ts): one `api_key.expired` event per key that ran out. */
export const announceExpiredKeysTask: TaskHandler = async (_payload, _helpers, { orm, logger }) => {
  const announced = await announceExpiredKeys(orm.em.fork() as EntityManager);
  if (announced) logger.info({ announced }, 'expired API keys announced');
};
