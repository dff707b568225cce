/**
 * Each audited record's REST shape (as its GET answers), as a SQL expression over a row alias:
 * the one definition the capture triggers (over transition tables) and the in-place refreshes
 * (over the live table) both use. Written inline, not as a function: a transition table's row
 * is an anonymous record (no overloading on it), and an expression costs no call per row.
 */
const ts = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
export const EVENT_SHAPES: Record<string, (r: string) => string> = {
  groups: (r) => `json_build_object(
      'id', ${r}.id, 'externalId', ${r}.external_id, 'name', ${r}.name, 'about', ${r}.about, 'color', ${r}.color,
      'membershipCount', ${r}.membership_count, 'isVisibleInApp', ${r}.is_visible_in_app, 'state', ${r}.state,
      'createdAt', ${ts(`${r}.created_at`)}, 'modifiedAt', ${ts(`${r}.modified_at`)})`,
  group_memberships: (r) => `json_build_object(
      'id', ${r}.id, 'externalId', ${r}.external_id, 'groupId', ${r}.group_id, 'memberId', ${r}.member_id,
      'memberExternalId', (select mem.external_id from members mem where mem.id = ${r}.member_id),
      'title', ${r}.title, 'orderNumber', ${r}.order_number, 'role', ${r}.role,
      'createdAt', ${ts(`${r}.created_at`)}, 'modifiedAt', ${ts(`${r}.modified_at`)})`,
  members: (r) => `json_build_object(
      'id', ${r}.id, 'externalId', ${r}.external_id, 'firstName', ${r}.first_name, 'lastName', ${r}.last_name,
      'emailAddress', ${r}.email_address,
      'additionalFields', coalesce((
        select json_agg(json_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id)
          from member_field_values v join additional_fields f on f.id = v.field_id
         where v.member_id = ${r}.id), '[]'::json),
      'createdAt', ${ts(`${r}.created_at`)}, 'modifiedAt', ${ts(`${r}.modified_at`)})`,
  additional_fields: (r) => `json_build_object(
      'id', ${r}.id, 'name', ${r}.name, 'placeholder', ${r}.placeholder, 'type', ${r}.type,
      'icon', case when ${r}.icon_style is not null and ${r}.icon_unicode is not null
                   then json_build_object('style', ${r}.icon_style, 'unicode', ${r}.icon_unicode) end,
      'isEditableByMember', ${r}.is_editable_by_member, 'isMandatoryForMember', ${r}.is_mandatory_for_member,
      'isVisibleInApp', ${r}.is_visible_in_app, 'orderNumber', ${r}.order_number,
      'createdAt', ${ts(`${r}.created_at`)}, 'modifiedAt', ${ts(`${r}.modified_at`)})`,
  notifications: (r) => `json_build_object(
      'id', ${r}.id, 'title', ${r}.title, 'message', ${r}.message, 'status', ${r}.status, 'receiversCount', ${r}.receivers_count,
      'sendAt', ${ts(`${r}.send_at`)}, 'sentAt', ${ts(`${r}.sent_at`)}, 'cancelledAt', ${ts(`${r}.cancelled_at`)},
      'createdAt', ${ts(`${r}.created_at`)}, 'modifiedAt', ${ts(`${r}.modified_at`)})`,
  import_jobs: (r) => `json_build_object(
      'id', ${r}.id, 'kind', ${r}.kind, 'status', ${r}.status, 'total', ${r}.total, 'processed', ${r}.processed,
      'created', ${r}.created, 'updated', ${r}.updated, 'failed', ${r}.failed,
      'createdAt', ${ts(`${r}.created_at`)}, 'modifiedAt', ${ts(`${r}.modified_at`)})`,
};

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
 */
export type CaptureStyle = 'pending' | 'lean';

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
 * communities written go into the variable `into`. 'lean': one row of each community in the
 * statement opens the commit trigger. For `all` rows of a transition table that is its first
 * row (and, should one statement ever write several communities, every row of the others: the
 * commit trigger takes each community once), found by an InitPlan and kept in the table's own
 * order: no sort, no subquery, about a tenth of the outbox's instructions on a single-row insert.
 * Otherwise row_number over the rows written (they may be filtered or grouped).
 */
