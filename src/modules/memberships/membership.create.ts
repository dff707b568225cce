import type { EntityManager } from '@mikro-orm/postgresql';
import { isId, orderedIds } from '../../common/ids';
import { MEMBERSHIP } from '../../common/rules';
import { Checks, rejectInvalid, under, type Path } from '../../common/validate';
import { anyOf, arrayOf } from '../../db/sql';
import { record, bound } from '../../db/write';
import { AppError, type FieldIssue } from '../../errors/app-error';
import type { Group } from '../groups/group.entity';
import { GroupMembership, MembershipRole } from './membership.entity';
import type { CreateGroupMembershipInput, UpdateGroupMembershipInput } from './membership.inputs';

type MemberRow = { id: string; external_id: string | null };

/**
 * Every memberId / memberExternalId of the batch, resolved in one query (community-scoped).
 * The found members are share-locked (`for key share`) until the insert commits: a member
 * deleted concurrently is either gone before this read (a 400 naming its item) or waits
 * for this transaction and then takes the new memberships with it; never a foreign key error.
 */
async function loadMembers(em: EntityManager, communityId: string, items: CreateGroupMembershipInput[]) {
  const ids = [...new Set(items.map((i) => i.memberId).filter((v): v is string => typeof v === 'string' && isId(v)))];
  // A NUL cannot be stored (so matches nothing) and PostgreSQL rejects it in a literal.
  const exts = [...new Set(items.map((i) => i.memberExternalId).filter((v): v is string => typeof v === 'string' && !v.includes('\u0000')))];
  const rows: MemberRow[] = ids.length || exts.length
    ? await bound<MemberRow>(em, `select id, external_id from members where community_id = ? and (id = ${anyOf('uuid')} or external_id = ${anyOf()}) for key share`, [
        communityId,
        arrayOf(ids.map((id) => id.toLowerCase())),
        arrayOf(exts),
      ], items.length > 1 ? 'replan' : 'cached')
    : [];
  return { byId: new Map(rows.map((r) => [r.id, r])), byExt: new Map(rows.map((r) => [r.external_id, r])) };
}

/** Existing memberships of the group that clash with the batch (member already in, externalId taken). */
async function loadClashes(em: EntityManager, group: Group, memberIds: string[], externalIds: string[]) {
  const rows: { member_id: string; external_id: string | null }[] = memberIds.length || externalIds.length
    ? await bound<{ member_id: string; external_id: string | null }>(
        em,
        // Both unique indexes lead with the community (under DB_ROW_SECURITY=off no policy adds it).
        `select member_id, external_id from group_memberships
          where community_id = ? and group_id = ? and (member_id = ${anyOf('uuid')} or external_id = ${anyOf()})`,
        [group.communityId, group.id, arrayOf(memberIds), arrayOf(externalIds)],
        memberIds.length + externalIds.length > 1 ? 'replan' : 'cached',
      )
    : [];
  return { members: new Set(rows.map((r) => r.member_id)), externalIds: new Set(rows.map((r) => r.external_id)) };
}

/** The field rules of a membership body (create item or patch), relative to it. */
export function membershipIssues(item: CreateGroupMembershipInput | UpdateGroupMembershipInput): FieldIssue[] {
  return new Checks()
    .string('externalId', item.externalId, MEMBERSHIP.externalId)
    .string('title', item.title, MEMBERSHIP.title).issues;
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
    issues.push(...under(pathOf(i), membershipIssues(item)));
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
  rejectInvalid(issues);

  const clashes = await loadClashes(em, group, [...seenMember.keys()], [...seenExternal.keys()]);
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

  return appendMemberships(
    em,
    group.communityId,
    items.map((item, i) => ({ groupId: group.id, memberId: resolved[i].memberId, externalId: item.externalId ?? null, title: item.title ?? null })),
  );
}

export interface NewMembership {
  groupId: string;
  memberId: string;
  externalId?: string | null;
  title?: string | null;
}

/**
 * The one way memberships are added, by REST, GraphQL and imports: appended at the end of
 * each group's order (max + 1, max + 2, ... in the order given) in ONE statement, role
 * MEMBER, time-ordered ids and one createdAt, so a batch lists in input order. The caller
 * holds the row locks of the groups (inLockedGroup, or `for update` in id order), so the
 * maximum read here stays the maximum; the count triggers keep membershipCount exact.
 * Each group's maximum is one backward probe of its order index, not an aggregate over
 * the group memberships of the batch's groups (a plan that read all 50,000 of the bench's).
 * Answers the new memberships in the order given.
 */
export async function appendMemberships(em: EntityManager, communityId: string, items: NewMembership[], now = new Date()): Promise<GroupMembership[]> {
  if (!items.length) return [];
  const ids = orderedIds(items.length);
  const rows = items.map((item, i) => ({
    id: ids[i],
    group_id: item.groupId,
    member_id: item.memberId,
    external_id: item.externalId ?? null,
    title: item.title ?? null,
    n: i,
  }));
  const at = now.toISOString();
  const inserted = await bound<{ id: string; order_number: number }>(
    em,
    `with v as (select * from jsonb_to_recordset(?::jsonb) as v(id uuid, group_id uuid, member_id uuid, external_id text, title text, n int)),
          top as (select d.group_id, (select max(g.order_number) from group_memberships g where g.community_id = ?::uuid and g.group_id = d.group_id) as top
                   from (select distinct group_id from v) d)
     insert into group_memberships
       (id, community_id, group_id, member_id, external_id, title, role, order_number, created_at, modified_at)
     select v.id, ?::uuid, v.group_id, v.member_id, v.external_id, v.title, 'MEMBER',
            coalesce(top.top, 0) + row_number() over (partition by v.group_id order by v.n),
            ?::timestamptz, ?::timestamptz
       from v left join top on top.group_id = v.group_id
     returning id, order_number`,
    [JSON.stringify(rows), communityId, communityId, at, at],
    items.length > 1 ? 'replan' : 'cached', // a bulk or an import batch: planned for its rows (bound)
  );
  // Plain records, as insertRecords answers (src/db/write.ts): no identity map to fill for an import.
  const orderOf = new Map(inserted.map((r) => [r.id, Number(r.order_number)]));
  return items.map((item, i) =>
    record(GroupMembership, {
      id: ids[i],
      communityId,
      groupId: item.groupId,
      memberId: item.memberId,
      externalId: item.externalId ?? null,
      title: item.title ?? null,
      orderNumber: orderOf.get(ids[i])!,
      role: MembershipRole.MEMBER,
      createdAt: now,
      modifiedAt: now,
    }),
  );
}
