import type { EntityClass, EntityProperty } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { TEXT_SORT_FIELDS, toPage, type Page, type PageWindow } from '../common/pagination';
import { preparedRows, type Planning } from './prepared';
import { anyOf, arrayOf } from './sql';
import { isVersioned, VERSION_COLUMN } from './version';

interface LeanShape {
  select: string;
  table: string;
  columns: Map<string, string>;
}

/**
 * Extra columns of a page, e.g. a membership's member externalId: `select` is evaluated on the
 * page's rows only (alias `p`, columns named as the entity's properties), after the ORDER BY,
 * LIMIT and OFFSET. Not a join in the page: PostgreSQL prices a probe of the other table's
 * index above a scan of all of it, and for a page of a small group chose to hash-join every
 * member of the community (2.4 ms against 0.2-0.7 ms with 10,000 members, growing with them).
 */
export interface LeanExtra {
  select: string;
}

/** SQL with `?` placeholders for `params`, in order. */
export interface SqlPart {
  sql: string;
  params: unknown[];
}

/**
 * A further condition of a page (a search filter), part of the page's one statement, so a
 * page costs one statement whatever the number of filters. `sql`/`params`: a boolean
 * expression on the page's table (alias `t`) that finds the matches as a set (through the
 * filter's index, e.g. `t.id in (select ... from <function>)`); `test`: the same condition as
 * a per-row test. The first filter of a page finds its rows (so list the most selective
 * first); each other filter tests those rows one by one, never a second set of unknown size
 * joined to the first (an address and a text matching every member took 2 s that way).
 *
 * Under row-level security a condition that is not LEAKPROOF (`ILIKE`, `lower()`, `md5()` of
 * a column) is checked after the policy and never becomes an index condition, so the set forms
 * find their rows in functions with their owner's rights (Migration20261125070000).
 */
export interface LeanFilter extends SqlPart {
  /** The same condition as a per-row test on a row `t` (defaults to `sql`). */
  test?: SqlPart;
  /**
   * Where the page's rows come from instead of the table: a row source with every column of
   * the table (a set-returning function that finds them through the filter's own indexes; the
   * page's own rows are then read back from the table by id, with their version). The page sorts what it returns and tests the other filters on those rows: it
   * never walks its order index testing rows one by one (PostgreSQL cannot estimate a trigram
   * match, and with a fixed guess it chose that walk for a LIMIT and read a million rows for a
   * text nobody had). Used when the filter is the page's first; `sql` is then its per-row test.
   */
  source?: SqlPart;
  /**
   * `source` limited to its first rows in the default page order (createdAt, then id): a
   * set-returning function whose last parameter (a `?` at the end of `sql`, after `params`) is
   * how many rows it returns (the page's skip + limit + 1). Used instead of `source` when the
   * filter is the page's only condition and the page is in that order: the function then sorts
   * its matches itself and hands over only the page's rows, not every match with every column
   * (at a million members, a text 2,500 hold: about 1 ms less). It also does the filter's walk
   * itself (member_search_first tests members in page order from an index before it searches),
   * so the page does not.
   */
  sourceFirst?: SqlPart;
  /**
   * For a filter that a common value can make match many rows: the page first tests the
   * first `rows` rows in page order with every filter's `test`, stops at the page's last row,
   * and takes the page from them when they hold it (see pageStatement). `many`, when given, is
   * a boolean expression evaluated once that says the filter matches at least `rows` rows (a
   * count through its index, capped there): a filter matching fewer finds them all for less
   * than the walk. Without it the walk is always tried (for a text: a common one fills the
   * page from the first rows, a rare one costs the walk, then the search). `grows`: the walk
   * takes WALK_PER_ROW rows per row of the page when that is more than `rows` (up to WALK_ROWS).
   */
  walk?: { rows: number; many?: SqlPart; grows?: boolean };
  /** Matches one row at most (a unique key): as a page's first filter, the page is never walked. */
  unique?: boolean;
  /**
   * The filter's candidates in the default page order (createdAt, then id, ascending): a
   * statement whose rows are `id` and `created_at`, ordered by both, from an index that holds
   * that order; a superset of the matches is fine (e.g. by a digest), as each row is then
   * tested. As the page's first filter the page reads them in that order, reads each row by
   * id, tests it with every filter's test (its own included), and stops at its last row: as
   * many index entries as the page takes rows (plus those the tests drop), whatever the
   * number of matches.
   */
  ordered?: SqlPart;
}

