import { Migration } from '@mikro-orm/migrations';
import { CHANGED_MEMBER_IDS } from './event-capture';

/**
 * The transactional outbox (docs/events.md). Statement-level triggers with transition tables
 * append one staging row per changed row in the same transaction as the change, whatever wrote
 * it (REST, GraphQL, bulk statements, imports, cascades). The staging table is UNLOGGED (no WAL)
 * and its rows never outlive their transaction (a crash aborts it; PostgreSQL empties unlogged
 * tables after a crash anyway). At commit a deferred trigger, once per transaction, moves the
 * transaction's rows into `events` with ONE insert that carries each event's `data` (the record
 * as committed) and the transaction's `position`, taken from a sequence while holding a single
 * advisory lock until the commit ends: positions therefore follow commit order and a reader
 * never sees a later position before an earlier one (no outbox gap). Every event row is
 * written once. Webhook endpoints and deliveries live here too.
 */
export class Migration20261122140000_events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      -- Time-ordered ids (UUID version 7 layout) for events: the id tells when an event was made.
      create function event_uuid_v7() returns uuid language sql volatile as $$
        select encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing
          substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3) from 1 for 6),
          52, 1), 53, 1), 'hex')::uuid
      $$;

      create function event_ts(t timestamptz) returns text language sql immutable as $$
        select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      $$;

      -- snake_case column -> camelCase REST field
      create function event_field(col text) returns text language sql immutable as $$
        select case when col in ('icon_style', 'icon_unicode') then 'icon' else
          (select string_agg(case when i = 1 then p else initcap(p) end, '' order by i)
             from unnest(string_to_array(col, '_')) with ordinality as t(p, i)) end
      $$;

      create sequence event_positions;

      -- No foreign key to communities: the log outlives what it describes.
      create table events (
        seq bigint generated always as identity primary key,
        id uuid not null default event_uuid_v7(),
        community_id uuid not null,
        txid xid8 not null default pg_current_xact_id(),
        position bigint not null,
        type text not null,
        record_id uuid not null,
        data jsonb null,
        changes text[] null,
        created_at timestamptz(3) not null default statement_timestamp(),
        constraint events_id_unique unique (id)
      );
      -- No index on created_at: event ids are time-ordered, so the retention purge deletes by id range.
      create index events_community_position_idx on events (community_id, position, seq);

      create unlogged table event_staging (
        seq bigint generated always as identity primary key,
        txid xid8 not null default pg_current_xact_id(),
        community_id uuid not null,
        type text not null,
        record_id uuid not null,
        data jsonb null,
        changes text[] null,
        created_at timestamptz(3) not null default statement_timestamp()
      );
      create index event_staging_txid_idx on event_staging (txid);

      -- One row per writing transaction while it runs: its insert queues the commit-time trigger once.
      create table event_transactions (txid xid8 primary key);

      create table webhook_endpoints (
        id uuid primary key,
        community_id uuid not null references communities (id) on delete cascade,
        url text not null,
        events text[] not null,
        description varchar(1024) null,
        secret text not null,
        enabled boolean not null default true,
        disabled_reason text null,
        failing_since timestamptz(3) null,
        created_at timestamptz(3) not null,
        modified_at timestamptz(3) not null
      );
      create index webhook_endpoints_community_created_idx on webhook_endpoints (community_id, created_at, id);

      create table webhook_deliveries (
        id uuid primary key,
        community_id uuid not null,
        endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
        event_id uuid not null,
        type text not null,
        payload text not null,
        status text not null default 'PENDING' check (status in ('PENDING', 'SUCCEEDED', 'FAILED')),
        attempts integer not null default 0,
        response_status integer null,
        last_error text null,
        next_attempt_at timestamptz(3) null,
        created_at timestamptz(3) not null,
        modified_at timestamptz(3) not null,
        constraint webhook_deliveries_endpoint_event_unique unique (endpoint_id, event_id)
      );
      create index webhook_deliveries_endpoint_created_idx on webhook_deliveries (endpoint_id, created_at, id);

      -- Every attempt of every delivery, as it happened.
      create table webhook_delivery_attempts (
        id bigint generated always as identity primary key,
        delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
        attempted_at timestamptz(3) not null,
        response_status integer null,
        error text null,
        duration_ms integer not null
      );
      create index webhook_delivery_attempts_delivery_idx on webhook_delivery_attempts (delivery_id, id);

      -- The row trigger of every audited table: TG_ARGV[0] is the event resource,
      -- TG_ARGV[1] the columns whose change alone is not an update (comma-separated).
      create function events_capture() returns trigger language plpgsql as $$
      declare
        resource text := TG_ARGV[0];
        ignored text[] := string_to_array(coalesce(TG_ARGV[1], ''), ',') || array['modified_at', 'community_id'];
        unnoticed text[] := ignored || case when resource = 'group_membership' then array['order_number'] else array[]::text[] end;
        diffed boolean := true;
      begin
        if TG_OP = 'INSERT' then
          insert into event_staging (community_id, type, record_id)
            select n.community_id, resource || '.created', n.id from new_rows n order by n.id;
        elsif TG_OP = 'DELETE' then
          insert into event_staging (community_id, type, record_id, data)
            select o.community_id, resource || '.deleted', o.id,
                   jsonb_build_object('id', o.id, 'externalId', to_jsonb(o) -> 'external_id')
                   || case when resource = 'group_membership' then jsonb_build_object('groupId', to_jsonb(o) -> 'group_id') else '{}'::jsonb end
              from old_rows o order by o.id;
        else
          -- A reorder moves only order_number on thousands of memberships: when no membership
          -- changed anything else, there is nothing to diff (one plain comparison per row; the
          -- jsonb diff below costs about 50 us a row, a second per reorder of 10,000). Every
          -- column of group_memberships but id, community_id, order_number, created_at and
          -- modified_at is compared: a new column belongs in both lists.
          -- (EXCEPT, not a join: the planner knows nothing of transition tables and would loop.)
          -- (Its own statement: plpgsql plans it for the memberships table only.)
          if resource = 'group_membership' then
            diffed := exists (
              select n.id, n.title, n.role, n.external_id, n.member_id, n.group_id from new_rows n
              except
              select o.id, o.title, o.role, o.external_id, o.member_id, o.group_id from old_rows o);
          end if;
          if diffed then
            -- Each row as jsonb once; rows where only ignored columns changed (a reorder moves
            -- only order_number on thousands of rows) are dropped before the per-key diff.
            with pairs as materialized (
              select n.community_id, n.id, to_jsonb(n) as nj, to_jsonb(o) as oj
                from new_rows n join old_rows o on o.id = n.id
            ),
            diff as (
              select p.community_id, p.id, p.nj,
                     array(select distinct event_field(e.key) from jsonb_each(p.nj) e
                            where e.value is distinct from p.oj -> e.key and e.key <> all (ignored)
                            order by 1) as changes
                from pairs p
               -- (a membership whose order alone changed is announced by the one reordered event below)
               where (p.nj - unnoticed) is distinct from (p.oj - unnoticed)
            )
            insert into event_staging (community_id, type, record_id, changes)
              select d.community_id,
                     case
                       when resource = 'notification' and d.nj ->> 'status' = 'SENT' and 'status' = any (d.changes) then 'notification.sent'
                       when resource = 'import_job' and d.nj ->> 'status' = 'COMPLETED' then 'import_job.completed'
                       when resource = 'import_job' and d.nj ->> 'status' = 'FAILED' then 'import_job.failed'
                       else resource || '.updated'
                     end,
                     d.id, d.changes
                from diff d
               where cardinality(d.changes) > 0
                 -- a reorder is one event per group (below), not one per membership
                 and not (resource = 'group_membership' and d.changes = array['orderNumber'])
                 -- an import's progress counters are not events; its outcome is
                 and not (resource = 'import_job' and not ('status' = any (d.changes) and d.nj ->> 'status' in ('COMPLETED', 'FAILED')))
               order by d.id;
          end if;
          if resource = 'group_membership' then
            insert into event_staging (community_id, type, record_id, data)
              select n.community_id, 'group_membership.reordered', n.group_id, jsonb_build_object('groupId', n.group_id)
                from new_rows n join old_rows o on o.id = n.id
               where n.order_number is distinct from o.order_number
               group by n.community_id, n.group_id;
          end if;
        end if;
        insert into event_transactions (txid) values (pg_current_xact_id()) on conflict do nothing;
        return null;
      end $$;

      -- Additional field values belong to their member: a change is member.updated (additionalFields).
      create function events_capture_values() returns trigger language plpgsql as $$
      declare
        ids uuid[];
      begin
