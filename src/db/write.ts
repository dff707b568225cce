import type { EntityClass, EntityProperty } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { orderedIds } from '../common/ids';
import type { TenantRecord } from './tenant-record';

type Values<T> = Partial<Omit<T, keyof TenantRecord>>;

/**
 * The one way new records of a community are written, for a single create, a bulk create
 * and an import alike: ONE insert statement, time-ordered ids in the order given (lists
 * break createdAt ties by id, so a batch lists in input order) and one instant for
 * createdAt = modifiedAt. Entity defaults apply to the values left out.
 */
export async function insertRecords<T extends TenantRecord>(
  em: EntityManager,
  entity: EntityClass<T> & (new () => T),
  communityId: string,
  items: Values<T>[],
  now = new Date(),
): Promise<T[]> {
  if (!items.length) return [];
  const ids = orderedIds(items.length);
  const records = items.map((values, i) => Object.assign(new entity(), values, { id: ids[i], communityId, createdAt: now, modifiedAt: now }));
  await em.insertMany(entity, records.map((r) => ({ ...r })) as never[]);
  return records;
}

/**
 * Writes `fields` of existing records of the community matched by externalId, in ONE
 * statement. Only rows whose values differ are written (and get modifiedAt = now), as a
 * PATCH through MikroORM would. Returns the externalIds written.
 */
export async function updateByExternalId<T extends TenantRecord & { externalId?: string | null }>(
  em: EntityManager,
  entity: EntityClass<T>,
  communityId: string,
  fields: (keyof Values<T> & string)[],
  rows: ({ externalId: string } & Values<T>)[],
  now = new Date(),
): Promise<string[]> {
  if (!rows.length) return [];
  const meta = em.getMetadata().get(entity.name);
  const column = (prop: string) => (meta.properties as Record<string, EntityProperty>)[prop];
  const cols = ['externalId', ...fields].map((prop) => ({ prop, name: column(prop).fieldNames[0], type: column(prop).columnTypes[0] }));
  const [ext, ...set] = cols;
  // Column names and types come from the entity's metadata, never from the request.
  const written = await em.execute<{ external_id: string }[]>(
    `update "${meta.tableName}" t set ${set.map((c) => `"${c.name}" = v."${c.name}"`).join(', ')}, modified_at = ?
       from jsonb_to_recordset(?::jsonb) as v(${cols.map((c) => `"${c.name}" ${c.type}`).join(', ')})
      where t.community_id = ? and t."${ext.name}" = v."${ext.name}"
        and (${set.map((c) => `t."${c.name}"`).join(', ')}) is distinct from (${set.map((c) => `v."${c.name}"`).join(', ')})
      returning t."${ext.name}" as external_id`,
    [now, JSON.stringify(rows.map((r) => Object.fromEntries(cols.map((c) => [c.name, (r as Record<string, unknown>)[c.prop] ?? null])))), communityId],
  );
  return written.map((w) => w.external_id);
}
