import type { Client } from 'pg';
import { SERVICE_ROLE } from '../../src/db/tenancy';

/**
 * `work` on `client` (a connection of the owner's) as the service role, under row-level
 * security, with `community` as the transaction's `app.community_id` (none: the policies admit
 * no tenant row); the transaction is rolled back after.
 */
export async function asServiceRole<T>(client: Client, community: string | null, work: () => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    await client.query(`set local role ${SERVICE_ROLE}`);
    if (community) await client.query(`select set_config('app.community_id', $1, true)`, [community]);
    return await work();
  } finally {
    await client.query('rollback');
  }
}

/**
 * `work`'s result, and the rows it read from each of `tables` on `client` (sequential reads and
 * index fetches): the difference of the backend's own counts not yet reported
 * (pg_stat_xact_user_tables), so it must run inside the transaction it measures.
 */
export async function rowsRead<T>(client: Client, tables: string[], work: () => Promise<T>): Promise<{ result: T; read: Record<string, number> }> {
  const counts = async () => {
    const { rows } = await client.query<{ relname: string; read: string }>(
      `select relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) as read from pg_stat_xact_user_tables where relname = any($1)`,
      [tables],
    );
    return Object.fromEntries(rows.map((r) => [r.relname, Number(r.read)]));
  };
  const before = await counts();
  const result = await work();
  const after = await counts();
  return { result, read: Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)])) };
}
