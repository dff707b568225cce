import type { EntityManager } from '@mikro-orm/postgresql';
import { anyOf, arrayOf } from '../../db/sql';
import { groupIssues } from '../groups/group.service';
import type { GroupImportRow } from './import.inputs';
import { countWrites, RowIssues, writeRows, type BatchOutcome, type NumberedRow, type RunState } from './rows';

interface GroupValues {
  external_id: string;
  name: string;
  about: string | null;
  color: string | null;
  is_visible_in_app: boolean;
  row: number;
}

/** One upsert for many groups; `inserted` tells a created row from an updated one. */
function upsertGroups(em: EntityManager, communityId: string, rows: GroupValues[], now: Date) {
  return em.execute<{ inserted: boolean }[]>(
    `insert into groups (id, community_id, external_id, name, about, color, is_visible_in_app, state, membership_count, created_at, modified_at)
     select gen_random_uuid(), ?, r.external_id, r.name, r.about, r.color, r.is_visible_in_app, 'ORIGINAL', 0, ?, ?
       from jsonb_to_recordset(?::jsonb) as r(external_id text, name text, about text, color text, is_visible_in_app boolean)
     on conflict (community_id, external_id) do update
        set name = excluded.name, about = excluded.about, color = excluded.color,
            is_visible_in_app = excluded.is_visible_in_app, modified_at = excluded.modified_at
      where (groups.name, groups.about, groups.color, groups.is_visible_in_app)
            is distinct from (excluded.name, excluded.about, excluded.color, excluded.is_visible_in_app)
     returning (xmax = 0) as inserted`,
    [communityId, now, now, JSON.stringify(rows)],
  );
}

/**
 * One batch of a group import, in the caller's transaction. Rows are checked with the
 * groups service's own rules; a field a row leaves out keeps the group's current value
 * (the existing rows are locked first, so nobody changes them between read and write).
 */
export async function applyGroupBatch(
  tx: EntityManager,
  communityId: string,
  batch: NumberedRow<GroupImportRow>[],
  state: RunState,
): Promise<BatchOutcome> {
  const issues = new RowIssues();
  const existing = await tx.execute<Omit<GroupValues, 'row'>[]>(
    `select external_id, name, about, color, is_visible_in_app from groups
      where community_id = ? and external_id = ${anyOf()}
      order by id for update`,
    [communityId, arrayOf(batch.map((r) => r.data.externalId))],
  );
  const current = new Map(existing.map((g) => [g.external_id, g]));
  const good: GroupValues[] = [];
  for (const { row, data } of batch) {
    const first = state.firstRow.get(data.externalId);
    if (first !== row) {
      issues.add(row, 'externalId', `externalId "${data.externalId}" was already given in row ${first}`);
      continue;
    }
    issues.addAll(row, groupIssues(data));
    const before = current.get(data.externalId);
    if (!before && data.name === undefined) issues.add(row, 'name', 'name is required for a new group');
    if (issues.has(row)) continue;
    const pick = <K extends keyof GroupImportRow>(key: K, fallback: GroupImportRow[K]) => (data[key] !== undefined ? data[key] : fallback);
    good.push({
      row,
      external_id: data.externalId,
      name: pick('name', before?.name) as string,
      about: pick('about', before ? before.about : null) ?? null,
      color: pick('color', before ? before.color : null) ?? null,
      is_visible_in_app: pick('isVisibleInApp', before ? before.is_visible_in_app : true) as boolean,
    });
  }
  const now = new Date();
  let conflicts = 0;
  const written = await writeRows(tx, good, (em, rows) => upsertGroups(em, communityId, rows, now), (g) => {
    conflicts++;
    issues.add(g.row, 'externalId', 'The group was changed by another writer at the same time; import it again');
  });
  return {
    ...countWrites(written, good.length - conflicts),
    failed: issues.failedRows,
    membershipsCreated: 0,
    issues: issues.list,
  };
}
