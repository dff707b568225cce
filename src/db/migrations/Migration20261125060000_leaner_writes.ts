import { Migration } from '@mikro-orm/migrations';

/**
 * Cheaper writes of memberships (docs/performance.md, "Writes, retries and the outbox"):
 *
 * - `group_memberships_community_id_fkey` is dropped. A membership's community is already held
 *   by its composite keys, `(community_id, group_id)` referencing a group and `(community_id,
 *   member_id)` a member, each of which references its community, and deleting a community
 *   still removes its memberships (through its groups and members, both `on delete cascade`),
 *   as it does for additional field values. The key cost one lookup of the community per
 *   membership written: 32 of the 381 million instructions PostgreSQL spent on a bulk of
 *   1,000.
 * - A member's `member.created` event no longer looks up the member's additional field values
 *   when the member is inserted: there are none yet (see the comment in the function), and
 *   the lookup was 24 of the 339 million instructions of an import batch of 1,000 members.
 *   The rest of `events_capture_members` is unchanged.
 */
export class Migration20261125060000_leaner_writes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table group_memberships drop constraint group_memberships_community_id_fkey;`);
    this.addSql(`
      CREATE OR REPLACE FUNCTION public.events_capture_members()
       RETURNS trigger
       LANGUAGE plpgsql
      AS $function$
            declare
              diffed boolean := true;
            begin
              if TG_OP = 'INSERT' then
                -- A member just inserted has no additional field values yet: their key needs the
                -- member row, so they are written by a later statement, whose capture brings this
                -- event up to date (events_capture_member_field_values). No lookup per member.
                insert into events (community_id, type, record_id, member_snapshot, opens)
                    select n.community_id, 'member.created', n.id, row(n.id, n.external_id, n.first_name, n.last_name, n.email_address, '[]'::json, n.created_at, n.modified_at)::member_snapshot,
                           case when n.id = (select f.id from new_rows f limit 1) or n.community_id <> (select f.community_id from new_rows f limit 1) then true end
                      from new_rows n;
              elsif TG_OP = 'DELETE' then
                insert into events (community_id, type, record_id, data, opens)
                    select o.community_id, 'member.deleted', o.id,
                           json_build_object('id', o.id, 'externalId', o.external_id),
                           case when row_number() over (partition by o.community_id) = 1 then true end
                      from old_rows o order by o.id;
              else
                -- Two statements, not one with a flag: folding the merge below into this one (its
                -- update under "written and ...") made every update of a group 0.15 ms dearer (a
                -- server-side loop of 2,000 single-row updates, 0.58-0.61 against 0.39-0.47 ms).
                if diffed and not events_written('member') then
                  with diff as (
                    select n.*, array_remove(array[case when n.created_at is distinct from o.created_at then 'createdAt' end,
                         case when n.email_address is distinct from o.email_address then 'emailAddress' end,
                         case when n.external_id is distinct from o.external_id then 'externalId' end,
                         case when n.first_name is distinct from o.first_name then 'firstName' end,
                         case when n.id is distinct from o.id then 'id' end,
                         case when n.last_name is distinct from o.last_name then 'lastName' end], null) as changes
                      from new_rows n join old_rows o on o.id = n.id
                  )
                  insert into events (community_id, type, record_id, member_snapshot, changes, opens)
                    select d.community_id, 'member.updated', d.id, row(d.id, d.external_id, d.first_name, d.last_name, d.email_address, coalesce((
              select json_agg(json_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id)
                from member_field_values v join additional_fields f on f.id = v.field_id
               where v.member_id = d.id), '[]'::json), d.created_at, d.modified_at)::member_snapshot, d.changes,
                           case when row_number() over (partition by d.community_id) = 1 then true end
                      from diff d where cardinality(d.changes) > 0 order by d.id;
                elsif diffed then
                  -- This transaction announced records of this table before (a member created, then
                  -- its values written; a group whose membership count moves; a member whose values
                  -- and name change in one request): an event of the same record made earlier in the
                  -- transaction is brought up to date instead of a second one (its changes joined).
                  with diff as (
                    select n.*, array_remove(array[case when n.created_at is distinct from o.created_at then 'createdAt' end,
                         case when n.email_address is distinct from o.email_address then 'emailAddress' end,
                         case when n.external_id is distinct from o.external_id then 'externalId' end,
                         case when n.first_name is distinct from o.first_name then 'firstName' end,
                         case when n.id is distinct from o.id then 'id' end,
                         case when n.last_name is distinct from o.last_name then 'lastName' end], null) as changes
                      from new_rows n join old_rows o on o.id = n.id
                  ),
                  typed as (select d.*, 'member.updated' as event_type from diff d),
                  merged as (
                    update events e
                       set member_snapshot = row(d.id, d.external_id, d.first_name, d.last_name, d.email_address, coalesce((
              select json_agg(json_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id)
                from member_field_values v join additional_fields f on f.id = v.field_id
               where v.member_id = d.id), '[]'::json), d.created_at, d.modified_at)::member_snapshot,
                           changes = case when e.type = 'member.updated' and d.event_type = 'member.updated' and cardinality(d.changes) > 0
                                          then array(select distinct x from unnest(e.changes || d.changes) x order by 1) else e.changes end
                      from typed d
                     where e.txid = pg_current_xact_id() and e.type in ('member.created', 'member.updated') and e.record_id = d.id
                    returning e.record_id)
                  insert into events (community_id, type, record_id, member_snapshot, changes, opens)
                    select d.community_id, d.event_type, d.id, row(d.id, d.external_id, d.first_name, d.last_name, d.email_address, coalesce((
              select json_agg(json_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id)
                from member_field_values v join additional_fields f on f.id = v.field_id
               where v.member_id = d.id), '[]'::json), d.created_at, d.modified_at)::member_snapshot, d.changes,
                           case when row_number() over (partition by d.community_id) = 1 then true end
                      from typed d
                       where cardinality(d.changes) > 0
                         and (d.event_type <> 'member.updated' or d.id not in (select record_id from merged)) order by d.id;
                end if;
              end if;
              return null;
            end $function$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      alter table group_memberships add constraint group_memberships_community_id_fkey
        foreign key (community_id) references communities (id) on delete cascade;`);
    this.addSql(`
      CREATE OR REPLACE FUNCTION public.events_capture_members()
       RETURNS trigger
       LANGUAGE plpgsql
      AS $function$
            declare
              diffed boolean := true;
            begin
              if TG_OP = 'INSERT' then
                insert into events (community_id, type, record_id, member_snapshot, opens)
                    select n.community_id, 'member.created', n.id, row(n.id, n.external_id, n.first_name, n.last_name, n.email_address, coalesce((
              select json_agg(json_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id)
                from member_field_values v join additional_fields f on f.id = v.field_id
               where v.member_id = n.id), '[]'::json), n.created_at, n.modified_at)::member_snapshot,
                           case when n.id = (select f.id from new_rows f limit 1) or n.community_id <> (select f.community_id from new_rows f limit 1) then true end
                      from new_rows n;
              elsif TG_OP = 'DELETE' then
                insert into events (community_id, type, record_id, data, opens)
                    select o.community_id, 'member.deleted', o.id,
                           json_build_object('id', o.id, 'externalId', o.external_id),
                           case when row_number() over (partition by o.community_id) = 1 then true end
                      from old_rows o order by o.id;
              else
                -- Two statements, not one with a flag: folding the merge below into this one (its
                -- update under "written and ...") made every update of a group 0.15 ms dearer (a
                -- server-side loop of 2,000 single-row updates, 0.58-0.61 against 0.39-0.47 ms).
                if diffed and not events_written('member') then
                  with diff as (
                    select n.*, array_remove(array[case when n.created_at is distinct from o.created_at then 'createdAt' end,
                         case when n.email_address is distinct from o.email_address then 'emailAddress' end,
                         case when n.external_id is distinct from o.external_id then 'externalId' end,
                         case when n.first_name is distinct from o.first_name then 'firstName' end,
                         case when n.id is distinct from o.id then 'id' end,
                         case when n.last_name is distinct from o.last_name then 'lastName' end], null) as changes
                      from new_rows n join old_rows o on o.id = n.id
                  )
                  insert into events (community_id, type, record_id, member_snapshot, changes, opens)
                    select d.community_id, 'member.updated', d.id, row(d.id, d.external_id, d.first_name, d.last_name, d.email_address, coalesce((
              select json_agg(json_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id)
                from member_field_values v join additional_fields f on f.id = v.field_id
               where v.member_id = d.id), '[]'::json), d.created_at, d.modified_at)::member_snapshot, d.changes,
                           case when row_number() over (partition by d.community_id) = 1 then true end
                      from diff d where cardinality(d.changes) > 0 order by d.id;
                elsif diffed then
                  -- This transaction announced records of this table before (a member created, then
                  -- its values written; a group whose membership count moves; a member whose values
                  -- and name change in one request): an event of the same record made earlier in the
                  -- transaction is brought up to date instead of a second one (its changes joined).
                  with diff as (
                    select n.*, array_remove(array[case when n.created_at is distinct from o.created_at then 'createdAt' end,
                         case when n.email_address is distinct from o.email_address then 'emailAddress' end,
                         case when n.external_id is distinct from o.external_id then 'externalId' end,
                         case when n.first_name is distinct from o.first_name then 'firstName' end,
                         case when n.id is distinct from o.id then 'id' end,
                         case when n.last_name is distinct from o.last_name then 'lastName' end], null) as changes
                      from new_rows n join old_rows o on o.id = n.id
                  ),
                  typed as (select d.*, 'member.updated' as event_type from diff d),
                  merged as (
                    update events e
                       set member_snapshot = row(d.id, d.external_id, d.first_name, d.last_name, d.email_address, coalesce((
              select json_agg(json_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id)
                from member_field_values v join additional_fields f on f.id = v.field_id
               where v.member_id = d.id), '[]'::json), d.created_at, d.modified_at)::member_snapshot,
                           changes = case when e.type = 'member.updated' and d.event_type = 'member.updated' and cardinality(d.changes) > 0
                                          then array(select distinct x from unnest(e.changes || d.changes) x order by 1) else e.changes end
                      from typed d
                     where e.txid = pg_current_xact_id() and e.type in ('member.created', 'member.updated') and e.record_id = d.id
                    returning e.record_id)
                  insert into events (community_id, type, record_id, member_snapshot, changes, opens)
                    select d.community_id, d.event_type, d.id, row(d.id, d.external_id, d.first_name, d.last_name, d.email_address, coalesce((
              select json_agg(json_build_object('id', v.field_id, 'value', v.value) order by f.order_number, f.created_at, f.id)
                from member_field_values v join additional_fields f on f.id = v.field_id
               where v.member_id = d.id), '[]'::json), d.created_at, d.modified_at)::member_snapshot, d.changes,
                           case when row_number() over (partition by d.community_id) = 1 then true end
                      from typed d
                       where cardinality(d.changes) > 0
                         and (d.event_type <> 'member.updated' or d.id not in (select record_id from merged)) order by d.id;
                end if;
              end if;
              return null;
            end $function$;`);
  }
}
