import type { EntityClass, EntityProperty } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { orderedIds } from '../common/ids';
import { preparedRows, type Planning } from './prepared';
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
  const cols = columnsOf(em, entity);
  // The entity's defaults, read once from one instance (all of them are plain values).
  const template = new entity() as Record<string, unknown>;
  const defaults = Object.fromEntries(cols.map((c) => [c.prop, template[c.prop]]));
  const records = items.map((values, i) => record(entity, { ...defaults, ...values, id: ids[i], communityId, createdAt: now, modifiedAt: now }));
  // The rows travel as one JSON parameter: a 1,000-row import batch is one short statement.
  const names = cols.map((c) => `"${c.name}"`).join(', ');
  await bound(
    em,
    `insert into "${tableOf(em, entity)}" (${names})
     select ${names} from jsonb_to_recordset(?::jsonb) as v(${cols.map((c) => `"${c.name}" ${c.type}`).join(', ')})`,
    [jsonRows(cols, records, now)],
  );
  return records;
}

/**
 * The JSON of `records` as rows of `cols` (column names, null for what is missing). Dates go as
 * their ISO text, `now` formatted once: JSON.stringify calls each Date's toJSON itself, which
 * was 3.9 of the 4.6 ms of stringifying 1,000 member rows (two stamps a row); building each row
 * with a loop instead of Object.fromEntries, 1.8 to 0.5 ms.
 */
function jsonRows(cols: Column[], records: readonly object[], now: Date): string {
  const stamp = now.toISOString();
  return JSON.stringify(
    records.map((r) => {
      const row: Record<string, unknown> = {};
      for (const c of cols) {
        const v = (r as Record<string, unknown>)[c.prop];
        row[c.name] = v === now ? stamp : v instanceof Date ? v.toJSON() : (v ?? null);
      }
      return row;
    }),
  );
}

/**
 * A statement of a write with its values bound as parameters, a named statement (prepared.ts:
 * em's transaction's connection, or outside one the primary's; SQL counts and exceptions as
 * `em.execute`). `em.execute` inlines each value into the SQL text, escaping it character by
 * character in JavaScript (pg's escapeLiteral): for the JSON of an import batch or a bulk and
 * the 10,000 ids of a reorder that was 3% of the service's CPU during an import, and
 * PostgreSQL then scanned the literal. And a text new at every call is parsed and planned at
 * every call, row-level security's policies included: a single create outside a transaction
 * (POST /groups) paid that on each request (docs/performance.md, "Decisions", Writes).
 * `replan` (a statement over a set of rows: lookups of an import batch or a bulk, a reorder):
 * planned for its values at every call instead (prepared.ts says why).
 */
export async function bound<R extends object>(em: EntityManager, sql: string, params: unknown[], planning: Planning = 'cached'): Promise<R[]> {
  return (await preparedRows(em, sql, params, planning)) as unknown as R[];
}

/**
 * `values` (a fresh object, taken over) made a record of `entity`, without running the
 * constructor (a random id and a Date per record, then overwritten) or MikroORM's property
 * setters on the prototype (each defines accessors and creates the entity's helper): for
 * 1,000 records 9.7 against 0.15-2.6 ms of CPU. It is `instanceof entity` and reads like one;
 * like `new entity()` it is not managed by any EntityManager.
 */
export function record<T extends object>(entity: EntityClass<T>, values: Record<string, unknown>): T {
  return Object.setPrototypeOf(values, entity.prototype) as T;
}

interface Column {
  prop: string;
  name: string;
  type: string;
}

const tableOf = (em: EntityManager, entity: EntityClass<object>) => em.getMetadata().get(entity.name).tableName;

/** The stored scalar columns of an entity, from MikroORM's metadata (names and types never come from a request). */
function columnsOf(em: EntityManager, entity: EntityClass<object>, only?: string[]): Column[] {
  const props = em.getMetadata().get(entity.name).properties as Record<string, EntityProperty>;
  return Object.values(props)
    .filter((p) => p.persist !== false && p.kind === 'scalar' && p.fieldNames?.length === 1 && (!only || only.includes(p.name)))
    .sort((a, b) => (only ? only.indexOf(a.name) - only.indexOf(b.name) : 0))
    .map((p) => ({ prop: p.name, name: p.fieldNames[0], type: p.columnTypes[0] }));
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
  const cols = columnsOf(em, entity, ['externalId', ...fields]);
  const [ext, ...set] = cols;
  const written = await bound<{ external_id: string }>(
    em,
    `update "${tableOf(em, entity)}" t set ${set.map((c) => `"${c.name}" = v."${c.name}"`).join(', ')}, modified_at = ?
       from jsonb_to_recordset(?::jsonb) as v(${cols.map((c) => `"${c.name}" ${c.type}`).join(', ')})
      where t.community_id = ? and t."${ext.name}" = v."${ext.name}"
        and (${set.map((c) => `t."${c.name}"`).join(', ')}) is distinct from (${set.map((c) => `v."${c.name}"`).join(', ')})
      returning t."${ext.name}" as external_id`,
    [now, jsonRows(cols, rows, now), communityId],
    'replan',
  );
  return written.map((w) => w.external_id);
}
