import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { refWhere, type RecordRef } from '../../common/ref';
import { withDeadlockRetry } from '../../db/transaction';
import { leanFindOne } from '../../db/lean';
import { notFound } from '../../errors/app-error';
import { Group } from '../groups/group.entity';

/** The caller's group, 404 when missing or another community's; optionally locked for update. */
export async function findGroup(em: EntityManager, communityId: string, groupRef: RecordRef, lock = false): Promise<Group> {
  const where = refWhere(groupRef, 'groupRef');
  let group: Group | null = null;
  if (where && lock) group = await em.findOne(Group, { ...where, communityId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  else if (where) group = await leanFindOne(em, Group, { ...where, communityId }); // reads need no entity
  if (!group) throw notFound('Group');
  return group;
}

/**
 * Runs `work` in one transaction that first locks the group row (`select ... for update`).
 * Every write that depends on the group's membership list (create: max + 1, reorder:
 * the full list, delete) takes this lock first, so they serialize per group and never
 * see each other's half-done work. A deadlock with a path that locks in the other order
 * (a member delete cascades to memberships, then its count trigger updates the group)
 * is retried (withDeadlockRetry): PostgreSQL rolled our attempt back entirely.
 */
export async function inLockedGroup<T>(
  em: EntityManager,
  communityId: string,
  groupRef: RecordRef,
  work: (tem: EntityManager, group: Group) => Promise<T>,
): Promise<T> {
  return withDeadlockRetry(em, async (tem) => work(tem, await findGroup(tem, communityId, groupRef, true)));
}
