import type { EntityManager } from '@mikro-orm/postgresql';
import { isId, orderedIds } from '../../common/ids';
import { MAX_MEMBERSHIPS_BULK, MEMBERSHIP } from '../../common/rules';
import { Checks } from '../../common/validate';
import { AppError, invalid, type FieldIssue } from '../../errors/app-error';
import type { Group } from '../groups/group.entity';
import { GroupMembership } from './membership.entity';
import type { CreateGroupMembershipInput } from './membership.inputs';

export const MAX_BULK = MAX_MEMBERSHIPS_BULK;
type Path = (string | number)[];
type MemberRow = { id: string; external_id: string | null };

/** Every memberId / memberExternalId of the batch, resolved in one query (community-scoped). */
async function loadMembers(em: EntityManager, communityId: string, items: CreateGroupMembershipInput[]) {
  const ids = [...new Set(items.map((i) => i.memberId).filter((v): v is string => typeof v === 'string' && isId(v)))];
  // A NUL cannot be stored (so matches nothing) and PostgreSQL rejects it in a literal.
  const exts = [...new Set(items.map((i) => i.memberExternalId).filter((v): v is string => typeof v === 'string' && !v.includes('\u0000')))];
  const or = [...(ids.length ? ['id in (?)'] : []), ...(exts.length ? ['external_id in (?)'] : [])];
  const rows: MemberRow[] = or.length
    ? await em.execute(`select id, external_id from members where community_id = ? and (${or.join(' or ')})`, [
        communityId,
        ...(ids.length ? [ids.map((id) => id.toLowerCase())] : []),
        ...(exts.length ? [exts] : []),
      ])
    : [];
  return { byId: new Map(rows.map((r) => [r.id, r])), byExt: new Map(rows.map((r) => [r.external_id, r])) };
}

/** Existing memberships of the group that clash with the batch (member already in, externalId taken). */
async function loadClashes(em: EntityManager, groupId: string, memberIds: string[], externalIds: string[]) {
  const or = [...(memberIds.length ? ['member_id in (?)'] : []), ...(externalIds.length ? ['external_id in (?)'] : [])];
  const rows: { member_id: string; external_id: string | null }[] = or.length
    ? await em.execute(`select member_id, external_id from group_memberships where group_id = ? and (${or.join(' or ')})`, [
        groupId,
        ...(memberIds.length ? [memberIds] : []),
        ...(externalIds.length ? [externalIds] : []),
      ])
    : [];
  return { members: new Set(rows.map((r) => r.member_id)), externalIds: new Set(rows.map((r) => r.external_id)) };
}

/** The per-field rules of one item, collected instead of thrown so a batch reports every item. */
function fieldIssues(item: CreateGroupMembershipInput, path: Path): FieldIssue[] {
  try {
    new Checks(path)
      .string('externalId', item.externalId, MEMBERSHIP.externalId)
      .string('title', item.title, MEMBERSHIP.title)
      .done();
    return [];
  } catch (err) {
    return (err as AppError).issues;
  }
}

/**
 * Creates memberships for `items` in the locked `group` (see inLockedGroup): validates
 * every item (400, one issue per bad field, nothing saved), then checks clashes with
 * existing memberships (409), then inserts all rows in ONE statement with order numbers
 * max+1..max+n. `pathOf(i)` is where item i sits in the GraphQL arguments.
 */
export async function insertMemberships(
  em: EntityManager,
  group: Group,
  items: CreateGroupMembershipInput[],
  pathOf: (i: number) => Path,
): Promise<GroupMembership[]> {
  const { byId, byExt } = await loadMembers(em, group.communityId, items);
  const issues: FieldIssue[] = [];
  const resolved: { memberId: string; field: 'memberId' | 'memberExternalId' }[] = [];
  const seenMember = new Map<string, number>();
  const seenExternal = new Map<string, number>();
  items.forEach((item, i) => {
    const at = (field: string, detail: string) => issues.push({ path: [...pathOf(i), field], detail });
    issues.push(...fieldIssues(item, pathOf(i)));
    const byIdRow = item.memberId != null ? byId.get(item.memberId.toLowerCase()) : undefined;
    const byExtRow = item.memberExternalId != null ? byExt.get(item.memberExternalId) : undefined;
    if (item.memberId == null && item.memberExternalId == null) at('memberId', 'memberId or memberExternalId is required');
    if (item.memberId != null && !byIdRow) at('memberId', 'memberId does not name a member of this community');
    if (item.memberExternalId != null && !byExtRow) at('memberExternalId', 'memberExternalId does not name a member of this community');
    if (byIdRow && byExtRow && byIdRow.id !== byExtRow.id) {
      at('memberId', 'memberId and memberExternalId name different members');
      at('memberExternalId', 'memberId and memberExternalId name different members');
    }
    const member = byIdRow ?? byExtRow;
    const field = item.memberId != null ? 'memberId' : 'memberExternalId';
    if (member) {
      const first = seenMember.get(member.id);
      if (first !== undefined) at(field, `the member is already listed at index ${first} of this request`);
      else seenMember.set(member.id, i);
      resolved[i] = { memberId: member.id, field };
    }
    if (typeof item.externalId === 'string') {
      const first = seenExternal.get(item.externalId);
      if (first !== undefined) at('externalId', `externalId is already used at index ${first} of this request`);
      else seenExternal.set(item.externalId, i);
    }
  });
  if (issues.length) throw invalid(issues);

  const clashes = await loadClashes(em, group.id, [...seenMember.keys()], [...seenExternal.keys()]);
  const conflicts: FieldIssue[] = [];
  items.forEach((item, i) => {
    if (clashes.members.has(resolved[i].memberId)) {
      conflicts.push({ path: [...pathOf(i), resolved[i].field], detail: 'the member already belongs to this group' });
    }
    if (item.externalId != null && clashes.externalIds.has(item.externalId)) {
      conflicts.push({ path: [...pathOf(i), 'externalId'], detail: 'externalId is already used by another membership of this group' });
    }
  });
  if (conflicts.length) throw new AppError('CONFLICT', conflicts.length === 1 ? conflicts[0].detail : 'Some memberships clash with existing ones', conflicts);

  // A batch shares one createdAt; time-ordered ids make the final tie-break (id asc) list it in input order.
  const ids = orderedIds(items.length);
  const now = new Date().toISOString();
  const rows = items.map((item, i) => ({
    id: ids[i],
    member_id: resolved[i].memberId,
    external_id: item.externalId ?? null,
    title: item.title ?? null,
    n: i + 1,
  }));
  const inserted: Record<string, unknown>[] = await em.execute(
    `insert into group_memberships
       (id, community_id, group_id, member_id, external_id, title, role, order_number, created_at, modified_at)
     select v.id, ?, ?, v.member_id, v.external_id, v.title, 'MEMBER',
            coalesce((select max(order_number) from group_memberships where group_id = ?), 0) + v.n, ?::timestamptz, ?::timestamptz
       from jsonb_to_recordset(?::jsonb) as v(id uuid, member_id uuid, external_id text, title text, n int)
     returning *`,
    [group.communityId, group.id, group.id, now, now, JSON.stringify(rows)],
  );
  const byNewId = new Map(inserted.map((r) => [r.id as string, r]));
  return ids.map((id) => em.map(GroupMembership, byNewId.get(id)!));
}
