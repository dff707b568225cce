import { Migration } from '@mikro-orm/migrations';

/**
 * The text search functions of Migration20261125070000 return the table's own rows
 * (`setof members` / `setof groups`) instead of `(row, xmin)` pairs: the page read each column
 * out of the composite (a quarter of a 2,500-match search at a million members), and now sorts
 * the rows as they come and reads its page's rows (the version with them) back from the table
 * by primary key, under the policy (docs/performance.md, "Search"). Same arguments, same checks.
 */
export class Migration20261125090000_search_rows extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      drop function member_search_rows(uuid, text);
      create function member_search_rows(community uuid, pattern text) returns setof public.members
        language plpgsql stable security definer rows 100 set search_path = pg_catalog, public
        as $$ begin
          if public.search_allowed(community) then
            return query execute 'select m.* from public.members m where m.community_id = $1 and (m.first_name ilike $2
              or m.last_name ilike $2 or (m.first_name || '' '' || m.last_name) ilike $2 or m.email_address ilike $2 or m.external_id ilike $2)'
              using community, pattern;
          end if;
        end $$;
      drop function group_search_rows(uuid, text);
      create function group_search_rows(community uuid, pattern text) returns setof public.groups
        language plpgsql stable security definer rows 100 set search_path = pg_catalog, public
        as $$ begin
          if public.search_allowed(community) then
            return query execute 'select g.* from public.groups g where g.community_id = $1 and (g.name ilike $2 or g.external_id ilike $2)'
              using community, pattern;
          end if;
        end $$;
      revoke execute on function member_search_rows(uuid, text), group_search_rows(uuid, text) from public;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      drop function member_search_rows(uuid, text);
      create function member_search_rows(community uuid, pattern text) returns table (member public.members, version xid)
        language plpgsql stable security definer rows 100 set search_path = pg_catalog, public
        as $$ begin
          if public.search_allowed(community) then
            return query execute 'select m, m.xmin from public.members m where m.community_id = $1 and (m.first_name ilike $2
              or m.last_name ilike $2 or (m.first_name || '' '' || m.last_name) ilike $2 or m.email_address ilike $2 or m.external_id ilike $2)'
              using community, pattern;
          end if;
        end $$;
      drop function group_search_rows(uuid, text);
      create function group_search_rows(community uuid, pattern text) returns table ("group" public.groups, version xid)
        language plpgsql stable security definer rows 100 set search_path = pg_catalog, public
        as $$ begin
          if public.search_allowed(community) then
            return query execute 'select g, g.xmin from public.groups g where g.community_id = $1 and (g.name ilike $2 or g.external_id ilike $2)'
              using community, pattern;
          end if;
        end $$;
      revoke execute on function member_search_rows(uuid, text), group_search_rows(uuid, text) from public;`);
  }
}
