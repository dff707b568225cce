import type { EntityManager } from '@mikro-orm/postgresql';
import { anyOf, arrayOf } from '../../db/sql';
import { insertRecords, updateByExternalId } from '../../db/write';
import { Group } from '../groups/group.entity';
import { groupIssues } from '../groups/group.service';
import type { GroupImportRow } from './import.inputs';
import { countWrites, RowIssues, writeRows, type BatchOutcome, type NumberedRow, type RunState } from './rows';

interface GroupValues {
  row: number;
  exists: boolean;
  externalId: string;
  name: string;
  about: string | null;
  color: string | null;
  isVisibleInApp: boolean;
}

/**
 * New groups and changed ones, through the same set-based writers as the groups API
 * (src/db/write.ts): time-ordered ids, one createdAt, modifiedAt only when a value changes.
 */
async function writeGroups(em: EntityManager, communityId: string, rows: GroupValues[], now: Date) {
  const values = ({ row: _row, exists: _exists, ...v }: GroupValues) => v;
  const created = await insertRecords(em, Group, communityId, rows.filter((r) => !r.exists).map(values), now);
  const updated = await updateByExternalId(em, Group, communityId, ['name', 'about', 'color', 'isVisibleInApp'], rows.filter((r) => r.exists).map(values), now);
  return [...created.map(() => ({ inserted: true })), ...updated.map(() => ({ inserted: false }))];
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
  const existing = await tx.execute<{ external_id: string; name: string; about: string | null; color: string | null; is_visible_in_app: boolean }[]>(
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
      exists: before !== undefined,
      externalId: data.externalId,
      name: pick('name', before?.name) as string,
      about: pick('about', before ? before.about : null) ?? null,
      color: pick('color', before ? before.color : null) ?? null,
      isVisibleInApp: pick('isVisibleInApp', before ? before.is_visible_in_app : true) as boolean,
    });
  }
  const now = new Date();
  let conflicts = 0;
  const written = await writeRows(tx, good, (em, rows) => writeGroups(em, communityId, rows, now), (g) => {
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
