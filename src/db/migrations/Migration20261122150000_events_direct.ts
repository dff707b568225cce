import { Migration } from '@mikro-orm/migrations';

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
const AUDITED: [string, string, string[]][] = [
  ['groups', 'group', ['membership_count']],
  ['group_memberships', 'group_membership', []],
  ['members', 'member', []],
  ['additional_fields', 'additional_field', []],
  ['notifications', 'notification', []],
  ['import_jobs', 'import_job', ['payload']],
];
const ALL_AUDITED = [...AUDITED.map(([table]) => table), 'member_field_values'];

/** The event types of a resource whose data is the record (not deleted, not reordered). */
const dataTypes = (resource: string) =>
  [`${resource}.created`, `${resource}.updated`, ...(resource === 'notification' ? ['notification.sent'] : []), ...(resource === 'import_job' ? ['import_job.completed', 'import_job.failed'] : [])]
    .map((t) => `'${t}'`)
    .join(', ');

/**
 * After a capture wrote events of the communities in \`comms\`: queues the commit trigger once per
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

/** The statement trigger function of one audited table (see the class comment). */
function captureFunction(table: string, resource: string, ignoredColumns: string[]): string {
  const ignored = `array[${[...ignoredColumns, 'modified_at', 'community_id'].map((c) => `'${c}'`).join(', ')}]::text[]`;
  const unnoticed = resource === 'group_membership' ? `(${ignored} || array['order_number'])` : ignored;
  const shape = EVENT_SHAPES[table];
  const membership = resource === 'group_membership';
  const changes = changesOf(ignored);
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
  return `
      create function events_capture_${table}() returns trigger language plpgsql as $$
      declare
        diffed boolean := true;
        comms uuid[];
        more uuid[];
        opened text;
        was text;
        c uuid;
      begin
        if TG_OP = 'INSERT' then
          with ins as (
            insert into events (community_id, type, record_id, data)
              select n.community_id, '${resource}.created', n.id, ${shape('n')} from new_rows n order by n.id
              returning community_id)
          select array_agg(distinct community_id) into comms from ins;
        elsif TG_OP = 'DELETE' then
          with ins as (
            insert into events (community_id, type, record_id, data)
              select o.community_id, '${resource}.deleted', o.id,
                     json_build_object('id', o.id, 'externalId', ${['notifications', 'import_jobs', 'additional_fields'].includes(table) ? 'null' : 'o.external_id'}${membership ? ", 'groupId', o.group_id" : ''})
                from old_rows o order by o.id
              returning community_id)
          select array_agg(distinct community_id) into comms from ins;
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
            -- Each row as jsonb once; rows where only ignored columns changed are dropped
            -- before the per-key diff.
            with pairs as materialized (
              select n.*, to_jsonb(n) as nj, to_jsonb(o) as oj
                from new_rows n join old_rows o on o.id = n.id
            ),
            diff as (
              select p.*, ${changes('p')} as changes
                from pairs p
               where (p.nj - ${unnoticed}) is distinct from (p.oj - ${unnoticed})
            ),
            ins as (
              insert into events (community_id, type, record_id, data, changes)
                select d.community_id, ${updateType('d')}, d.id, ${shape('d')}, d.changes
                  from diff d
                 where ${announced('d')}
                 order by d.id
                returning community_id)
            select array_agg(distinct community_id) into comms from ins;
          elsif diffed then
            -- This transaction announced records of this table before (a member created, then
            -- its values written; a group whose membership count moves; a member whose values
            -- and name change in one request): an event of the same record made earlier in the
            -- transaction is brought up to date instead of a second one (its changes joined).
            with pairs as materialized (
              select n.*, to_jsonb(n) as nj, to_jsonb(o) as oj
                from new_rows n join old_rows o on o.id = n.id
            ),
            diff as (select p.*, ${changes('p')} as changes from pairs p),
            typed as (select d.*, ${updateType('d')} as event_type from diff d),
            merged as (
              update events e
                 set data = ${shape('d')},
                     changes = case when e.type = '${resource}.updated' and d.event_type = '${resource}.updated' and cardinality(d.changes) > 0
                                    then array(select distinct x from unnest(e.changes || d.changes) x order by 1) else e.changes end
                from typed d
               where e.txid = pg_current_xact_id() and e.type in (${dataTypes(resource)}) and e.record_id = d.id
              returning e.record_id),
            ins as (
              insert into events (community_id, type, record_id, data, changes)
                select d.community_id, d.event_type, d.id, ${shape('d')}, d.changes
                  from typed d
                 where ${announced('d')}
                   and (d.event_type <> '${resource}.updated' or d.id not in (select record_id from merged))
                 order by d.id
                returning community_id)
            select array_agg(distinct community_id) into comms from ins;
          end if;${
            membership
              ? `
          with ins as (
            insert into events (community_id, type, record_id, data)
              select n.community_id, 'group_membership.reordered', n.group_id, json_build_object('groupId', n.group_id)
                from new_rows n join old_rows o on o.id = n.id
               where n.order_number is distinct from o.order_number
               group by n.community_id, n.group_id
              returning community_id)
          select array_agg(distinct community_id) into more from ins;
          comms := coalesce(comms, '{}') || coalesce(more, '{}');
          if cardinality(comms) = 0 then comms := null; end if;`
              : ''
          }
        end if;
${opened(`'${resource}'`)}
        return null;
      end $$;`;
}

