import { Migration } from '@mikro-orm/migrations';

/**
 * Search under row-level security (docs/performance.md, "Search"; docs/security.md, "Row-level
 * security"). A policy's qual is checked before any condition that is not LEAKPROOF, and
 * PostgreSQL never makes such a condition an index condition: `ILIKE` (`~~*`), `lower()` and
 * `md5()` are not leakproof, so for the service role every search filter lost its index (a
 * parallel scan of every member: 1.2 s for `q=` at a million members, against 5 ms through the
 * trigram indexes for a role that passes the policies). Only a superuser can mark an operator
 * LEAKPROOF, so the filters' index work runs in these functions instead, with their owner's
 * rights (SECURITY DEFINER, a fixed search_path), which pass the policies.
 *
 * Each function takes the community and checks it itself, exactly as the policies do
 * (`search_allowed`): the community must be the transaction's `app.community_id`, or the
 * caller must be a role that passes row-level security itself (no `set role` in effect and a
 * login with BYPASSRLS or superuser: the owner's own work, and DB_ROW_SECURITY=off). Any other
 * call returns no row. EXECUTE is revoked from PUBLIC; the service role gets it with the other
 * grants at start-up.
 *
 * - `member_search_rows` / `group_search_rows` (`q=`): the matching rows with their version
 *   (xmin), read through the trigram indexes. Rows, not ids: reading 2,500 matches back by
 *   primary key cost three times the search itself. PL/pgSQL with EXECUTE: each call is planned
 *   with its pattern (a generic plan chose the trigram indexes even for a 1-character pattern
 *   that they cannot serve, 2.7 s against a scan).
 * - `member_ids_by_email` (`emailAddress=`): members_community_email_unique.
 * - `member_ids_by_field` (`field.<id>=`): member_field_values_field_value_idx, and
 *   `member_field_value_count` its index entries up to a cap (the walked page's one-time check;
 *   index entries only, so the community is checked on the field, which belongs to one).
 */
export class Migration20261125070000_search_under_row_security extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create function search_allowed(community uuid) returns boolean language sql stable
        set search_path = pg_catalog
        as $$ select community = nullif(current_setting('app.community_id', true), '')::uuid
                  or (current_setting('role') = 'none'
                      and exists (select 1 from pg_roles where rolname = session_user and (rolsuper or rolbypassrls))) $$;

      create function member_search_rows(community uuid, pattern text) returns table (member public.members, version xid)
        language plpgsql stable security definer rows 100 set search_path = pg_catalog, public
        as $$ begin
          if public.search_allowed(community) then
            return query execute 'select m, m.xmin from public.members m where m.community_id = $1 and (m.first_name ilike $2
              or m.last_name ilike $2 or (m.first_name || '' '' || m.last_name) ilike $2 or m.email_address ilike $2 or m.external_id ilike $2)'
              using community, pattern;
          end if;
        end $$;

      create function group_search_rows(community uuid, pattern text) returns table ("group" public.groups, version xid)
        language plpgsql stable security definer rows 100 set search_path = pg_catalog, public
        as $$ begin
          if public.search_allowed(community) then
            return query execute 'select g, g.xmin from public.groups g where g.community_id = $1 and (g.name ilike $2 or g.external_id ilike $2)'
              using community, pattern;
          end if;
        end $$;

      create function member_ids_by_email(community uuid, address text) returns setof uuid
        language sql stable security definer rows 1 set search_path = pg_catalog, public
        as $$ select m.id from public.members m
               where m.community_id = community and lower(m.email_address) = lower(address) and public.search_allowed(community) $$;

      create function member_ids_by_field(community uuid, field uuid, val text) returns setof uuid
        language sql stable security definer rows 100 set search_path = pg_catalog, public
        as $$ select v.member_id from public.member_field_values v
               where v.field_id = field and md5(v.value) = md5(val) and v.value = val and v.community_id = community
                 and public.search_allowed(community) $$;

      create function member_field_value_count(community uuid, field uuid, val text, cap integer) returns bigint
        language sql stable security definer set search_path = pg_catalog, public
        as $$ select count(*) from (select 1 from public.member_field_values v
               where v.field_id = field and md5(v.value) = md5(val) limit cap) x
               where public.search_allowed(community)
                 and exists (select 1 from public.additional_fields f where f.id = field and f.community_id = community) $$;

      revoke execute on function search_allowed(uuid), member_search_rows(uuid, text), group_search_rows(uuid, text),
        member_ids_by_email(uuid, text), member_ids_by_field(uuid, uuid, text), member_field_value_count(uuid, uuid, text, integer) from public;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      drop function member_field_value_count(uuid, uuid, text, integer);
      drop function member_ids_by_field(uuid, uuid, text);
      drop function member_ids_by_email(uuid, text);
      drop function group_search_rows(uuid, text);
      drop function member_search_rows(uuid, text);
      drop function search_allowed(uuid);`);
  }
}
