import type { EntityManager } from '@mikro-orm/postgresql';
import { arrayOf } from '../../db/sql';
import { bound } from '../../db/write';
import { rejectInvalid } from '../../common/validate';
import type { FieldIssue } from '../../errors/app-error';
import type { Group } from '../groups/group.entity';
import type { GroupMembershipsOrderInput } from './membership.inputs';

const SHOWN = 10;

/**
 * Matches the order body against the group's memberships: every element by `id`, or by
 * `externalId` when `id` is absent (a given `id` wins; its `externalId` is not compared).
 * Returns the membership ids in the new order, or throws one 400 naming every bad element.
 */
function matchOrder(rows: { id: string; external_id: string | null }[], input: GroupMembershipsOrderInput): string[] {
  const byId = new Map(rows.map((r) => [r.id, r.id]));
  const byExt = new Map(rows.filter((r) => r.external_id !== null).map((r) => [r.external_id!, r.id]));
  const issues: FieldIssue[] = [];
  const seen = new Map<string, number>();
  const ordered: string[] = [];
  input.order.forEach((el, i) => {
    const at = (path: (string | number)[], detail: string) => issues.push({ path: ['input', 'order', i, ...path], detail });
    let id: string | undefined;
    if (el.id != null) {
      id = byId.get(el.id.toLowerCase());
      if (!id) at(['id'], 'id does not name a membership of this group');
    } else if (el.externalId != null) {
      id = byExt.get(el.externalId);
      if (!id) at(['externalId'], 'externalId does not name a membership of this group');
    } else {
      at([], 'each element needs id or externalId');
    }
    if (!id) return;
    const first = seen.get(id);
    if (first !== undefined) at([], `the membership is already listed at index ${first}`);
    else {
      seen.set(id, i);
      ordered.push(id);
    }
  });
  const missing = rows.filter((r) => !seen.has(r.id)).map((r) => r.id);
  if (missing.length) {
    const list = missing.slice(0, SHOWN).join(', ') + (missing.length > SHOWN ? `, and ${missing.length - SHOWN} more` : '');
    issues.push({ path: ['input', 'order'], detail: `order must list every membership of the group; missing: ${list}` });
  }
  rejectInvalid(issues);
  return ordered;
}

/**
 * Sets orderNumber 1..n in the given order with ONE set-based UPDATE. The caller holds
 * the group row lock (inLockedGroup), so the list read here is the list written, and two
 * concurrent reorders run one after the other: the last one wins whole, never a mix.
 * order_number has no unique constraint, so rows can swap numbers in one statement.
 * Only rows whose number changes are written (and get a new modifiedAt).
 */
export async function reorder(em: EntityManager, group: Group, input: GroupMembershipsOrderInput): Promise<void> {
  // The community leads every index of a group's memberships (without it, under
  // DB_ROW_SECURITY=off, no policy adds it and this read every membership).
  const rows: { id: string; external_id: string | null }[] = await em.execute(
    'select id, external_id from group_memberships where community_id = ? and group_id = ?',
    [group.communityId, group.id],
  );
  const ordered = matchOrder(rows, input);
  if (!ordered.length) return;
  await bound(
    em,
    `update group_memberships m set order_number = v.n, modified_at = ?::timestamptz
       from unnest(?::uuid[]) with ordinality as v(id, n)
      where m.id = v.id and m.community_id = ? and m.group_id = ? and m.order_number is distinct from v.n`,
    [new Date().toISOString(), arrayOf(ordered), group.communityId, group.id],
    'replan',
  );
}
