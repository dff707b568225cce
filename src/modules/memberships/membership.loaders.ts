import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageWindow, toPage, type Page, type PageArgs } from '../../common/pagination';
import { byIds, leanByIds } from '../../db/lean';
import { Member } from '../members/member.entity';
import { GroupMembership } from './membership.entity';
import { SORT_COLUMN } from './membership.inputs';

/** Which side of the membership a page hangs from: Group.memberships or Member.memberships. */
export type MembershipOwner = 'group' | 'member';
const OWNER_COLUMN: Record<MembershipOwner, string> = { group: 'group_id', member: 'member_id' };

export interface MembershipLoaders {
  /** Member by id, as a plain row (GroupMembership.member and memberExternalId). */
  member: DataLoader<string, Member | undefined>;
  /** One page of memberships per owner id; one loader per distinct page arguments. */
  page(owner: MembershipOwner, args: PageArgs): DataLoader<string, Page<GroupMembership>>;
}

/**
 * One query for the pages of ALL owners of a batch: row_number() numbers each owner's
 * memberships in the requested order, and only the window skip+1..skip+limit+1 is kept
 * (one extra row tells whether a next page exists, as in toPage).
 */
async function loadPages(em: EntityManager, communityId: string, owner: MembershipOwner, args: PageArgs, ids: readonly string[]) {
  const { limit, skip, orderBy, modifiedSince } = pageWindow(args);
  const column = OWNER_COLUMN[owner];
  // Column names come from fixed maps, never from the request.
  const order = orderBy.map((o) => Object.entries(o).map(([prop, dir]) => `m.${SORT_COLUMN[prop]} ${dir}`)).join(', ');
  const rows: (Record<string, unknown> & { rn: string })[] = await em.execute(
    `select * from (
       select m.*, row_number() over (partition by m.${column} order by ${order}) as rn
         from group_memberships m
        where m.community_id = ? and m.${column} in (?)${modifiedSince ? ' and m.modified_at >= ?' : ''}
     ) t where t.rn > ? and t.rn <= ? order by t.${column}, t.rn`,
    [communityId, [...ids], ...(modifiedSince ? [modifiedSince] : []), skip, skip + limit + 1],
  );
  const byOwner = new Map<string, GroupMembership[]>(ids.map((id) => [id, []]));
  for (const { rn: _rn, ...row } of rows) byOwner.get(row[column] as string)?.push(em.map(GroupMembership, row));
  return ids.map((id) => toPage(byOwner.get(id) ?? [], limit, skip));
}

/** Built per request for one community, so no batch can return another community's rows. */
export function createMembershipLoaders(em: EntityManager, communityId: string): MembershipLoaders {
  const pages = new Map<string, DataLoader<string, Page<GroupMembership>>>();
  return {
    member: new DataLoader(async (ids) => byIds(await leanByIds(em, Member, communityId, ids), ids)),
    page(owner, args) {
      pageWindow(args); // bad limit/skip: a 400 on the field, not a failed batch
      const key = JSON.stringify([owner, args.limit, args.skip, args.sort, args.modifiedSince]);
      let loader = pages.get(key);
      if (!loader) {
        loader = new DataLoader((ids) => loadPages(em, communityId, owner, args, ids));
        pages.set(key, loader);
      }
      return loader;
    },
  };
}
