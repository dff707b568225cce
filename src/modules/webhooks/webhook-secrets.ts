import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SecretBox } from '../../security/secret-box';

/** `whsec_` + base64 of 24 random bytes (Standard Webhooks). */
export const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** How long deliveries are signed with the previous secret too, after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** A webhook secret as stored: sealed under the newest key, bound to its endpoint's id. */
export const sealSecret = (box: SecretBox, endpointId: string, plain: string) => box.seal(plain, `webhook_endpoints:${endpointId}`);

export const openSecret = (box: SecretBox, endpointId: string, sealed: string) => box.open(sealed, `webhook_endpoints:${endpointId}`);

/**
 * Seals what is not sealed with the box's newest key: `plaintext` only the secrets written before
 * encryption existed (at every start-up, a cheap scan of a small table); `all` also the ones
 * sealed under an older key (`npm run admin -- reencrypt-secrets`, after a new key was put
 * first). Row by row, each in its own statement; counts only, never a value, are returned.
 */
export async function resealWebhookSecrets(em: EntityManager, box: SecretBox, mode: 'plaintext' | 'all'): Promise<{ checked: number; resealed: number }> {
  const rows: { id: string; secret: string; previous_secret: string | null }[] = await em.execute(
    mode === 'plaintext'
      ? `select id, secret, previous_secret from webhook_endpoints where secret not like 'enc1:%' or previous_secret not like 'enc1:%'`
      : 'select id, secret, previous_secret from webhook_endpoints',
  );
  let resealed = 0;
  const reseal = (id: string, value: string) => {
    const plain = box.isSealed(value) ? openSecret(box, id, value) : value;
    return sealSecret(box, id, plain);
  };
  for (const row of rows) {
    const stale = (v: string | null) => v !== null && (!box.isSealed(v) || (mode === 'all' && !box.isCurrent(v)));
    if (!stale(row.secret) && !stale(row.previous_secret)) continue;
    await em.execute('update webhook_endpoints set secret = ?, previous_secret = ? where id = ? and secret = ?', [
      stale(row.secret) ? reseal(row.id, row.secret) : row.secret,
      row.previous_secret === null ? null : stale(row.previous_secret) ? reseal(row.id, row.previous_secret) : row.previous_secret,
      row.id,
      row.secret,
    ]);
    resealed++;
  }
  return { checked: rows.length, resealed };
}
