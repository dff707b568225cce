import { Migration } from '@mikro-orm/migrations';

/**
 * Cheaper outbox writes: the statement triggers append to an UNLOGGED staging table (no WAL,
 * one small index), and the commit trigger moves the transaction's rows into `events` with
 * ONE insert that carries the data and the position, so every event row is written once.
 * Staging rows never outlive their transaction (a crash aborts it; PostgreSQL empties unlogged
 * tables after a crash anyway).
 */
export class Migration20261122140100_event_staging extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
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

      drop index events_pending_idx;
      drop index events_community_position_idx;
      alter table events alter column position set not null;
      create index events_community_position_idx on events (community_id, position, seq);

      create or replace function events_capture() returns trigger language plpgsql as $$
      declare
        resource text := TG_ARGV[0];
        ignored text[] := string_to_array(coalesce(TG_ARGV[1], ''), ',') || array['modified_at', 'community_id'];
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
          with diff as (
            select n.community_id, n.id, to_jsonb(n) as nj,
                   array(select distinct event_field(e.key) from jsonb_each(to_jsonb(n)) e
                          where e.value is distinct from to_jsonb(o) -> e.key and e.key <> all (ignored)
                          order by 1) as changes
              from new_rows n join old_rows o on o.id = n.id
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
               and not (resource = 'group_membership' and d.changes = array['orderNumber'])
               and not (resource = 'import_job' and not ('status' = any (d.changes) and d.nj ->> 'status' in ('COMPLETED', 'FAILED')))
             order by d.id;
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

      create or replace function events_capture_values() returns trigger language plpgsql as $$
      declare
        ids uuid[];
      begin
        if TG_OP = 'INSERT' then
          select array_agg(distinct member_id) into ids from new_rows;
        elsif TG_OP = 'DELETE' then
          select array_agg(distinct member_id) into ids from old_rows;
        else
          select array_agg(distinct member_id) into ids from (select member_id from new_rows union select member_id from old_rows) c;
        end if;
        insert into event_staging (community_id, type, record_id, changes)
          select m.community_id, 'member.updated', m.id, array['additionalFields']
            from members m where m.id = any (ids) order by m.id;
        insert into event_transactions (txid) values (pg_current_xact_id()) on conflict do nothing;
        return null;
      end $$;

      create or replace function events_commit() returns trigger language plpgsql as $$
      declare
        cur xid8 := NEW.txid;
        pos bigint;
      begin
        -- A record created in this transaction is announced once, as created.
        delete from event_staging u
         where u.txid = cur and u.type like '%.updated'
           and exists (select 1 from event_staging c where c.txid = cur
                        and c.record_id = u.record_id and c.type like '%.created' and c.seq < u.seq);

        -- The single sequencer: held until this transaction's commit is complete.
        perform pg_advisory_xact_lock(7355608, 1);
        pos := nextval('event_positions');

        -- Each record's REST shape as committed, set-based per resource (one join each, not a query per row).
        insert into events (community_id, txid, position, type, record_id, data, changes, created_at)
        with st as materialized (select * from event_staging where txid = cur),
        want as (select distinct split_part(type, '.', 1) as kind, record_id from st where data is null),
        gd as (select g.id, jsonb_build_object(
            'id', g.id, 'externalId', g.external_id, 'name', g.name, 'about', g.about, 'color', g.color,
            'membershipCount', g.membership_count, 'isVisibleInApp', g.is_visible_in_app, 'state', g.state,
            'createdAt', event_ts(g.created_at), 'modifiedAt', event_ts(g.modified_at)) as d
          from groups g where g.id in (select record_id from want where kind = 'group')),
        md as (select m.id, jsonb_build_object(
            'id', m.id, 'externalId', m.external_id, 'groupId', m.group_id, 'memberId', m.member_id,
            'memberExternalId', mem.external_id, 'title', m.title, 'orderNumber', m.order_number, 'role', m.role,
            'createdAt', event_ts(m.created_at), 'modifiedAt', event_ts(m.modified_at)) as d
          from group_memberships m join members mem on mem.id = m.member_id
         where m.id in (select record_id from want where kind = 'group_membership')),
        vals as (select v.member_id, jsonb_agg(jsonb_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id) as fields
          from member_field_values v join additional_fields f on f.id = v.field_id
         where v.member_id in (select record_id from want where kind = 'member') group by v.member_id),
        bd as (select m.id, jsonb_build_object(
            'id', m.id, 'externalId', m.external_id, 'firstName', m.first_name, 'lastName', m.last_name,
            'emailAddress', m.email_address, 'additionalFields', coalesce(vals.fields, '[]'::jsonb),
            'createdAt', event_ts(m.created_at), 'modifiedAt', event_ts(m.modified_at)) as d
          from members m left join vals on vals.member_id = m.id
         where m.id in (select record_id from want where kind = 'member')),
        fd as (select f.id, jsonb_build_object(
            'id', f.id, 'name', f.name, 'placeholder', f.placeholder, 'type', f.type,
            'icon', case when f.icon_style is not null and f.icon_unicode is not null
                         then jsonb_build_object('style', f.icon_style, 'unicode', f.icon_unicode) end,
            'isEditableByMember', f.is_editable_by_member, 'isMandatoryForMember', f.is_mandatory_for_member,
            'isVisibleInApp', f.is_visible_in_app, 'orderNumber', f.order_number,
            'createdAt', event_ts(f.created_at), 'modifiedAt', event_ts(f.modified_at)) as d
          from additional_fields f where f.id in (select record_id from want where kind = 'additional_field')),
        nd as (select n.id, jsonb_build_object(
            'id', n.id, 'title', n.title, 'message', n.message, 'status', n.status, 'receiversCount', n.receivers_count,
            'sendAt', event_ts(n.send_at), 'sentAt', event_ts(n.sent_at), 'cancelledAt', event_ts(n.cancelled_at),
            'createdAt', event_ts(n.created_at), 'modifiedAt', event_ts(n.modified_at)) as d
          from notifications n where n.id in (select record_id from want where kind = 'notification')),
        jd as (select j.id, jsonb_build_object(
            'id', j.id, 'kind', j.kind, 'status', j.status, 'total', j.total, 'processed', j.processed,
            'created', j.created, 'updated', j.updated, 'failed', j.failed,
            'createdAt', event_ts(j.created_at), 'modifiedAt', event_ts(j.modified_at)) as d
          from import_jobs j where j.id in (select record_id from want where kind = 'import_job'))
        select s.community_id, cur, pos, s.type, s.record_id,
               coalesce(s.data, gd.d, md.d, bd.d, fd.d, nd.d, jd.d, jsonb_build_object('id', s.record_id)),
               s.changes, s.created_at
          from st s
          left join gd on s.data is null and s.type like 'group.%' and gd.id = s.record_id
          left join md on s.data is null and s.type like 'group\\_membership.%' and md.id = s.record_id
          left join bd on s.data is null and s.type like 'member.%' and bd.id = s.record_id
          left join fd on s.data is null and s.type like 'additional\\_field.%' and fd.id = s.record_id
          left join nd on s.data is null and s.type like 'notification.%' and nd.id = s.record_id
          left join jd on s.data is null and s.type like 'import\\_job.%' and jd.id = s.record_id
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
    `);
  }

  override async down(): Promise<void> {
    this.addSql('drop table event_staging;');
  }
}
