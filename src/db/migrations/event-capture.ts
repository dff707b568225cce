const ts = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Each audited record's REST shape (as its GET answers), as a SQL expression over its fields:
 * `f(column)` is a field's SQL, read from a row (EVENT_SHAPES: the capture triggers over
 * transition tables, the in-place refreshes over the live table) or from the record's typed
 * snapshot (event_data, when an event is read). Written inline, not as a
 * function: a transition table's row is an anonymous record (no overloading on it), and an
 * expression costs no call per row.
 */
const SHAPES: Record<string, (f: (col: string) => string) => string> = {
  groups: (f) => `json_build_object(
      'id', ${f('id')}, 'externalId', ${f('external_id')}, 'name', ${f('name')}, 'about', ${f('about')}, 'color', ${f('color')},
      'membershipCount', ${f('membership_count')}, 'isVisibleInApp', ${f('is_visible_in_app')}, 'state', ${f('state')},
      'createdAt', ${ts(f('created_at'))}, 'modifiedAt', ${ts(f('modified_at'))})`,
  group_memberships: (f) => `json_build_object(
      'id', ${f('id')}, 'externalId', ${f('external_id')}, 'groupId', ${f('group_id')}, 'memberId', ${f('member_id')},
      'memberExternalId', ${f('member_external_id')},
      'title', ${f('title')}, 'orderNumber', ${f('order_number')}, 'role', ${f('role')},
      'createdAt', ${ts(f('created_at'))}, 'modifiedAt', ${ts(f('modified_at'))})`,
  members: (f) => `json_build_object(
      'id', ${f('id')}, 'externalId', ${f('external_id')}, 'firstName', ${f('first_name')}, 'lastName', ${f('last_name')},
      'emailAddress', ${f('email_address')},
      'additionalFields', ${f('additional_fields')},
      'createdAt', ${ts(f('created_at'))}, 'modifiedAt', ${ts(f('modified_at'))})`,
  additional_fields: (f) => `json_build_object(
      'id', ${f('id')}, 'name', ${f('name')}, 'placeholder', ${f('placeholder')}, 'type', ${f('type')},
      'icon', case when ${f('icon_style')} is not null and ${f('icon_unicode')} is not null
                   then json_build_object('style', ${f('icon_style')}, 'unicode', ${f('icon_unicode')}) end,
      'isEditableByMember', ${f('is_editable_by_member')}, 'isMandatoryForMember', ${f('is_mandatory_for_member')},
      'isVisibleInApp', ${f('is_visible_in_app')}, 'orderNumber', ${f('order_number')},
      'createdAt', ${ts(f('created_at'))}, 'modifiedAt', ${ts(f('modified_at'))})`,
  notifications: (f) => `json_build_object(
      'id', ${f('id')}, 'title', ${f('title')}, 'message', ${f('message')}, 'status', ${f('status')}, 'receiversCount', ${f('receivers_count')},
      'sendAt', ${ts(f('send_at'))}, 'sentAt', ${ts(f('sent_at'))}, 'cancelledAt', ${ts(f('cancelled_at'))},
      'createdAt', ${ts(f('created_at'))}, 'modifiedAt', ${ts(f('modified_at'))})`,
  import_jobs: (f) => `json_build_object(
      'id', ${f('id')}, 'kind', ${f('kind')}, 'status', ${f('status')}, 'total', ${f('total')}, 'processed', ${f('processed')},
      'created', ${f('created')}, 'updated', ${f('updated')}, 'failed', ${f('failed')},
      'createdAt', ${ts(f('created_at'))}, 'modifiedAt', ${ts(f('modified_at'))})`,
};

