import { Migration } from '@mikro-orm/migrations';

/**
 * `q` alone on the default page (docs/performance.md, "Search"): `member_search_first` walks the
 * members in page order through an index that holds the searched text, before it falls back to
 * the trigram index.
 *
 * - `members_community_created_text_idx`: the page order's index (community, createdAt, id)
 *   with `search_text` included, so testing a member in page order is an index-only read (about
 *   0.2 us a member at a million, against about 0.4 us reading the row) and never reads the
 *   table. It replaces `members_community_created_idx`, which had the same keys: one index for
 *   writes to keep, not two.
 * - `member_search_first`: the trigram index finds every match, and the table is then read for
 *   each one to sort them (about 1.3 ms for the posting lists and 0.7 us a match at a million:
 *   3.5 ms for a text 2,500 members hold). A walk in page order costs what the page needs:
 *   about 0.2 us for each member tested until the page's last match. The function tests the
 *   first 1,000 members (0.2 ms); a text that fills the page from them is done. Otherwise their
 *   matches estimate how far the walk must go for the rest of the page, and when twice that
 *   is at most 30,000 members it walks on from the 1,000th; a text rarer than that (or a walk
 *   that came up short) is found through the trigram index as before. The choice is made on
 *   what the walk saw, not on PostgreSQL's estimate of a trigram match, which is a fixed guess
 *   that flipped between the two plans with each ANALYZE. A community of at most 1,000 members
 *   is walked whole and never searched through the index (whose matches are every community's).
 *   A pattern with a space keeps its former statement: each column is tested, which the index
 *   alone cannot do.
 */
export class Migration20261128010000_member_search_walk extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index members_community_created_text_idx on members (community_id, created_at, id) include (search_text);
      drop index members_community_created_idx;
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
                return query
                  with hit as materialized (select m.id, m.created_at from public.members m where m.community_id = community and m.search_text like p)
                  select m.* from (select h.id, h.created_at from hit h order by h.created_at, h.id limit n) k
                    join public.members m on m.community_id = community and m.id = k.id order by k.created_at, k.id;
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
        as $$ begin
          if public.search_allowed(community) then
            if strpos(pattern, ' ') = 0 then
              return query execute 'select m.* from public.members m where m.community_id = $1 and m.search_text like lower($2)
                order by m.created_at, m.id limit $3'
                using community, pattern, n;
            else
              return query execute 'select m.* from public.members m where m.community_id = $1 and m.search_text like lower($2)
                and (m.first_name ilike $2 or m.last_name ilike $2 or (m.first_name || '' '' || m.last_name) ilike $2 or m.email_address ilike $2 or m.external_id ilike $2)
                order by m.created_at, m.id limit $3'
                using community, pattern, n;
            end if;
          end if;
        end $$;
      create index members_community_created_idx on members (community_id, created_at, id);
      drop index members_community_created_text_idx;`);
  }
}