/**
 * Additional field values belong to their member: a change is member.updated
 * (additionalFields). A member this transaction already announced (created with its values, or
 * updated in the same request) keeps ONE event, refreshed here.
 */
const captureValuesFunction = `
      create function events_capture_member_field_values() returns trigger language plpgsql as $$
      declare
        ids uuid[];
        comms uuid[];
        opened text;
        was text;
        c uuid;
      begin
        if TG_OP = 'INSERT' then
          select array_agg(distinct member_id) into ids from new_rows;
        elsif TG_OP = 'DELETE' then
          select array_agg(distinct member_id) into ids from old_rows;
        else
          select array_agg(distinct member_id) into ids from (select member_id from new_rows union select member_id from old_rows) c;
        end if;
        if events_written('member') then
          with refreshed as (
            update events e
               set data = ${EVENT_SHAPES.members('m')},
                   changes = case when e.type = 'member.updated' and not 'additionalFields' = any (e.changes) and m.id = any (ids)
                                  then array(select unnest(e.changes || array['additionalFields']) order by 1) else e.changes end
              from members m
             where e.txid = pg_current_xact_id() and e.type in ('member.created', 'member.updated') and m.id = e.record_id
            returning e.record_id),
          ins as (
            insert into events (community_id, type, record_id, data, changes)
              select m.community_id, 'member.updated', m.id, ${EVENT_SHAPES.members('m')}, array['additionalFields']
                from members m
               where m.id in (select unnest(ids) except select record_id from refreshed)
               order by m.id
              returning community_id)
          select array_agg(distinct community_id) into comms from ins;
        else
          -- members deleted in this statement (a cascade) are announced as deleted, not updated
          with ins as (
            insert into events (community_id, type, record_id, data, changes)
              select m.community_id, 'member.updated', m.id, ${EVENT_SHAPES.members('m')}, array['additionalFields']
                from members m where m.id = any (ids) order by m.id
              returning community_id)
          select array_agg(distinct community_id) into comms from ins;
        end if;
${opened("'member'")}
        return null;
      end $$;`;

/**
 * The outbox, written once (docs/events.md, "How events are made"). The first version
 * (Migration20261122140000_events) staged every changed row and, at commit, looked each record
 * up again, built its data and wrote the event: two writes and a lookup per event, and eight
 * statements per transaction. Now:
 *
 * - The capture triggers (one per statement, with transition tables) write each event ONCE,
 *   its `data` built from the transition table's row by the table's shape (`EVENT_SHAPES`, a
 *   SQL expression written into each table's generated function: no function call per row). A later
 *   statement of the same transaction that changes what an event of it shows (a member's
 *   additional field values, a group's membership count) refreshes that event in place.
 * - Positions move to `event_commits`: one row per (transaction, community), written at
 *   commit under the single sequencer lock, as before. A transaction's first event of a
 *   community queues that commit-time trigger once, through one row in the unlogged
 *   `event_pending` (no index; stale rows are swept by txid horizon).
 * - Event ids are made from (position, seq) when read (`event_id`, UUID version 8 layout):
 *   no random id, no unique index per event; an `after` cursor decodes to its position.
 */
