import { Migration } from '@mikro-orm/migrations';

/**
 * Migration20261128020000 sent a fallback text of one or two characters through EXECUTE and kept
 * the written statement (planned once for any pattern after five calls) for a longer one. It
 * judged "one or two characters" by the length of the escaped pattern: `q=%%` is `%\%\%%`,
 * six characters, so it took the written statement, and from the sixth call on a connection its
 * generic plan scanned the whole trigram index for a text the index cannot serve. Counting the
 * text's own characters would need to know the escaping here; the fallback now always goes
 * through EXECUTE, planned with its pattern at every call. The planning costs nothing measurable
 * (pgbench at a million members: `ritz` and `4711` the same either way), and the function keeps
 * one copy of the statement.
 */
export class Migration20261128030000_member_search_fallback_planned extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create or replace function member_search_first(community uuid, pattern text, n int) returns setof public.members
        language plpgsql stable security definer rows 20 set search_path = pg_catalog, public
        as $$
        declare
          p constant text := lower(pattern);
          probe constant int := 1000;
          longest constant int := 30000;
          walk bigint;
          ids uuid[];
          more uuid[];
          hits int;
          after_at timestamptz;
          after_id uuid;
        begin
          -- search_allowed is null, not false, without a community set: \`is not true\`, never \`not\`.
          if public.search_allowed(community) is not true then return; end if;
          if strpos(pattern, ' ') > 0 then
            return query execute 'select m.* from public.members m where m.community_id = $1 and m.search_text like lower($2)
              and (m.first_name ilike $2 or m.last_name ilike $2 or (m.first_name || '' '' || m.last_name) ilike $2 or m.email_address ilike $2 or m.external_id ilike $2)
              order by m.created_at, m.id limit $3'
              using community, pattern, n;
            return;
          end if;
          select array_agg(k.id order by k.created_at, k.id) into ids from (
            select w.id, w.created_at from (select m.id, m.created_at, m.search_text from public.members m where m.community_id = community
              order by m.created_at, m.id limit probe) w where w.search_text like p order by w.created_at, w.id limit n) k;
          hits := coalesce(cardinality(ids), 0);
          if hits < n then
            select m.created_at, m.id into after_at, after_id from public.members m where m.community_id = community
              order by m.created_at, m.id offset probe - 1 limit 1;
            if found then
              walk := case when hits = 0 then longest + 1 else 2::bigint * n * probe / hits end;
              if walk <= longest then
                select array_agg(k.id order by k.created_at, k.id) into more from (
                  select w.id, w.created_at from (select m.id, m.created_at, m.search_text from public.members m where m.community_id = community
                    and (m.created_at, m.id) > (after_at, after_id) order by m.created_at, m.id limit walk) w
                   where w.search_text like p order by w.created_at, w.id limit n - hits) k;
                ids := ids || more;
              end if;
              if coalesce(cardinality(ids), 0) < n then
                return query execute 'with hit as materialized (select m.id, m.created_at from public.members m where m.community_id = $1 and m.search_text like $2)
                  select m.* from (select h.id, h.created_at from hit h order by h.created_at, h.id limit $3) k
                    join public.members m on m.community_id = $1 and m.id = k.id order by k.created_at, k.id'
                  using community, p, n;
                return;
              end if;
            end if;
          end if;
          return query select m.* from unnest(ids) with ordinality u(id, i)
            join public.members m on m.community_id = community and m.id = u.id order by u.i;
        end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      create or replace function member_search_first(community uuid, pattern text, n int) returns setof public.members
        language plpgsql stable security definer rows 20 set search_path = pg_catalog, public
        as $$
        declare
          p constant text := lower(pattern);
          probe constant int := 1000;
          longest constant int := 30000;
          walk bigint;
          ids uuid[];
          more uuid[];
          hits int;
          after_at timestamptz;
          after_id uuid;
        begin
          -- search_allowed is null, not false, without a community set: \`is not true\`, never \`not\`.
          if public.search_allowed(community) is not true then return; end if;
          if strpos(pattern, ' ') > 0 then
            return query execute 'select m.* from public.members m where m.community_id = $1 and m.search_text like lower($2)
              and (m.first_name ilike $2 or m.last_name ilike $2 or (m.first_name || '' '' || m.last_name) ilike $2 or m.email_address ilike $2 or m.external_id ilike $2)
              order by m.created_at, m.id limit $3'
              using community, pattern, n;
            return;
          end if;
          select array_agg(k.id order by k.created_at, k.id) into ids from (
            select w.id, w.created_at from (select m.id, m.created_at, m.search_text from public.members m where m.community_id = community
              order by m.created_at, m.id limit probe) w where w.search_text like p order by w.created_at, w.id limit n) k;
          hits := coalesce(cardinality(ids), 0);
          if hits < n then
            select m.created_at, m.id into after_at, after_id from public.members m where m.community_id = community
              order by m.created_at, m.id offset probe - 1 limit 1;
            if found then
              walk := case when hits = 0 then longest + 1 else 2::bigint * n * probe / hits end;
              if walk <= longest then
                select array_agg(k.id order by k.created_at, k.id) into more from (
                  select w.id, w.created_at from (select m.id, m.created_at, m.search_text from public.members m where m.community_id = community
                    and (m.created_at, m.id) > (after_at, after_id) order by m.created_at, m.id limit walk) w
                   where w.search_text like p order by w.created_at, w.id limit n - hits) k;
                ids := ids || more;
              end if;
              if coalesce(cardinality(ids), 0) < n then
                if char_length(p) >= 5 then
                  -- A trigram in the text: the index serves it, the plan is the same for any such pattern.
                  return query
                    with hit as materialized (select m.id, m.created_at from public.members m where m.community_id = community and m.search_text like p)
                    select m.* from (select h.id, h.created_at from hit h order by h.created_at, h.id limit n) k
                      join public.members m on m.community_id = community and m.id = k.id order by k.created_at, k.id;
                else
                  return query execute 'with hit as materialized (select m.id, m.created_at from public.members m where m.community_id = $1 and m.search_text like $2)
                    select m.* from (select h.id, h.created_at from hit h order by h.created_at, h.id limit $3) k
                      join public.members m on m.community_id = $1 and m.id = k.id order by k.created_at, k.id'
                    using community, p, n;
                end if;
                return;
              end if;
            end if;
          end if;
          return query select m.* from unnest(ids) with ordinality u(id, i)
            join public.members m on m.community_id = community and m.id = u.id order by u.i;
        end $$;`);
  }
}
