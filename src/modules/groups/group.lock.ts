import type { EntityManager } from '@mikro-orm/postgresql';
import { anyOf, arrayOf } from '../../db/sql';

/** Which groups to lock: by id, by the community's externalIds, or those a member belongs to. */
export type GroupSet = { ids: Iterable<string> } | { communityId: string; externalIds: Iterable<string> } | { groupsOf: string };

/**
 * Locks groups `for update` in id order, in em's transaction, and returns the selected columns
 * (`id` unless `columns` says otherwise, e.g. `id, external_id`). Every writer that touches
 * several groups' memberships or counts (membership writers, imports, a member delete whose
 * cascade updates its groups' counts) locks them this way first, in this one order, so two
 * such writers never wait for each other in a cycle.
 */
export async function lockGroups<R extends object = { id: string }>(em: EntityManager, set: GroupSet, columns = 'id'): Promise<R[]> {
  const [where, params]: [string, unknown[]] =
    'ids' in set
      ? [`id = ${anyOf('uuid')}`, [arrayOf(set.ids)]]
      : 'externalIds' in set
        ? [`community_id = ? and external_id = ${anyOf()}`, [set.communityId, arrayOf(set.externalIds)]]
        : ['id in (select group_id from group_memberships where member_id = ?)', [set.groupsOf]];
  return em.execute<R[]>(`select ${columns} from groups where ${where} order by id for update`, params);
}