export class Migration20261122150000_events_direct extends Migration {
  override async up(): Promise<void> {
    for (const table of ALL_AUDITED) {
      this.addSql(`drop trigger ${table}_events_ins on ${table}; drop trigger ${table}_events_upd on ${table}; drop trigger ${table}_events_del on ${table};`);
    }
    this.addSql(`
      drop trigger event_transactions_commit on event_transactions;
      drop function events_capture(); drop function events_capture_values(); drop function events_commit();

      -- Stable, not immutable: to_char is stable, and only a function no less volatile than
      -- its body is inlined (about 3 us an event where it is used).
      create or replace function event_ts(t timestamptz) returns text language sql stable as $$
        select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      $$;

      -- An event's public id: its position (48 bits) and seq (60 bits) in a UUID of version 8.
      create function event_id(pos bigint, seq bigint) returns uuid language sql immutable as $$
        select (lpad(to_hex(pos), 12, '0') || '80008' || lpad(to_hex(seq), 15, '0'))::uuid
      $$;

      -- One row per (committed transaction, community) that wrote events: the feed's order.
      create table event_commits (
        community_id uuid not null,
        position bigint not null,
        txid xid8 not null,
        committed_at timestamptz(3) not null,
        primary key (community_id, position)
      );
      create index event_commits_position_idx on event_commits (position);
      insert into event_commits (community_id, position, txid, committed_at)
        select community_id, position, txid, max(created_at) from events where position is not null group by 1, 2, 3;
      delete from events where position is null;

      alter table events drop constraint events_pkey;
      alter table events drop constraint events_id_unique;
      alter table events drop column id;
      alter table events drop column position;
      alter table events alter column data type json using data::json;
      alter table events add primary key (txid, seq);
      alter table events alter column seq set cache 100;
      drop table event_staging;
      drop table event_transactions;
      drop function event_uuid_v7();

      -- A writing transaction's first event of a community inserts one row here: its insert
      -- queues events_commit() for the commit. Never read by key: no index.
      create unlogged table event_pending (
        txid xid8 not null default pg_current_xact_id(),
        community_id uuid not null
      );

      -- Whether this transaction already wrote events of the resource.
      create function events_written(resource text) returns boolean language sql stable as $$
        select strpos(coalesce(current_setting('events.open', true), ''), ':' || resource || ',') > 0
      $$;

      -- Instances whose event hub has GraphQL subscribers (modules/events/hub.ts): the commit
      -- trigger NOTIFYs only while one has renewed its entry in the last 2 minutes.
      create unlogged table event_listeners (instance_id text primary key, seen_at timestamptz not null);

      -- At commit, once per (writing transaction, community).
      create function events_commit() returns trigger language plpgsql as $$
      declare
        pos bigint;
        hooked boolean;
        heard boolean;
      begin
        -- The single sequencer: held until this transaction's commit is complete, so positions
        -- become visible in order and a reader never sees a later one before an earlier one.
        perform pg_advisory_xact_lock(7355608, 1);
        insert into event_commits (community_id, position, txid, committed_at)
          values (NEW.community_id, nextval('event_positions'), NEW.txid, clock_timestamp())
          returning position into pos;
        select exists (select 1 from webhook_endpoints w where w.community_id = NEW.community_id and w.enabled),
               exists (select 1 from event_listeners l where l.seen_at > now() - interval '2 minutes')
          into hooked, heard;
        -- Webhooks: one dispatch job when the community has an enabled endpoint.
        if hooked then
          perform graphile_worker.add_job('webhooks:dispatch', json_build_object('position', pos, 'communityId', NEW.community_id), max_attempts => 25);
        end if;
        -- Subscriptions on every instance (delivered at commit only), when some instance listens.
        if heard then perform pg_notify('community_events', pos::text); end if;
        -- Now and then, the queue rows of finished transactions go.
        if pos % 1000 = 0 then
          delete from event_pending where txid < pg_snapshot_xmin(pg_current_snapshot());
        end if;
        return null;
      end $$;

      create constraint trigger event_pending_commit after insert on event_pending
        deferrable initially deferred for each row execute function events_commit();
    `);
    for (const [table, resource, ignored] of AUDITED) this.addSql(captureFunction(table, resource, ignored));
    this.addSql(captureValuesFunction);
    for (const table of ALL_AUDITED) {
      this.addSql(`
        create trigger ${table}_events_ins after insert on ${table} referencing new table as new_rows
          for each statement execute function events_capture_${table}();
        create trigger ${table}_events_upd after update on ${table} referencing old table as old_rows new table as new_rows
          for each statement execute function events_capture_${table}();
        create trigger ${table}_events_del after delete on ${table} referencing old table as old_rows
          for each statement execute function events_capture_${table}();
      `);
    }
  }

  override async down(): Promise<void> {
    throw new Error('Migration20261122150000_events_direct cannot be reverted: restore a backup taken before it');
  }
}
