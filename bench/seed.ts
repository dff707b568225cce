import { Client } from 'pg';

/** The bench's community: sizes are fixed so runs compare. */
export const SIZES = { groups: 1000, members: 10_000, memberships: 50_000, bigGroup: 10_000, fields: 20 };

export interface Seeded {
  communityId: string;
  /** The group holding every member (10,000 memberships). */
  bigGroupId: string;
  /** An ordinary group (about 40 memberships), for get-by-id and get-by-externalId. */
  groupId: string;
  groupExternalId: string;
  /** Member ids in creation order, for bulk bodies. */
  memberIds: string[];
  seconds: number;
}

/**
 * Set-based seed: one INSERT ... SELECT per table, so 10,000 members and 50,000
 * memberships take seconds. The big group is g0001 (every member, order 1..10,000);
 * the other 40,000 memberships are spread over g0002..g1000, member i % 10,000 of
 * membership i (unique per group because gcd(999, 10,000) = 1). Creation times are
 * spread over the past so default (createdAt) ordering is realistic.
 */
export async function seed(url: string): Promise<Seeded> {
  const started = Date.now();
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    await db.query('begin');
    const { rows: [c] } = await db.query<{ id: string }>(
      `insert into communities (id, name, created_at) values (gen_random_uuid(), 'Bench community', now()) returning id`,
    );
    const cid = c.id;
    await db.query(
      `insert into groups (id, community_id, external_id, name, about, color, is_visible_in_app, created_at, modified_at)
       select gen_random_uuid(), $1, 'g' || lpad(n::text, 4, '0'), 'Group ' || n, 'About group ' || n || ': ' || repeat('lorem ipsum ', 8),
              '#' || lpad(to_hex((n::bigint * 2654435) % 16777216), 6, '0'), n % 7 <> 0,
              now() - make_interval(secs => ($2 - n) * 60), now() - make_interval(secs => ($2 - n) * 30)
         from generate_series(1, $2) n`,
      [cid, SIZES.groups],
    );
    await db.query(
      `insert into members (id, community_id, external_id, first_name, last_name, email_address, created_at, modified_at)
       select gen_random_uuid(), $1, 'm' || lpad(n::text, 5, '0'), 'First' || n, 'Last' || n, 'member' || n || '@example.org',
              now() - make_interval(secs => ($2 - n) * 10), now() - make_interval(secs => ($2 - n) * 5)
         from generate_series(1, $2) n`,
      [cid, SIZES.members],
    );
    await db.query(
      `insert into additional_fields (id, community_id, name, placeholder, type, icon_style, icon_unicode, order_number, created_at, modified_at)
       select gen_random_uuid(), $1, 'Field ' || n, 'Enter field ' || n, 'TEXT', 'REGULAR', 'f' || lpad(n::text, 3, '0'), n,
              now() - make_interval(secs => 100 - n), now() - make_interval(secs => 100 - n)
         from generate_series(1, $2) n`,
      [cid, SIZES.fields],
    );
    // Every member has a value for every field: 200,000 rows.
    await db.query(
      `insert into member_field_values (community_id, member_id, field_id, value, member_created_at)
       select m.community_id, m.id, f.id, 'value ' || f.order_number || ' of ' || m.external_id, m.created_at
         from members m cross join additional_fields f where m.community_id = $1 and f.community_id = $1`,
      [cid],
    );
    // Numbered views of groups and members, so memberships can address them by position.
    const numbered = `
      with g as (select id, row_number() over (order by external_id) as n from groups where community_id = $1),
           m as (select id, row_number() over (order by external_id) - 1 as n from members where community_id = $1)`;
    await db.query(
      `${numbered}
       insert into group_memberships (id, community_id, group_id, member_id, external_id, title, role, order_number, created_at, modified_at)
       select gen_random_uuid(), $1, g.id, m.id, 'gm' || m.n, 'Title ' || m.n, case when m.n < 5 then 'ADMIN' else 'MEMBER' end,
              m.n + 1, now() - make_interval(secs => 20000 - m.n), now() - make_interval(secs => 20000 - m.n)
         from g join m on g.n = 1`,
      [cid],
    );
    const rest = SIZES.memberships - SIZES.bigGroup;
    await db.query(
      `${numbered}
       insert into group_memberships (id, community_id, group_id, member_id, external_id, title, role, order_number, created_at, modified_at)
       select gen_random_uuid(), $1, g.id, m.id, 'gm' || i, null, 'MEMBER', i / ($3 - 1) + 1,
              now() - make_interval(secs => $2 - i), now() - make_interval(secs => $2 - i)
         from generate_series(0, $2 - 1) i
         join g on g.n = 2 + i % ($3 - 1)
         join m on m.n = i % $4`,
      [cid, rest, SIZES.groups, SIZES.members],
    );
    await db.query('commit');
    await db.query('vacuum analyze');
    const big = await db.query<{ id: string }>(`select id from groups where community_id = $1 and external_id = 'g0001'`, [cid]);
    const one = await db.query<{ id: string; external_id: string }>(
      `select id, external_id from groups where community_id = $1 and external_id = 'g0500'`,
      [cid],
    );
    const members = await db.query<{ id: string }>(`select id from members where community_id = $1 order by external_id`, [cid]);
    const counts = await db.query<{ n: string }>(`select count(*) as n from group_memberships where community_id = $1`, [cid]);
    if (Number(counts.rows[0].n) !== SIZES.memberships) throw new Error(`seed: ${counts.rows[0].n} memberships, expected ${SIZES.memberships}`);
    return {
      communityId: cid,
      bigGroupId: big.rows[0].id,
      groupId: one.rows[0].id,
      groupExternalId: one.rows[0].external_id,
      memberIds: members.rows.map((r) => r.id),
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await db.end();
  }
}
