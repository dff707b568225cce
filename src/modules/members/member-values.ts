import type { EntityManager } from '@mikro-orm/postgresql';
import { isId } from '../../common/ids';
import type { Path } from '../../common/validate';
import { anyOf, arrayOf } from '../../db/sql';
import type { FieldIssue } from '../../errors/app-error';
import type { MemberFieldValueInput } from './member.inputs';



/**
 * 400 issues for ids that are not additional fields of the community, in one query.
 * The found fields are share-locked, so a concurrent delete waits for this transaction.
 */
export async function unknownFieldIssues(
  em: EntityManager,
  communityId: string,
  bodies: { entries: MemberFieldValueInput[]; path: Path }[],
): Promise<FieldIssue[]> {
  const asked = [...new Set(bodies.flatMap((b) => b.entries.map((e) => e.id)).filter(isId))];
  const known = new Set<string>();
  if (asked.length) {
    const rows = await em.execute<{ id: string }[]>(
      `select id from additional_fields
        where community_id = ? and id = ${anyOf('uuid')}
        for key share`,
      [communityId, arrayOf(asked)],
    );
    for (const row of rows) known.add(row.id);
  }
  return bodies.flatMap(({ entries, path }) =>
    entries.flatMap((entry, i) =>
      known.has(entry.id.toLowerCase())
        ? []
        : [{ path: [...path, 'additionalFields', i, 'id'], detail: `${JSON.stringify(entry.id)} is not an additional field of this community` }],
    ),
  );
}

/** PATCH semantics: listed values are set, `value: null` removes one, unlisted values stay. True when anything changed. */
export async function writeValues(em: EntityManager, memberId: string, entries: MemberFieldValueInput[]): Promise<boolean> {
  const set = entries.filter((e) => e.value != null).map((e) => ({ id: e.id, value: e.value }));
  const removed = entries.filter((e) => e.value == null).map((e) => e.id);
  let changed = 0;
  if (set.length) {
    const rows = await em.execute(
      // community_id: the member's (the composite keys refuse a field of another community).
      `insert into member_field_values (community_id, member_id, field_id, value, member_created_at)
       select m.community_id, m.id, v.id, v.value, m.created_at from members m, jsonb_to_recordset(?::jsonb) as v(id uuid, value text) where m.id = ?
       on conflict (member_id, field_id) do update set value = excluded.value
         where member_field_values.value is distinct from excluded.value
       returning field_id`,
      [JSON.stringify(set), memberId],
    );
    changed += rows.length;
  }
  if (removed.length) {
    const rows = await em.execute(
      `delete from member_field_values
        where member_id = ? and field_id = ${anyOf('uuid')}
        returning field_id`,
      [memberId, arrayOf(removed)],
    );
    changed += rows.length;
  }
  return changed > 0;
}
