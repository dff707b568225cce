import type { EntityManager } from '@mikro-orm/postgresql';
import { Group } from '../groups/group.entity';
import { lockGroups } from '../groups/group.lock';
import { groupIssues } from '../groups/group.service';
import type { GroupImportRow } from './import.inputs';
import { countWrites, repeatsEarlierRow, RowIssues, writeByExternalId, writeRows, type BatchOutcome, type NumberedRow, type RunState } from './rows';

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
  const existing = await lockGroups<{ external_id: string; name: string; about: string | null; color: string | null; is_visible_in_app: boolean }>(
    tx,
    { communityId, externalIds: batch.map((r) => r.data.externalId) },
    'external_id, name, about, color, is_visible_in_app',
  );
  const current = new Map(existing.map((g) => [g.external_id, g]));
  const good: GroupValues[] = [];
  for (const { row, data } of batch) {
    if (repeatsEarlierRow(state, issues, row, data.externalId)) continue;
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
  const written = await writeRows(tx, good, (em, rows) => writeByExternalId(em, Group, communityId, ['name', 'about', 'color', 'isVisibleInApp'], rows, now), (g) => {
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