/**
 * The typed snapshot of each audited record (Migration20261123010000_event_snapshots): a
 * composite type holding the fields its shape reads, and the column of `events` that holds it.
 * Text and timestamps without length or precision: the table has checked its values, and a
 * widened column needs no change here.
 * An event's record is written as this composite and its JSON built when the event is read
 * (`event_data`): building JSON for every event written was most of an event's cost
 * (docs/performance.md, "Typed snapshots"). `derived`: the fields not read from the row itself
 * (other tables', as they are when the event is written).
 * A new field of a record goes into its SHAPES entry and its attributes here, and a new
 * migration adds it (`alter type <type> add attribute ...`; the composite's attribute order
 * must stay the order of `attributes`) and re-creates eventDataFunction() and
 * captureFunctions('snapshot').
 */
export interface Snapshot {
  /** The composite type's name, and that of its column on `events`. */
  name: string;
  attributes: [name: string, sqlType: string][];
  derived?: Record<string, (r: string) => string>;
}
const TS = 'timestamptz';
const STAMPS: [string, string][] = [['created_at', TS], ['modified_at', TS]];
const snapshot = (resource: string, attributes: [string, string][], derived?: Snapshot['derived']): Snapshot => ({
  name: `${resource}_snapshot`,
  attributes: [['id', 'uuid'], ...attributes, ...STAMPS],
  derived,
});
export const SNAPSHOTS: Record<string, Snapshot> = {
  groups: snapshot('group', [
    ['external_id', 'text'], ['name', 'text'], ['about', 'text'], ['color', 'text'],
    ['membership_count', 'integer'], ['is_visible_in_app', 'boolean'], ['state', 'text'],
  ]),
  group_memberships: snapshot(
    'group_membership',
    [['external_id', 'text'], ['group_id', 'uuid'], ['member_id', 'uuid'], ['member_external_id', 'text'], ['title', 'text'], ['order_number', 'integer'], ['role', 'text']],
    { member_external_id: (r) => `(select mem.external_id from members mem where mem.id = ${r}.member_id)` },
  ),
  members: snapshot(
    'member',
    [['external_id', 'text'], ['first_name', 'text'], ['last_name', 'text'], ['email_address', 'text'], ['additional_fields', 'json']],
    {
      additional_fields: (r) => `coalesce((
        select json_agg(json_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id)
          from member_field_values v join additional_fields f on f.id = v.field_id
         where v.member_id = ${r}.id), '[]'::json)`,
    },
  ),
  additional_fields: snapshot('additional_field', [
    ['name', 'text'], ['placeholder', 'text'], ['type', 'text'], ['icon_style', 'text'], ['icon_unicode', 'text'],
    ['is_editable_by_member', 'boolean'], ['is_mandatory_for_member', 'boolean'], ['is_visible_in_app', 'boolean'], ['order_number', 'integer'],
  ]),
  notifications: snapshot('notification', [
    ['title', 'text'], ['message', 'text'], ['status', 'text'], ['receivers_count', 'integer'], ['send_at', TS], ['sent_at', TS], ['cancelled_at', TS],
  ]),
  import_jobs: snapshot('import_job', [
    ['kind', 'text'], ['status', 'text'], ['total', 'integer'], ['processed', 'integer'], ['created', 'integer'], ['updated', 'integer'], ['failed', 'integer'],
  ]),
};

/** A field of a row alias `r` of `table`, derived ones included. */
const rowField = (table: string, r: string) => (col: string) => SNAPSHOTS[table].derived?.[col]?.(r) ?? `${r}.${col}`;

/** Each record's JSON over a row alias (as the capture wrote it before snapshots, and still for history). */
export const EVENT_SHAPES: Record<string, (r: string) => string> = Object.fromEntries(
  Object.entries(SHAPES).map(([table, shape]) => [table, (r: string) => shape(rowField(table, r))]),
);

/** The snapshot of a row alias `r` of `table`, as its composite. */
export const snapshotOf = (table: string, r: string) => {
  const s = SNAPSHOTS[table];
  return `row(${s.attributes.map(([c]) => rowField(table, r)(c)).join(', ')})::${s.name}`;
};