${CHANGED_MEMBER_IDS}
        -- members deleted in this statement (a cascade) are announced as deleted, not updated
        insert into event_staging (community_id, type, record_id, changes)
          select m.community_id, 'member.updated', m.id, array['additionalFields']
            from members m where m.id = any (ids) order by m.id;
        insert into event_transactions (txid) values (pg_current_xact_id()) on conflict do nothing;
        return null;
      end $$;

      -- At commit, once per writing transaction.
      create function events_commit() returns trigger language plpgsql as $$
      declare
        cur xid8 := NEW.txid;
        pos bigint;
      begin
        -- The single sequencer: held until this transaction's commit is complete.
        perform pg_advisory_xact_lock(7355608, 1);
        pos := nextval('event_positions');

        -- One insert: each event with its record's REST shape as committed. The shape is a
        -- CASE branch per resource with one index lookup per event, never a join of the
        -- staging rows: the staging table is never analysed, and a join planned on its
        -- guessed row count turned a bulk of 1,000 into a million-row nested loop.
        -- A record created in this transaction is announced once, as created (created_before).
        insert into events (community_id, txid, position, type, record_id, data, changes, created_at)
        select s.community_id, cur, pos, s.type, s.record_id,
               coalesce(s.data, case split_part(s.type, '.', 1)
                 when 'group' then (select jsonb_build_object(
                     'id', g.id, 'externalId', g.external_id, 'name', g.name, 'about', g.about, 'color', g.color,
                     'membershipCount', g.membership_count, 'isVisibleInApp', g.is_visible_in_app, 'state', g.state,
                     'createdAt', event_ts(g.created_at), 'modifiedAt', event_ts(g.modified_at))
                   from groups g where g.id = s.record_id)
                 when 'group_membership' then (select jsonb_build_object(
                     'id', m.id, 'externalId', m.external_id, 'groupId', m.group_id, 'memberId', m.member_id,
                     'memberExternalId', mem.external_id, 'title', m.title, 'orderNumber', m.order_number, 'role', m.role,
                     'createdAt', event_ts(m.created_at), 'modifiedAt', event_ts(m.modified_at))
                   from group_memberships m join members mem on mem.id = m.member_id where m.id = s.record_id)
                 when 'member' then (select jsonb_build_object(
                     'id', m.id, 'externalId', m.external_id, 'firstName', m.first_name, 'lastName', m.last_name,
                     'emailAddress', m.email_address,
                     'additionalFields', coalesce((
                       select jsonb_agg(jsonb_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id)
                         from member_field_values v join additional_fields f on f.id = v.field_id
                        where v.member_id = m.id), '[]'::jsonb),
                     'createdAt', event_ts(m.created_at), 'modifiedAt', event_ts(m.modified_at))
                   from members m where m.id = s.record_id)
                 when 'additional_field' then (select jsonb_build_object(
                     'id', f.id, 'name', f.name, 'placeholder', f.placeholder, 'type', f.type,
                     'icon', case when f.icon_style is not null and f.icon_unicode is not null
                                  then jsonb_build_object('style', f.icon_style, 'unicode', f.icon_unicode) end,
                     'isEditableByMember', f.is_editable_by_member, 'isMandatoryForMember', f.is_mandatory_for_member,
                     'isVisibleInApp', f.is_visible_in_app, 'orderNumber', f.order_number,
                     'createdAt', event_ts(f.created_at), 'modifiedAt', event_ts(f.modified_at))
                   from additional_fields f where f.id = s.record_id)
                 when 'notification' then (select jsonb_build_object(
                     'id', n.id, 'title', n.title, 'message', n.message, 'status', n.status, 'receiversCount', n.receivers_count,
                     'sendAt', event_ts(n.send_at), 'sentAt', event_ts(n.sent_at), 'cancelledAt', event_ts(n.cancelled_at),
                     'createdAt', event_ts(n.created_at), 'modifiedAt', event_ts(n.modified_at))
                   from notifications n where n.id = s.record_id)
                 when 'import_job' then (select jsonb_build_object(
                     'id', j.id, 'kind', j.kind, 'status', j.status, 'total', j.total, 'processed', j.processed,
                     'created', j.created, 'updated', j.updated, 'failed', j.failed,
                     'createdAt', event_ts(j.created_at), 'modifiedAt', event_ts(j.modified_at))
                   from import_jobs j where j.id = s.record_id)
               end,
               -- a record created and deleted in one transaction keeps its id
               jsonb_build_object('id', s.record_id)),
               s.changes, s.created_at
          from (select st.*, bool_or(st.type like '%.created') over (
                         partition by st.record_id order by st.seq rows between unbounded preceding and 1 preceding) as created_before
                  from event_staging st where st.txid = cur) s
         where not (s.type like '%.updated' and coalesce(s.created_before, false))
         order by s.seq;
        delete from event_staging where txid = cur;

        -- Webhooks: one dispatch job when a community of this transaction has an enabled endpoint.
        if exists (select 1 from webhook_endpoints w
                    where w.enabled and w.community_id in (select community_id from events where community_id = w.community_id and position = pos)) then
          perform graphile_worker.add_job('webhooks:dispatch', json_build_object('position', pos), max_attempts => 25);
        end if;
        -- Subscriptions on every instance (delivered at commit only).
        perform pg_notify('community_events', pos::text);
        delete from event_transactions where txid = cur;
        return null;
      end $$;

      create constraint trigger event_transactions_commit after insert on event_transactions
        deferrable initially deferred for each row execute function events_commit();
    `);
    const tables: [string, string, string][] = [
      ['groups', 'group', 'membership_count'],
      ['group_memberships', 'group_membership', ''],
      ['members', 'member', ''],
      ['additional_fields', 'additional_field', ''],
      ['notifications', 'notification', ''],
      ['import_jobs', 'import_job', 'payload'],
    ];
    for (const [table, resource, ignored] of tables) {
      this.addSql(`
        create trigger ${table}_events_ins after insert on ${table} referencing new table as new_rows
          for each statement execute function events_capture('${resource}', '${ignored}');
        create trigger ${table}_events_upd after update on ${table} referencing old table as old_rows new table as new_rows
          for each statement execute function events_capture('${resource}', '${ignored}');
        create trigger ${table}_events_del after delete on ${table} referencing old table as old_rows
          for each statement execute function events_capture('${resource}', '${ignored}');
      `);
    }
    this.addSql(`
      create trigger member_field_values_events_ins after insert on member_field_values referencing new table as new_rows
        for each statement execute function events_capture_values();
      create trigger member_field_values_events_upd after update on member_field_values referencing old table as old_rows new table as new_rows
        for each statement execute function events_capture_values();
      create trigger member_field_values_events_del after delete on member_field_values referencing old table as old_rows
        for each statement execute function events_capture_values();
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      drop trigger event_transactions_commit on event_transactions;
      drop table webhook_delivery_attempts; drop table webhook_deliveries; drop table webhook_endpoints;
      drop table event_transactions; drop table event_staging; drop table events; drop sequence event_positions;
    `);
    for (const table of ['groups', 'group_memberships', 'members', 'additional_fields', 'notifications', 'import_jobs', 'member_field_values']) {
      this.addSql(`drop trigger ${table}_events_ins on ${table}; drop trigger ${table}_events_upd on ${table}; drop trigger ${table}_events_del on ${table};`);
    }
    this.addSql('drop function events_capture(); drop function events_capture_values(); drop function events_commit(); drop function event_field(text); drop function event_ts(timestamptz); drop function event_uuid_v7();');
  }
}