function writeEvents(style: CaptureStyle, ctes: string[], ins: EventInsert, into = 'comms'): string {
  const order = ins.order ? ` ${ins.order}` : '';
  if (style === 'lean') {
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
  const ignored = `array[${[...ignoredColumns, 'modified_at', 'community_id'].map((c) => `'${c}'`).join(', ')}]::text[]`;
  const unnoticed = resource === 'group_membership' ? `(${ignored} || array['order_number'])` : ignored;
  const shape = EVENT_SHAPES[table];
  const membership = resource === 'group_membership';
  const changes = changesOf(ignored);
  const pending = style === 'pending';
  const updateType = (d: string) =>
    resource === 'notification'
      ? `case when ${d}.nj ->> 'status' = 'SENT' and 'status' = any (${d}.changes) then 'notification.sent' else 'notification.updated' end`
      : resource === 'import_job'
        ? `case when 'status' = any (${d}.changes) and ${d}.nj ->> 'status' = 'COMPLETED' then 'import_job.completed'
                when 'status' = any (${d}.changes) and ${d}.nj ->> 'status' = 'FAILED' then 'import_job.failed' else 'import_job.updated' end`
        : `'${resource}.updated'`;
  // Which changed rows are events: a membership whose order alone changed is announced by the
  // one reordered event of its group; an import's progress counters are not events, its outcome is.
  const announced = (d: string) =>
    [
      `cardinality(${d}.changes) > 0`,
      ...(membership ? [`${d}.changes <> array['orderNumber']`] : []),
      ...(resource === 'import_job' ? [`'status' = any (${d}.changes) and ${d}.nj ->> 'status' in ('COMPLETED', 'FAILED')`] : []),
    ].join(' and ');
  // Each row as jsonb once; rows where only ignored columns changed are dropped before the per-key diff.
  const pairs = `pairs as materialized (
              select n.*, to_jsonb(n) as nj, to_jsonb(o) as oj
                from new_rows n join old_rows o on o.id = n.id
            )`;
  return `
      create ${pending ? '' : 'or replace '}function events_capture_${table}() returns trigger language plpgsql as $$
      declare
        diffed boolean := true;${pending ? PENDING_VARIABLES : ''}
      begin
        if TG_OP = 'INSERT' then
          ${writeEvents(style, [], { cols: 'community_id, type, record_id, data', select: `n.community_id, '${resource}.created', n.id, ${shape('n')}`, from: 'from new_rows n', order: 'order by n.id', alias: 'n', all: 'new_rows' })}
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
          -- A reorder moves only order_number on thousands of memberships: when no membership
          -- changed anything else, there is nothing to diff (one plain comparison per row; the
          -- jsonb diff below costs about 50 us a row). Every column of group_memberships but
          -- id, community_id, order_number, created_at and modified_at is compared: a new column
          -- belongs here too. (EXCEPT, not a join: the planner knows nothing of transition
          -- tables' contents and would loop.)
          diffed := exists (
            select n.id, n.title, n.role, n.external_id, n.member_id, n.group_id from new_rows n
            except
            select o.id, o.title, o.role, o.external_id, o.member_id, o.group_id from old_rows o);`
            : ''
        }
          -- Two statements, not one with a flag: folding the merge below into this one (its
          -- update under "written and ...") made every update of a group 0.15 ms dearer (a
          -- server-side loop of 2,000 single-row updates, 0.58-0.61 against 0.39-0.47 ms).
          if diffed and not events_written('${resource}') then
            ${writeEvents(
              style,
              [
                pairs,
                `diff as (
              select p.*, ${changes('p')} as changes
                from pairs p
               where (p.nj - ${unnoticed}) is distinct from (p.oj - ${unnoticed})
            )`,
              ],
              { cols: 'community_id, type, record_id, data, changes', select: `d.community_id, ${updateType('d')}, d.id, ${shape('d')}, d.changes`, from: `from diff d where ${announced('d')}`, order: 'order by d.id', alias: 'd' },
            )}
          elsif diffed then
            -- This transaction announced records of this table before (a member created, then
            -- its values written; a group whose membership count moves; a member whose values
            -- and name change in one request): an event of the same record made earlier in the
            -- transaction is brought up to date instead of a second one (its changes joined).
            ${writeEvents(
              style,
              [
                pairs,
                `diff as (select p.*, ${changes('p')} as changes from pairs p)`,
                `typed as (select d.*, ${updateType('d')} as event_type from diff d)`,
                `merged as (
              update events e
                 set data = ${shape('d')},
                     changes = case when e.type = '${resource}.updated' and d.event_type = '${resource}.updated' and cardinality(d.changes) > 0
                                    then array(select distinct x from unnest(e.changes || d.changes) x order by 1) else e.changes end
                from typed d
               where e.txid = pg_current_xact_id() and e.type in (${dataTypes(resource)}) and e.record_id = d.id
              returning e.record_id)`,
              ],
              {
                cols: 'community_id, type, record_id, data, changes',
                select: `d.community_id, d.event_type, d.id, ${shape('d')}, d.changes`,
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
  const updated = (where: string) => ({
    cols: 'community_id, type, record_id, data, changes',
    select: `m.community_id, 'member.updated', m.id, ${EVENT_SHAPES.members('m')}, array['additionalFields']`,
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
               set data = ${EVENT_SHAPES.members('m')},
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