/**
 * Every column of each audited table, as the schema has them ('snapshot' style compares them
 * one by one for an update's `changes`; test/events.test.ts checks this list against the
 * catalog, so a new column fails the tests until it is listed here and the capture functions
 * are made again by a migration).
 */
export const TABLE_COLUMNS: Record<string, string[]> = {
  groups: ['id', 'community_id', 'external_id', 'name', 'about', 'color', 'membership_count', 'is_visible_in_app', 'state', 'created_at', 'modified_at'],
  group_memberships: ['id', 'community_id', 'group_id', 'member_id', 'external_id', 'title', 'role', 'order_number', 'created_at', 'modified_at'],
  members: ['id', 'community_id', 'external_id', 'first_name', 'last_name', 'email_address', 'created_at', 'modified_at'],
  additional_fields: [
    'id', 'community_id', 'name', 'placeholder', 'type', 'icon_style', 'icon_unicode', 'is_editable_by_member', 'is_mandatory_for_member',
    'is_visible_in_app', 'order_number', 'created_at', 'modified_at',
  ],
  notifications: ['id', 'community_id', 'title', 'message', 'status', 'receivers_count', 'send_at', 'sent_at', 'cancelled_at', 'created_at', 'modified_at'],
  import_jobs: [
    'id', 'community_id', 'kind', 'status', 'payload', 'total', 'processed', 'created', 'updated', 'unchanged', 'failed', 'memberships_created',
    'failure_reason', 'started_at', 'finished_at', 'created_at', 'modified_at',
  ],
};

/** A column's REST name in `changes`: what the SQL function event_field answers. */
export const eventField = (col: string) => (col === 'icon_style' || col === 'icon_unicode' ? 'icon' : col.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()));

/**
 * The REST names of the columns an update changed (`n` new, `o` old row), sorted, as one
 * array expression: a plain comparison per column instead of both rows as jsonb and a
 * jsonb_each (docs/performance.md, "Typed snapshots": 300,000 fewer instructions an update).
 */
export function changedFields(table: string, ignored: string[]): string {
  const byName = new Map<string, string[]>();
  for (const col of TABLE_COLUMNS[table].filter((c) => !ignored.includes(c))) byName.set(eventField(col), [...(byName.get(eventField(col)) ?? []), col]);
  const names = [...byName.keys()].sort();
  const tests = names.map((name) => `case when ${byName.get(name)!.map((c) => `n.${c} is distinct from o.${c}`).join(' or ')} then '${name}' end`);
  return `array_remove(array[${tests.join(',\n                   ')}], null)`;
}

/** [table, event resource, columns whose change alone is not an update] */
export const AUDITED: [string, string, string[]][] = [
  ['groups', 'group', ['membership_count']],
  ['group_memberships', 'group_membership', []],
  ['members', 'member', []],
  ['additional_fields', 'additional_field', []],
  ['notifications', 'notification', []],
  ['import_jobs', 'import_job', ['payload']],
];
export const ALL_AUDITED = [...AUDITED.map(([table]) => table), 'member_field_values'];

/** The event types of a resource whose data is the record (not deleted, not reordered). */
const dataTypes = (resource: string) =>
  [`${resource}.created`, `${resource}.updated`, ...(resource === 'notification' ? ['notification.sent'] : []), ...(resource === 'import_job' ? ['import_job.completed', 'import_job.failed'] : [])]
    .map((t) => `'${t}'`)
    .join(', ');

/**
 * How a capture function tells the commit trigger (events_commit) that its transaction wrote
 * events of a community:
 * - 'pending' (Migration20261122150000_events_direct): each insert returns its communities;
 *   the transaction's first event of a community inserts a row into event_pending, whose
 *   deferred trigger runs events_commit; a transaction-local setting remembers what was queued.
 * - 'lean' (Migration20261123000000_events_lean): each insert marks, per statement, one event
 *   of each community it wrote (`opens`); the deferred trigger on events runs for the marked
 *   rows only, and events_commit takes the transaction's position once per community.
 * - 'snapshot' (Migration20261123010000_event_snapshots): 'lean', and each record is written
 *   typed, in its snapshot column (SNAPSHOTS), `data` left null; deleted and reordered events
 *   (a reference, not a record) keep their small JSON in `data`.
 */