/** PostgreSQL's largest int (a search function's row count). */
const INT4_MAX = 2 ** 31 - 1;

/** True when a page is in the default order, createdAt then id ascending (what `ordered` serves). */
const inCreationOrder = (orderBy: PageWindow['orderBy']): boolean =>
  orderBy.length === 2 && orderBy[0].createdAt === 'asc' && orderBy[1].id === 'asc';

const testOf = (c: LeanFilter): SqlPart => c.test ?? c;

/**
 * From this skip on, a page first finds its rows' ids, then reads those rows by primary key:
 * OFFSET is linear in the skip whatever the plan (PostgreSQL reads and drops the skipped rows),
 * but the ids alone come from an index-only scan of the page's order index, an index entry
 * per skipped row instead of a heap row with every column formatted (docs/performance.md,
 * "Cost does not grow with the data"). Not for walked pages (search filters); pages from a source always read this way.
 */
export const KEYS_FIRST_SKIP = 1000;

/** Rows a walked page tests in page order before it falls back to finding every match (a field filter's walk). */
export const WALK_ROWS = 5000;
/**
 * Rows a text filter's walk tests: a text at least ~4% of the rows hold fills a first page
 * from them; a rarer one costs this many in-row tests (~0.5 ms) before its search.
 */
export const TEXT_WALK_ROWS = 500;
/** A page is walked when its rows (skip + limit + 1) are at most a tenth of the walk: a shorter walk could not fill it often. */
const WALK_PER_ROW = 10;

/**
 * Facts read in the page's own statement (one round trip), e.g. which asked additional field
 * ids are the community's: `select` is a list of expressions with `?` placeholders for
 * `params`, each aliased with a quoted name that no column of the page has (listed in `names`).
 */
export interface LeanCheck {
  select: string;
  params: unknown[];
  names: string[];
}

const shapes = new WeakMap<EntityClass<object>, LeanShape>();

