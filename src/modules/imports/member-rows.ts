import type { EntityManager } from '@mikro-orm/postgresql';
import { violated } from '../../common/unique';
import { anyOf, arrayOf } from '../../db/sql';
import { bound } from '../../db/write';
import { lockGroups } from '../groups/group.lock';
import { Member } from '../members/member.entity';
import { appendMemberships, type NewMembership } from '../memberships/membership.create';
import { EMAIL_HOLDERS, memberIssues } from '../members/member.checks';
import type { MemberImportRow } from './import.inputs';
import { countWrites, repeatsEarlierRow, RowIssues, writeByExternalId, writeRows, type BatchOutcome, type NumberedRow, type RunState } from './rows';

interface MemberValues {
  row: number;
  exists: boolean;
  externalId: string;
  firstName: string | null;
  lastName: string | null;
  emailAddress: string | null;
}

/**
 * Memberships named by groupExternalIds, appended at the end of each group's order by the
 * memberships module's own writer (appendMemberships); existing ones are skipped. The group
 * rows are locked first (in id order), as every membership writer does.
 */
async function addMemberships(em: EntityManager, communityId: string, pairs: { externalId: string; groupId: string }[], now: Date) {
  if (!pairs.length) return 0;
  const groupIds = [...new Set(pairs.map((p) => p.groupId))];
  await lockGroups(em, { ids: groupIds });
  const members = await em.execute<{ id: string; external_id: string }[]>(
    `select id, external_id from members where community_id = ? and external_id = ${anyOf()}`,
    [communityId, arrayOf(new Set(pairs.map((p) => p.externalId)))],
  );
  const memberId = new Map(members.map((m) => [m.external_id, m.id]));
  const existing = await em.execute<{ group_id: string; member_id: string }[]>(
    `select group_id, member_id from group_memberships where member_id = ${anyOf('uuid')} and group_id = ${anyOf('uuid')}`,
    [arrayOf(memberId.values()), arrayOf(groupIds)],
  );
  const taken = new Set(existing.map((e) => `${e.group_id}/${e.member_id}`));
  const rows: NewMembership[] = [];
  for (const { externalId, groupId } of pairs) {
    const member = memberId.get(externalId);
    if (!member || taken.has(`${groupId}/${member}`)) continue;
    taken.add(`${groupId}/${member}`);
    rows.push({ groupId, memberId: member });
  }
  return (await appendMemberships(em, communityId, rows, now)).length;
}

/**
 * One batch of a member import, in the caller's transaction. Field rules come from the
 * members module (memberIssues); emailAddress must be unique in the community, checked
 * against the file so far and the database (locked rows), and finally by its unique index.
 */
export async function applyMemberBatch(
  tx: EntityManager,
  communityId: string,
  batch: NumberedRow<MemberImportRow>[],
  state: RunState,
): Promise<BatchOutcome> {
  const issues = new RowIssues();
  const emails = batch.map((r) => r.data.emailAddress).filter((e): e is string => typeof e === 'string');
  const groupRefs = new Set(batch.flatMap((r) => r.data.groupExternalIds ?? []));
  // Lock order of every membership writer: the groups first (in id order), then the members
  // (a member delete does the same, so the two can never wait for each other in a cycle).
  // (A batch naming no group locks none: one round trip less per batch.)
  const groups = groupRefs.size ? await lockGroups<{ id: string; external_id: string }>(tx, { communityId, externalIds: groupRefs }, 'id, external_id') : [];
  const existing = await bound<{ external_id: string; first_name: string | null; last_name: string | null; email_address: string | null }>(
    tx,
    `select external_id, first_name, last_name, email_address from members
      where community_id = ? and external_id = ${anyOf()}
      order by id for update`,
    [communityId, arrayOf(batch.map((r) => r.data.externalId))],
    'replan',
  );
  const emailHolders = await bound<{ external_id: string | null; email: string }>(
    tx,
    EMAIL_HOLDERS,
    [communityId, arrayOf(emails.map((e) => e.toLowerCase()))],
  );
  const current = new Map(existing.map((m) => [m.external_id, m]));
  const holder = new Map(emailHolders.map((h) => [h.email, h.external_id]));
  const groupId = new Map(groups.map((g) => [g.external_id, g.id]));

  const good: MemberValues[] = [];
  const pairs: { externalId: string; groupId: string }[] = [];
  for (const { row, data } of batch) {
    if (repeatsEarlierRow(state, issues, row, data.externalId)) continue;
    const before = current.get(data.externalId);
    const { groupExternalIds, ...fields } = data;
    issues.addAll(row, memberIssues(fields, !before));
    (groupExternalIds ?? []).forEach((ref, i) => {
      if (!groupId.has(ref)) issues.add(row, `groupExternalIds.${i}`, `No group with externalId "${ref}" in this community`);
    });
    const pick = (key: 'firstName' | 'lastName' | 'emailAddress', fallback: string | null | undefined) =>
      (data[key] !== undefined ? data[key] : fallback) ?? null;
    const email = pick('emailAddress', before?.email_address);
    if (email && !issues.has(row)) {
      const lower = email.toLowerCase();
      const owner = state.emailOwner.get(lower) ?? (holder.has(lower) ? holder.get(lower) : data.externalId);
      if (owner !== data.externalId) issues.add(row, 'emailAddress', 'emailAddress is already used by another member');
    }
    if (issues.has(row)) continue;
    if (email) state.emailOwner.set(email.toLowerCase(), data.externalId);
    good.push({
      row,
      exists: before !== undefined,
      externalId: data.externalId,
      firstName: pick('firstName', before?.first_name),
      lastName: pick('lastName', before?.last_name),
      emailAddress: email,
    });
    for (const ref of groupExternalIds ?? []) pairs.push({ externalId: data.externalId, groupId: groupId.get(ref)! });
  }

  const now = new Date();
  const conflicted = new Set<string>();
  const written = await writeRows(tx, good, (em, rows) => writeByExternalId(em, Member, communityId, ['firstName', 'lastName', 'emailAddress'], rows, now), (m, err) => {
    conflicted.add(m.externalId);
    if (violated(err, ['members_community_external_id_unique'])) {
      issues.add(m.row, 'externalId', 'The member was created by another writer at the same time; import it again');
    } else issues.add(m.row, 'emailAddress', 'emailAddress is already used by another member');
  });
  const membershipsCreated = await addMemberships(tx, communityId, pairs.filter((p) => !conflicted.has(p.externalId)), now);
  return {
    ...countWrites(written, good.length - conflicted.size),
    failed: issues.failedRows,
    membershipsCreated,
    issues: issues.list,
  };
}