export type CaptureStyle = 'pending' | 'lean' | 'snapshot';

/**
 * One insert of events: `select ... from ... order` as the capture writes them, `alias` the row
 * the community comes from. `all`: the transition table when every one of its rows becomes
 * an event in its own order (an insert's new rows).
 */
interface EventInsert {
  cols: string;
  select: string;
  from: string;
  order?: string;
  alias: string;
  all?: string;
}

/**
 * The statement writing `ins` after the CTEs `ctes` (each "name as (...)"). 'pending': the
 * communities written go into the variable `into`. 'lean' and 'snapshot': one row of each community in the
 * statement opens the commit trigger. For `all` rows of a transition table that is its first
 * row (and, should one statement ever write several communities, every row of the others: the
 * commit trigger takes each community once), found by an InitPlan and kept in the table's own
 * order: no sort, no subquery, about a tenth of the outbox's instructions on a single-row insert.
 * Otherwise row_number over the rows written (they may be filtered or grouped).
 */
function writeEvents(style: CaptureStyle, ctes: string[], ins: EventInsert, into = 'comms'): string {
  const order = ins.order ? ` ${ins.order}` : '';
  if (style !== 'pending') {
    const a = ins.alias;
    const opens = ins.all
      ? `case when ${a}.id = (select f.id from ${ins.all} f limit 1) or ${a}.community_id <> (select f.community_id from ${ins.all} f limit 1) then true end`
      : `case when row_number() over (partition by ${a}.community_id) = 1 then true end`;
    return `${ctes.length ? `with ${ctes.join(',\n            ')}\n            ` : ''}insert into events (${ins.cols}, opens)
              select ${ins.select},
                     ${opens}
                ${ins.from}${ins.all ? '' : order};`;
  }
  return `with ${[...ctes, `ins as (
            insert into events (${ins.cols})
              select ${ins.select}
                ${ins.from}${order}
              returning community_id)`].join(',\n            ')}
          select array_agg(distinct community_id) into ${into} from ins;`;
}

/**
 * 'pending' style: after a capture wrote events of the communities in `comms`: queues the commit trigger once per
 * (transaction, community) with a row in event_pending, and notes the resource. Both are kept
 * in one transaction-local setting, events.open ("<community>,...:<resource>,..."): a
 * rolled-back savepoint takes it back together with its rows. Inlined in each capture function
 * (a nested PL/pgSQL call cost about 18 us a statement).
 */
const opened = (resource: string) => `
        if comms is not null then
          opened := coalesce(current_setting('events.open', true), '');
          was := opened;
          foreach c in array comms loop
            if strpos(opened, c::text) = 0 then
              insert into event_pending (community_id) values (c);
              opened := c::text || ',' || opened;
            end if;
          end loop;
          if strpos(opened, ':' || ${resource} || ',') = 0 then opened := opened || ':' || ${resource} || ','; end if;
          if opened <> was then perform set_config('events.open', opened, true); end if;
        end if;`;

/** The changed columns of a pair of rows (r.nj, r.oj: new and old as jsonb), as REST field names. */
const changesOf = (ignored: string) => (r: string) =>
  `array(select distinct event_field(e.key) from jsonb_each(${r}.nj) e where e.value is distinct from ${r}.oj -> e.key and e.key <> all (${ignored}) order by 1)`;

const PENDING_VARIABLES = `
        comms uuid[];
        more uuid[];
        opened text;
        was text;
        c uuid;`;

