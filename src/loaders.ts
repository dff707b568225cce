import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from './context';
import { byIds, leanByIds } from './db/lean';
import { Group } from './modules/groups/group.entity';
import { createMembershipLoaders, type MembershipLoaders } from './modules/memberships/membership.loaders';
import { createMemberLoaders, type MemberLoaders } from './modules/members/member.loaders';

/**
 * Per-request DataLoaders. They are built for one caller, so every batch is
 * scoped to that caller's community: a loader can never return a foreign row.
 */
export interface Loaders {
  group: DataLoader<string, Group | undefined>;
  /** Membership relations and the member-by-id loader they use (modules/memberships). */
  memberships: MembershipLoaders;
  /** Members' additional field values and the fields they point to (modules/members). */
  members: MemberLoaders;
}

export function createLoaders(em: EntityManager, caller: Caller | undefined): Loaders {
  const communityId = caller?.kind === 'key' ? caller.communityId : '00000000-0000-0000-0000-000000000000';
  return {
    group: new DataLoader(async (ids) => byIds(await leanByIds(em, Group, communityId, ids), ids)),
    memberships: createMembershipLoaders(em, communityId),
    members: createMemberLoaders(em, communityId),
  };
}
