import { pagesPerOwner } from '../../db/sql';
import { pagesByOwner, type LoaderScope } from '../../loaders';
import type { PageWindow } from '../../common/pagination';
import { GroupMembership } from './membership.entity';
import { SORT_COLUMN } from './membership.inputs';

/** One page of memberships per owner: the group's (Group.memberships) or the member's (Member.memberships). */
function pagesOf(ownerColumn: 'group_id' | 'member_id') {
  return ({ em, communityId }: LoaderScope, ids: readonly string[], window: PageWindow) =>
    pagesPerOwner(
      em,
      {
        select: 'm.*',
        from: 'group_memberships m',
        where: `m.community_id = ?${window.modifiedSince ? ' and m.modified_at >= ?' : ''}`,
        params: [communityId, ...(window.modifiedSince ? [window.modifiedSince] : [])],
        owner: `m.${ownerColumn}`,
        // Column names come from a fixed map, never from the request.
        orderBy: window.orderBy.map((o) => Object.entries(o).map(([prop, dir]) => `m.${SORT_COLUMN[prop]} ${dir}`)[0]).join(', '),
      },
      ids,
      window,
      (row) => em.map(GroupMembership, row),
    );
}

export const groupMembershipPages = pagesByOwner(pagesOf('group_id'));
export const memberMembershipPages = pagesByOwner(pagesOf('member_id'));