/** The statement trigger function of one audited table (see the migrations' comments). */
function captureFunction(style: CaptureStyle, table: string, resource: string, ignoredColumns: string[]): string {
  const ignoredList = [...ignoredColumns, 'modified_at', 'community_id'];
  const ignored = `array[${ignoredList.map((c) => `'${c}'`).join(', ')}]::text[]`;
  const unnoticed = resource === 'group_membership' ? `(${ignored} || array['order_number'])` : ignored;
  const shape = EVENT_SHAPES[table];
  const membership = resource === 'group_membership';
  const changes = changesOf(ignored);
  const pending = style === 'pending';
  // Where a record's data goes in its events, and how it is taken from a row alias.
  const snap = style === 'snapshot' ? SNAPSHOTS[table] : undefined;
  const dataCol = snap ? snap.name : 'data';
  const dataOf = (r: string) => (snap ? snapshotOf(table, r) : shape(r));
  // 'snapshot': an update's changes come from comparing the columns (changedFields), not jsonb.
  const direct = style === 'snapshot';
  const status = (d: string) => (direct ? `${d}.status` : `${d}.nj ->> 'status'`);
  const updateType = (d: string) =>
    resource === 'notification'
      ? `case when ${status(d)} = 'SENT' and 'status' = any (${d}.changes) then 'notification.sent' else 'notification.updated' end`
      : resource === 'import_job'
        ? `case when 'status' = any (${d}.changes) and ${status(d)} = 'COMPLETED' then 'import_job.completed'
                when 'status' = any (${d}.changes) and ${status(d)} = 'FAILED' then 'import_job.failed' else 'import_job.updated' end`
        : `'${resource}.updated'`;
  // Which changed rows are events: a membership whose order alone changed is announced by the
  // one reordered event of its group; an import's progress counters are not events, its outcome is.
  const announced = (d: string) =>
    [
      `cardinality(${d}.changes) > 0`,
      ...(membership ? [`${d}.changes <> array['orderNumber']`] : []),
      ...(resource === 'import_job' ? [`'status' = any (${d}.changes) and ${status(d)} in ('COMPLETED', 'FAILED')`] : []),
    ].join(' and ');
  // Each row as jsonb once; rows where only ignored columns changed are dropped before the per-key diff.
  const pairs = `pairs as materialized (
              select n.*, to_jsonb(n) as nj, to_jsonb(o) as oj
                from new_rows n join old_rows o on o.id = n.id
            )`;
  // The membership columns whose change is more than a reorder.
  const reorderKeys = direct
    ? TABLE_COLUMNS.group_memberships.filter((c) => !['community_id', 'order_number', 'created_at', 'modified_at'].includes(c))
    : ['id', 'title', 'role', 'external_id', 'member_id', 'group_id'];
  // 'snapshot': each changed row with its changes, compared column by column (a membership whose
  // order alone changed has changes = {orderNumber}, which `announced` leaves out).
  const compared = `diff as (
              select n.*, ${changedFields(table, ignoredList)} as changes
                from new_rows n join old_rows o on o.id = n.id
            )`;
  return `
      create ${pending ? '' : 'or replace '}function events_capture_${table}() returns trigger language plpgsql as $$
      declare
        diffed boolean := true;${pending ? PENDING_VARIABLES : ''}
      begin
        if TG_OP = 'INSERT' then
          ${writeEvents(style, [], { cols: `community_id, type, record_id, ${dataCol}`, select: `n.community_id, '${resource}.created', n.id, ${dataOf('n')}`, from: 'from new_rows n', order: 'order by n.id', alias: 'n', all: 'new_rows' })}
        elsif TG_OP = 'DELETE' then
          ${writeEvents(style, [], {
            cols: 'community_id, type, record_id, data',
            select: `o.community_id, '${resource}.deleted', o.id,
                     json_build_object('id', o.id, 'externalId', ${['notifications', 'import_jobs', 'additional_fields'].includes(table) ? 'null' : 'o.external_id'}${membership ? ", 'groupId', o.group_id" : ''})`,
            from: 'from old_rows o',
            order: 'order by o.id',
            alias: 'o',
          })}
        else${
          membership
            ? `
${
              direct
                ? `          -- A reorder moves only order_number on thousands of memberships: when no membership
          -- changed anything else, there is nothing to diff (one plain comparison per row).
          -- Compared: every column (TABLE_COLUMNS) but community_id, order_number, created_at
          -- and modified_at. (EXCEPT, not a join: the planner knows nothing of transition
          -- tables' contents and would loop.)`
                : `          -- A reorder moves only order_number on thousands of memberships: when no membership
          -- changed anything else, there is nothing to diff (one plain comparison per row; the
          -- jsonb diff below costs about 50 us a row). Every column of group_memberships but
          -- id, community_id, order_number, created_at and modified_at is compared: a new column
          -- belongs here too. (EXCEPT, not a join: the planner knows nothing of transition
          -- tables' contents and would loop.)`
            }
          diffed := exists (
            select ${reorderKeys.map((c) => `n.${c}`).join(', ')} from new_rows n
            except
            select ${reorderKeys.map((c) => `o.${c}`).join(', ')} from old_rows o);`
            : ''
        }
          -- Two statements, not one with a flag: folding the merge below into this one (its
          -- update under "written and ...") made every update of a group 0.15 ms dearer (a
          -- server-side loop of 2,000 single-row updates, 0.58-0.61 against 0.39-0.47 ms).
          if diffed and not events_written('${resource}') then
            ${writeEvents(
              style,
              direct
                ? [compared]
                : [
                    pairs,
                    `diff as (
              select p.*, ${changes('p')} as changes
                from pairs p
               where (p.nj - ${unnoticed}) is distinct from (p.oj - ${unnoticed})
            )`,
                  ],
              { cols: `community_id, type, record_id, ${dataCol}, changes`, select: `d.community_id, ${updateType('d')}, d.id, ${dataOf('d')}, d.changes`, from: `from diff d where ${announced('d')}`, order: 'order by d.id', alias: 'd' },
            )}
          elsif diffed then
            -- This transaction announced records of this table before (a member created, then
            -- its values written; a group whose membership count moves; a member whose values
            -- and name change in one request): an event of the same record made earlier in the
            -- transaction is brought up to date instead of a second one (its changes joined).
            ${writeEvents(
              style,
              [
                ...(direct ? [compared] : [pairs, `diff as (select p.*, ${changes('p')} as changes from pairs p)`]),
                `typed as (select d.*, ${updateType('d')} as event_type from diff d)`,
                `merged as (
              update events e
                 set ${dataCol} = ${dataOf('d')},
                     changes = case when e.type = '${resource}.updated' and d.event_type = '${resource}.updated' and cardinality(d.changes) > 0
                                    then array(select distinct x from unnest(e.changes || d.changes) x order by 1) else e.changes end
                from typed d
               where e.txid = pg_current_xact_id() and e.type in (${dataTypes(resource)}) and e.record_id = d.id
              returning e.record_id)`,
              ],
              {
                cols: `community_id, type, record_id, ${dataCol}, changes`,
                select: `d.community_id, d.event_type, d.id, ${dataOf('d')}, d.changes`,
                from: `from typed d
                 where ${announced('d')}
                   and (d.event_type <> '${resource}.updated' or d.id not in (select record_id from merged))`,
                order: 'order by d.id',
                alias: 'd',
              },
            )}
          end if;${
            membership
              ? `
          ${writeEvents(
            style,
            [],
            {
              cols: 'community_id, type, record_id, data',
              select: `n.community_id, 'group_membership.reordered', n.group_id, json_build_object('groupId', n.group_id)`,
              from: `from new_rows n join old_rows o on o.id = n.id
               where n.order_number is distinct from o.order_number
               group by n.community_id, n.group_id`,
              alias: 'n',
            },
            'more',
          )}${
            pending
              ? `
          comms := coalesce(comms, '{}') || coalesce(more, '{}');
          if cardinality(comms) = 0 then comms := null; end if;`
              : ''
          }`
              : ''
          }
        end if;${pending ? `\n${opened(`'${resource}'`)}` : ''}
        return null;
      end $$;`;
}