/** Column list of an entity (table alias `t`), read once from MikroORM's metadata. */
function shapeOf(em: EntityManager, entity: EntityClass<object>): LeanShape {
  let shape = shapes.get(entity);
  if (!shape) {
    const meta = em.getMetadata().get(entity.name);
    const props = Object.values(meta.properties as Record<string, EntityProperty>).filter(
      (p) => p.persist !== false && !p.formula && p.kind === 'scalar' && p.fieldNames?.length === 1,
    );
    const columns = new Map(props.map((p) => [p.name, p.fieldNames[0]]));
    // Timestamps come back as ISO 8601 text, which the DateTimeISO scalar writes as is.
    const column = (p: EntityProperty) =>
      p.runtimeType === 'Date'
        ? `to_char(t."${p.fieldNames[0]}" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
        : `t."${p.fieldNames[0]}"`;
    let select = props.map((p) => `${column(p)} as "${p.name}"`).join(', ');
    if (isVersioned(entity)) select += `, ${VERSION_COLUMN('t')} as "version"`; // src/db/version.ts
    shape = { select, table: `"${meta.tableName}" t`, columns };
    shapes.set(entity, shape);
  }
  return shape;
}

/**
 * Lean rows are read-only output: their timestamps are ISO 8601 strings, not Dates.
 *
 * A page of plain rows shaped like the entity, without entity instances, identity map or
 * change tracking: list reads are the hot path and never write back (docs/performance.md).
 * `where` is equality on properties; `window` comes from `pageWindow` (checked arguments,
 * an ORDER BY that never ties).
 */
/** Rows in the order of `ids`, undefined for a miss: what a DataLoader batch returns. */
export function byIds<T extends { id: string }>(rows: T[], ids: readonly string[]): (T | undefined)[] {
  const map = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => map.get(id));
}

/* Each statement is a named (prepared) statement (src/db/prepared.ts: parsed once per
   connection, the text converted to `$n` form once per shape) and joins the em's transaction
   when it has one: a read inside a transaction must not take a second pool connection (nor
   see another snapshot). */

/** Plain rows of the community with the given ids, in any order (DataLoaders map them). */
export async function leanByIds<T extends object>(em: EntityManager, entity: EntityClass<T>, communityId: string, ids: readonly string[]): Promise<T[]> {
  const shape = shapeOf(em, entity as EntityClass<object>);
  const rows = await preparedRows(em, `select ${shape.select} from ${shape.table} where t."community_id" = ? and t."id" = ${anyOf('uuid')}`, [
    communityId,
    arrayOf(ids),
  ]);
  return rows as T[];
}

/** One plain row matching equality on properties, or null. */
export async function leanFindOne<T extends object>(em: EntityManager, entity: EntityClass<T>, where: Partial<Record<keyof T & string, string>>): Promise<T | null> {
  const shape = shapeOf(em, entity as EntityClass<object>);
  const filters = Object.keys(where).map((prop) => `${columnOf(shape, entity, prop)} = ?`);
  const rows = await preparedRows(em, `select ${shape.select} from ${shape.table} where ${filters.join(' and ')} limit 1`, Object.values(where));
  return (rows[0] as T | undefined) ?? null;
}

function columnOf(shape: LeanShape, entity: EntityClass<object>, prop: string): string {
  const col = shape.columns.get(prop);
  if (!col) throw new Error(`lean: ${entity.name} has no column for ${prop}`);
  return `t."${col}"`;
}

/** The page's statement: `where` is equality on properties (exported for the search bench's EXPLAIN). */
export function pageStatement(
  em: EntityManager,
  entity: EntityClass<object>,
  where: Record<string, string>,
  window: PageWindow,
  extra?: LeanExtra,
  conditions: LeanFilter[] = [],
): { sql: string; params: unknown[]; planning: Planning } {
  const { limit, skip, orderBy } = window;
  const shape = shapeOf(em, entity);
  const column = (prop: string) => columnOf(shape, entity, prop);
  // The first filter finds the rows (its set form, or its source); the others test each of them.
  const [driver, ...tested] = conditions;
  const need = skip + limit + 1;
  const first = !tested.length && !window.modifiedSince && inCreationOrder(orderBy) ? driver?.sourceFirst : undefined;
  // The function's row count is an int: a skip near its limit asks for every row there is.
  const source = first ? { sql: first.sql, params: [...first.params, Math.min(need, INT4_MAX)] } : driver?.source;
  const filters = Object.keys(where).map((prop) => `${column(prop)} = ?`);
  const params: unknown[] = [...(source?.params ?? []), ...Object.values(where)];
  for (const c of [...(driver && !source ? [driver] : []), ...tested.map(testOf)]) {
    filters.push(`(${c.sql})`);
    params.push(...c.params);
  }
  if (window.modifiedSince) {
    filters.push(`${column('modifiedAt')} >= ?`);
    params.push(window.modifiedSince);
  }
  const sortKey = (prop: string) => (TEXT_SORT_FIELDS.has(prop) ? `lower(${column(prop)})` : column(prop));
  const order = orderBy.map((o) => Object.entries(o).map(([prop, dir]) => `${sortKey(prop)} ${dir === 'desc' ? 'desc' : 'asc'}`)[0]);
  const walks = conditions.filter((c) => c.walk).map((c) => c.walk!);
  const walkRows = Math.min(...walks.map((w) => (w.grows ? Math.min(WALK_ROWS, Math.max(w.rows, need * WALK_PER_ROW)) : w.rows)));
  // A page from `sourceFirst` is not walked here: the function walks the page order itself.
  const walked = walks.length > 0 && !driver.unique && !first && need * WALK_PER_ROW <= walkRows;
  const rows = `${source ? `${source.sql} t` : shape.table} where ${filters.join(' and ')}${walked ? ' and' : ''}`;
  /*
   * The page's ids first, then its rows by primary key: past KEYS_FIRST_SKIP (the skipped rows
   * cost an index entry each; only the page's own rows are read and formatted), and from a
   * source (it returns the table's columns without the row version; the page's rows are read
   * back from the table, under its policy).
   */
  const keysFirst = (from: string) =>
    `select ${shape.select} from (select ${column('id')} as "id" from ${from} order by ${order.join(', ')} limit ? offset ?) k
      join ${shape.table} on ${column('id')} = k."id" order by ${order.join(', ')}`;
  const pageOf = (from: string) => (source ? keysFirst(from) : `select ${shape.select} from ${from} order by ${order.join(', ')} limit ? offset ?`);
  // The page's own conditions, without the filters: equality on `where`, and modifiedSince.
  const base = Object.keys(where).map((prop) => `${column(prop)} = ?`);
  const baseParams: unknown[] = Object.values(where);
  if (window.modifiedSince) {
    base.push(`${column('modifiedAt')} >= ?`);
    baseParams.push(window.modifiedSince);
  }
  let page: string;
  let pageParams: unknown[];
  /*
   * A community's plain page (no filter, no modifiedSince, no parent, the first 1,000 rows):
   * one plan serves every community and page size (the order's index, read from the
   * community's first row), so it is planned once per connection (`generic`, src/db/prepared.ts).
   * PostgreSQL's own choice re-planned it at every run: a generic plan's guess for `limit $n`
   * is 10% of the community, dearer than any custom plan. Pages of one parent (a group's
   * members) stay planned for their values: a 10,000-member group needs another plan than
   * the average group (docs/performance.md, "Generic plans").
   */
  let planning: Planning = 'cached';
  if (driver?.ordered && !driver.unique && inCreationOrder(orderBy)) {
    // The candidates in page order (driver.ordered), each row read by id and tested; OFFSET 0 keeps
    // the lateral subquery a per-row lookup, so the index's order is the page's and LIMIT stops it.
    const tests = conditions.map(testOf);
    page = `select ${shape.select} from (${driver.ordered.sql}) o
      cross join lateral (select t.*, t.xmin from ${shape.table}
        where ${[`${column('id')} = o."id"`, ...base, ...tests.map((c) => `(${c.sql})`)].join(' and ')} offset 0) t
      order by o."created_at", o."id" limit ? offset ?`;
    pageParams = [...driver.ordered.params, ...baseParams, ...tests.flatMap((c) => c.params), limit + 1, skip];
  } else if (!walked && skip >= KEYS_FIRST_SKIP && !source) {
    page = keysFirst(rows);
    pageParams = [...params, limit + 1, skip];
  } else if (!walked) {
    page = pageOf(rows);
    pageParams = [...params, limit + 1, skip];
    const plain = !conditions.length && !window.modifiedSince && !extra && Object.keys(where).join() === 'communityId';
    if (plain) planning = 'generic';
  } else {
    /*
     * A bounded walk, then the full search only when needed: `hit` tests the first rows of the
     * unfiltered page order (the fewest any filter's walk asks) against every filter (tests: at
     * most one index probe per row) and stops at skip + limit + 1 matches (a value held by 1% is
     * found after ~2,100 rows, not 5,000). The rows ordered before any row outside the walk are all in it, so when `hit`
     * holds skip + limit + 1 rows the page is among them and the first branch answers; otherwise the
     * second branch finds every match through the filters' indexes. Each branch carries a
     * one-time condition on the count, so PostgreSQL runs only one of them. `k` says whether
     * every filter with `many` matches at least as many rows as it walks; if one matches fewer,
     * the walk is skipped: finding its few matches costs less than testing the rows.
     */
    const tests = conditions.map(testOf);
    const many = walks.filter((w) => w.many).map((w) => w.many!);
    const orderBy = order.join(', ');
    // `k` first: when a filter matches few rows, the walk (hit, n) is never run (InitPlans run on first use, AND stops early).
    const walk = `(select ok from k) and (select c from n) >= ?::int`;
    page = `with k as materialized (select ${many.length ? many.map((m) => `(${m.sql})`).join(' and ') : 'true'} as ok),
      hit as materialized (select t.* from (select t.*, t.xmin from ${shape.table} where ${base.join(' and ')} order by ${orderBy} limit ${walkRows}) t
        where ${tests.map((c) => `(${c.sql})`).join(' and ')} order by ${orderBy} limit ?),
      n as materialized (select count(*) as c from hit)
      select * from (
        (select ${shape.select} from hit t where ${walk} order by ${orderBy} limit ? offset ?)
        union all
        (${pageOf(`${rows} not (${walk})`)})
      ) walked`;
    pageParams = [
      ...many.flatMap((m) => m.params),
      ...baseParams,
      ...tests.flatMap((c) => c.params),
      need,
      need, limit + 1, skip,
      ...params,
      need, limit + 1, skip,
    ];
  }
  // A subquery with a LIMIT is never flattened: the outer projection runs on its rows, in its order.
  return { sql: extra ? `select p.*, ${extra.select} from (${page}) p` : page, params: pageParams, planning };
}

export async function leanPage<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: Partial<Record<keyof T & string, string>>,
  window: PageWindow,
  extra?: LeanExtra,
  filters: LeanFilter[] = [],
): Promise<Page<T>> {
  const { sql, params, planning } = pageStatement(em, entity as EntityClass<object>, where as Record<string, string>, window, extra, filters);
  const rows = await preparedRows(em, sql, params, planning);
  return toPage(rows as T[], window.limit, window.skip);
}

/**
 * `leanPage` plus the facts of `check`, read in the same statement (one round trip): the
 * check's one row is left-joined to the page (an empty page gives one row of nulls), like
 * `leanChildPage` joins its parent. The caller judges the facts before it uses the page.
 */
export async function leanCheckedPage<T extends object, C extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: Partial<Record<keyof T & string, string>>,
  window: PageWindow,
  check: LeanCheck,
  filters: LeanFilter[] = [],
): Promise<{ page: Page<T>; check: C }> {
  const page = pageStatement(em, entity as EntityClass<object>, where as Record<string, string>, window, undefined, filters);
  const sql = `select page.*, checked.* from (select ${check.select}) checked left join (${page.sql}) page on true`;
  const rows = await preparedRows<Record<string, unknown>>(em, sql, [...check.params, ...page.params]);
  const first = rows[0] ?? {};
  const checkKeys = check.names;
  const facts = Object.fromEntries(checkKeys.map((k) => [k, first[k]])) as C;
  const results = first.id == null ? [] : rows.map((r) => {
    const row = { ...r };
    for (const k of checkKeys) delete row[k];
    return row;
  });
  return { page: toPage(results as T[], window.limit, window.skip), check: facts };
}

/** The record a child page belongs to (a group's memberships), addressed by its id. */
export interface LeanParent {
  entity: EntityClass<object>;
  id: string;
  /** The child's property that holds the parent's id. */
  via: string;
}

/**
 * A page of the community's children of a parent, with the parent's existence checked in the
 * SAME statement (one round trip instead of two: docs/performance.md, "Decisions");
 * null when the community has no such parent. The parent row is left-joined to the page: no parent, no row;
 * a parent without children, one row of nulls; one outer row, so the rows keep the page's
 * order. The page filters on the id as a parameter, not on the parent row's column:
 * PostgreSQL then plans with the value (a 10,000-member group gets its index scan, where a
 * join column is planned for the average group: a hash join over every membership).
 */
export async function leanChildPage<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  communityId: string,
  parent: LeanParent,
  window: PageWindow,
  extra?: LeanExtra,
): Promise<Page<T> | null> {
  const ps = shapeOf(em, parent.entity);
  const page = pageStatement(em, entity as EntityClass<object>, { communityId, [parent.via]: parent.id }, window, extra);
  const sql = `select page.* from (select t."id" from ${ps.table} where t."id" = ? and t."community_id" = ?) parent
     left join (${page.sql}) page on true`;
  const rows = await preparedRows<{ id: string | null }>(em, sql, [parent.id, communityId, ...page.params]);
  if (!rows.length) return null;
  return toPage((rows[0].id == null ? [] : rows) as unknown as T[], window.limit, window.skip);
}