/** The members whose additional field values the statement changed, into `ids` (every capture of member_field_values since the first). */
export const CHANGED_MEMBER_IDS = `        if TG_OP = 'INSERT' then
          select array_agg(distinct member_id) into ids from new_rows;
        elsif TG_OP = 'DELETE' then
          select array_agg(distinct member_id) into ids from old_rows;
        else
          select array_agg(distinct member_id) into ids from (select member_id from new_rows union select member_id from old_rows) c;
        end if;`;

/**
 * Additional field values belong to their member: a change is member.updated
 * (additionalFields). A member this transaction already announced (created with its values, or
 * updated in the same request) keeps ONE event, refreshed here.
 */
function captureValuesFunction(style: CaptureStyle): string {
  const pending = style === 'pending';
  const dataCol = style === 'snapshot' ? SNAPSHOTS.members.name : 'data';
  const dataOf = (r: string) => (style === 'snapshot' ? snapshotOf('members', r) : EVENT_SHAPES.members(r));
  const updated = (where: string) => ({
    cols: `community_id, type, record_id, ${dataCol}, changes`,
    select: `m.community_id, 'member.updated', m.id, ${dataOf('m')}, array['additionalFields']`,
    from: `from members m
               where ${where}`,
    order: 'order by m.id',
    alias: 'm',
  });
  return `
      create ${pending ? '' : 'or replace '}function events_capture_member_field_values() returns trigger language plpgsql as $$
      declare
        ids uuid[];${pending ? PENDING_VARIABLES.replace('\n        more uuid[];', '') : ''}
      begin
${CHANGED_MEMBER_IDS}
        if events_written('member') then
          ${writeEvents(
            style,
            [
              `refreshed as (
            update events e
               set ${dataCol} = ${dataOf('m')},
                   changes = case when e.type = 'member.updated' and not 'additionalFields' = any (e.changes) and m.id = any (ids)
                                  then array(select unnest(e.changes || array['additionalFields']) order by 1) else e.changes end
              from members m
             where e.txid = pg_current_xact_id() and e.type in ('member.created', 'member.updated') and m.id = e.record_id
            returning e.record_id)`,
            ],
            updated('m.id in (select unnest(ids) except select record_id from refreshed)'),
          )}
        else
          -- members deleted in this statement (a cascade) are announced as deleted, not updated
          ${writeEvents(style, [], updated('m.id = any (ids)'))}
        end if;${pending ? `\n${opened("'member'")}` : ''}
        return null;
      end $$;`;
}

/** The capture functions of every audited table, in the given style. */
export function captureFunctions(style: CaptureStyle): string[] {
  return [...AUDITED.map(([table, resource, ignored]) => captureFunction(style, table, resource, ignored)), captureValuesFunction(style)];
}

/**
 * event_data(data, <snapshot columns>): an event's data as JSON, whichever way it is stored.
 * An inlined SQL function: its readers (the feed, the hub, the webhook dispatch) call it as
 * `eventData('e')`, so a new snapshot changes the signature and its callers together.
 */
export function eventDataFunction(): string {
  const snaps = Object.entries(SNAPSHOTS);
  const params = snaps.map(([, s]) => `, ${s.name} ${s.name}`).join('');
  const rendered = snaps.map(([table, s]) => `\n          when (${s.name}).id is not null then ${SHAPES[table]((col) => `(${s.name}).${col}`)}`).join('');
  return `
      create or replace function event_data(data json${params}) returns json language sql stable as $$
        select case when data is not null then data${rendered} end
      $$;`;
}
export const eventData = (e: string) => `event_data(${e}.data${Object.values(SNAPSHOTS).map((s) => `, ${e}.${s.name}`).join('')})`;
