import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from 'pg';
import type { MikroORM } from '@mikro-orm/postgresql';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { openOrm } from '../../../src/db/orm';
import { pageStatement, TEXT_WALK_ROWS, type LeanFilter } from '../../../src/db/lean';
import { pageWindow } from '../../../src/common/pagination';
import { Member } from '../../../src/modules/members/member.entity';
import { Group } from '../../../src/modules/groups/group.entity';
import { memberFilters } from '../../../src/modules/members/member.service';
import { EMAIL_HOLDERS, TAKEN_IDENTITIES } from '../../../src/modules/members/member.checks';
import { arrayOf } from '../../../src/db/sql';
import { groupFilters } from '../../../src/modules/groups/group.service';
import { testDatabaseUrl } from '../../helpers/database';
import { asServiceRole, rowsRead } from '../../helpers/service-role';

/**
 * Under row-level security a condition that is not LEAKPROOF (ILIKE, lower(), md5() of a
 * column) is checked after the policy and never reaches an index: every search read each row
 * of the community (Migration20261125070000). Here the page statements the service builds run
 * as the service role, and the rows they read are counted (pg_stat_xact_user_tables: this
 * transaction's own reads, the search functions' included).
 */
/** Enough rows that PostgreSQL prefers an index to reading the community's rows whole. */
const MEMBERS = 20_000;
const RARE = 'Zyxwvu';

let app: TestApp;
let a: Tenant;
let b: Tenant;
let owner: Client;
let orm: MikroORM;
const fields: Record<string, string> = {};
const tiers: Record<string, string> = {};

/** An additional field of `t` whose value for each member (ext-<n>) is `value` (SQL of `n`). */
async function fieldWithValues(t: Tenant, name: string, order: number, value: string): Promise<string> {
  const { rows } = await owner.query<{ id: string }>(
    `insert into additional_fields (id, community_id, name, type, order_number, created_at, modified_at)
     values (gen_random_uuid(), $1, $2, 'TEXT', $3, now(), now()) returning id`,
    [t.communityId, name, order],
  );
  await owner.query(
    `insert into member_field_values (community_id, member_id, field_id, value, member_created_at)
     select m.community_id, m.id, $2, ${value}, m.created_at
       from (select m.*, substr(m.external_id, 5)::int as n from members m where m.community_id = $1) m`,
    [t.communityId, rows[0].id],
  );
  return rows[0].id;
}

async function seed(t: Tenant) {
  await owner.query(
    `insert into members (id, community_id, external_id, first_name, last_name, email_address, created_at, modified_at)
     select gen_random_uuid(), $1, 'ext-' || i, 'Name' || i, case when i = 1234 then $2 else 'Last' || i end, 'user' || i || '@example.org',
            now() + i * interval '1 ms', now() + i * interval '1 ms'
       from generate_series(1, ${MEMBERS}) i`,
    [t.communityId, RARE],
  );
  fields[t.communityId] = await fieldWithValues(t, 'City', 1, `'City ' || (n % 5000)`);
  // "Gold" for 1% of the members (every 100th), "Basic" for the rest.
  tiers[t.communityId] = await fieldWithValues(t, 'Tier', 2, `case when n % 100 = 0 then 'Gold' else 'Basic' end`);
  await owner.query(
    `insert into groups (id, community_id, name, created_at, modified_at)
     select gen_random_uuid(), $1, case when i = 77 then $2 || ' Club' else 'Group ' || i end, now() + i * interval '1 ms', now() + i * interval '1 ms'
       from generate_series(1, ${MEMBERS}) i`,
    [t.communityId, RARE],
  );
}

beforeAll(async () => {
  app = await startTestApp();
  a = await app.tenant();
  b = await app.tenant();
  owner = new Client({ connectionString: testDatabaseUrl() });
  await owner.connect();
  for (const t of [a, b]) await seed(t);
  // What autovacuum does soon after a mass insert: statistics, and the GIN indexes' pending
  // lists merged (until then PostgreSQL prices a trigram search as reading every pending row).
  // And the visibility map, which lets the q= walk read its index alone (index-only).
  for (const table of ['members', 'member_field_values', 'groups']) await owner.query(`vacuum analyze ${table}`);
  await owner.query(`select gin_clean_pending_list(i.indexrelid) from pg_index i join pg_class c on c.oid = i.indexrelid
    join pg_am am on am.oid = c.relam where am.amname = 'gin' and i.indrelid in ('members'::regclass, 'groups'::regclass)`);
  orm = (await openOrm(testDatabaseUrl(), 1, false)) as MikroORM;
}, 60_000);
afterAll(async () => {
  await orm?.close();
  await owner?.end();
  await app?.close();
});

/** Runs `work` as the service role with `community` set (or none), then rolls back. */
const asService = <T>(community: string | null, work: () => Promise<T>): Promise<T> => asServiceRole(owner, community, work);

/** The page's rows, and the rows its statement read from each table (as the service role). */
async function page(entity: typeof Member | typeof Group, filters: LeanFilter[]) {
  const { sql, params } = pageStatement(orm.em.fork(), entity as never, { communityId: a.communityId }, pageWindow({ limit: 20 }), undefined, filters);
  return statement(sql, params);
}

/** A statement's rows (`?` placeholders) and the rows it read from each table, as the service role of community a. */
async function statement(sql: string, params: unknown[]) {
  return asService(a.communityId, async () => {
    // A small table: ask for the plan an indexed one gets (a policy-blocked index stays blocked).
    await owner.query('set local enable_seqscan = off');
    let n = 0;
    const { result: rows, read } = await rowsRead(owner, ['members', 'member_field_values', 'groups'], async () =>
      (await owner.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows as { id: string; lastName?: string; name?: string; [column: string]: unknown }[],
    );
    return { rows, read };
  });
}

describe('search under row-level security reaches its indexes', () => {
  it(`q=: the first 1,000 in page order from an index (the walk), then a few rows read of ${MEMBERS} members`, async () => {
    const { rows, read } = await page(Member, memberFilters(a.communityId, { q: RARE.toLowerCase() }).filters);
    expect(rows.map((r) => r.lastName)).toEqual([RARE]);
    // The walk reads members_community_created_text_idx alone (the text is in it): a row read
    // per member walked would be 1,000. A page that other tests' inserts made not all-visible
    // costs its rows.
    expect(read.members).toBeLessThan(200);
  });

  it('q= alone in the default order: the search function sorts its matches and hands over only the page', async () => {
    // "name19": Name19, Name190-199, Name1900-1999, Name19000-19999 (1,111 members); the walk's first rows hold 11.
    const filters = memberFilters(a.communityId, { q: 'NAME19' }).filters;
    const { rows } = await page(Member, filters);
    const expected = [19, ...Array.from({ length: 10 }, (_, i) => 190 + i), ...Array.from({ length: 10 }, (_, i) => 1900 + i)].map((i) => `ext-${i}`);
    expect(rows.map((r) => (r as { externalId?: string }).externalId)).toEqual(expected);
    const statement = (window: Parameters<typeof pageWindow>[0], f: LeanFilter[]) =>
      pageStatement(orm.em.fork(), Member as never, { communityId: a.communityId }, pageWindow(window), undefined, f).sql;
    expect(statement({ limit: 20 }, filters)).toContain('member_search_first(');
    // Any other order, or another condition on the rows: every match, from member_search_rows.
    expect(statement({ limit: 20, sort: [{ field: 'lastName' }] } as never, filters)).not.toContain('member_search_first(');
    expect(statement({ limit: 20, modifiedSince: new Date(0) } as never, filters)).not.toContain('member_search_first(');
    const combined = memberFilters(a.communityId, { q: 'NAME19', fields: [{ id: tiers[a.communityId], value: 'Gold' }] }).filters;
    expect(statement({ limit: 20 }, combined)).not.toContain('member_search_first(');
  });

  it('q= alone: member_search_first gives the first matches in page order, however it finds them', async () => {
    const cases: [string, number][] = [
      ['name1', 21], // 1,111 hold it, 111 of them among the first 1,000: the first 1,000 fill the page
      ['25@ex', 21], // 1%: 10 among the first 1,000, the walk goes on from there and fills the page
      ['25@ex', 200], // the same, a page too deep for the walk: through the trigram index
      ['name99', 21], // 11 among the first 1,000, the next at 9,900: the walk comes up short, then the index
      [RARE.toLowerCase(), 21], // none among the first 1,000: through the trigram index
      ['no such text', 21], // a space: the former statement, each column tested
      ['name1234 zyx', 21],
    ];
    const got = await asService(a.communityId, async () => {
      const out: { first: string[]; all: string[] }[] = [];
      for (const [text, n] of cases) {
        const first = await owner.query<{ id: string }>('select id from member_search_first($1, $2, $3)', [a.communityId, `%${text}%`, n]);
        const all = await owner.query<{ id: string }>(
          `select r.id from member_search_rows($1, $2) r order by r.created_at, r.id limit $3`,
          [a.communityId, `%${text}%`, n],
        );
        out.push({ first: first.rows.map((r) => r.id), all: all.rows.map((r) => r.id) });
      }
      return out;
    });
    expect(got.map((g) => g.first.length)).toEqual([21, 21, 200, 21, 1, 0, 1]);
    for (const [i, g] of got.entries()) expect(g.first, cases[i][0]).toEqual(g.all);
  });

  // `%\%\%%` is q=%% escaped: two characters of text in a pattern of six (Migration20261128030000).
  it.each(['%zq%', '%\\%\\%%'])('q= of two characters the walk does not fill (%s): planned for its pattern at every call, never through the trigram index', async (pattern) => {
    // PL/pgSQL plans a written statement once for any pattern after five calls; for a text the
    // trigram index cannot serve that plan read the whole index (Migration20261128020000).
    const trigramScans = async () =>
      Number((await owner.query<{ n: string }>(`select pg_stat_get_xact_numscans('members_search_lower_idx'::regclass) as n`)).rows[0].n);
    const scans = await asService(a.communityId, async () => {
      const out: number[] = [];
      for (let i = 0; i < 8; i++) {
        const before = await trigramScans();
        const { rows } = await owner.query('select id from member_search_first($1, $2, 21)', [a.communityId, pattern]);
        expect(rows).toEqual([]);
        out.push((await trigramScans()) - before);
      }
      return out;
    });
    expect(scans).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('emailAddress=: one row read', async () => {
    const { rows, read } = await page(Member, memberFilters(a.communityId, { emailAddress: 'USER1234@example.org' }).filters);
    expect(rows.map((r) => r.lastName)).toEqual([RARE]);
    expect(read.members).toBeLessThan(10);
  });

  it('field.<id>=: the matching values and members only (a stored digest, compared with a leakproof =)', async () => {
    const { rows, read } = await page(Member, memberFilters(a.communityId, { fields: [{ id: fields[a.communityId], value: 'City 1234' }] }).filters);
    expect(rows).toHaveLength(4); // 1234, 6234, 11234, 16234
    expect(read.member_field_values).toBeLessThan(50);
    expect(read.members).toBeLessThan(50);
  });

  it('field.<id>= with a value 1% hold, in the default order: the page\'s rows only, read in order from the index', async () => {
    const { rows, read } = await page(Member, memberFilters(a.communityId, { fields: [{ id: tiers[a.communityId], value: 'Gold' }] }).filters);
    expect(rows.map((r) => (r as { externalId?: string }).externalId)).toEqual(Array.from({ length: rows.length }, (_, i) => `ext-${100 * (i + 1)}`));
    expect(rows.length).toBeGreaterThan(10);
    // From the index: the page's members, and at most the 200 matching values (with so few,
    // PostgreSQL may read them all and sort them; at a million members it reads the page's 21)
    // plus each page row's own value, checked. The walk in page order read a member per 100.
    expect(read.members).toBeLessThan(50);
    expect(read.member_field_values).toBeLessThanOrEqual(200 + 21);
  });

  it('an address and a text that every member holds: the address finds the row, the text tests it', async () => {
    const { rows, read } = await page(Member, memberFilters(a.communityId, { emailAddress: 'user1234@example.org', q: 'user' }).filters);
    expect(rows.map((r) => r.lastName)).toEqual([RARE]);
    expect(read.members).toBeLessThan(10);
  });

  it(`groups q=: the walk, then a few rows read of ${MEMBERS}`, async () => {
    const { rows, read } = await page(Group, groupFilters(a.communityId, { q: RARE.toUpperCase() }));
    expect(rows.map((r) => r.name)).toEqual([`${RARE} Club`]);
    expect(read.groups).toBeLessThan(TEXT_WALK_ROWS + 50);
  });
});

describe("a create's and an import batch's address checks reach members_community_email_unique", () => {
  it('an import batch: 1,000 addresses, half of them held, read as the holders alone', async () => {
    const addresses = Array.from({ length: 1000 }, (_, i) => (i % 2 ? `nobody${i}@example.org` : `user${i + 1}@example.org`));
    const { rows, read } = await statement(EMAIL_HOLDERS, [a.communityId, arrayOf(addresses)]);
    expect(rows).toHaveLength(500);
    expect(rows.find((r) => r.email === 'user1@example.org')?.external_id).toBe('ext-1');
    expect(read.members).toBeLessThanOrEqual(500);
  });

  it("a create's externalId and address: the two holders alone", async () => {
    const { rows, read } = await statement(TAKEN_IDENTITIES, [a.communityId, arrayOf(['ext-7']), a.communityId, arrayOf(['user9@example.org'])]);
    expect(rows).toEqual([{ externalId: 'ext-7', email: 'user7@example.org' }, { externalId: 'ext-9', email: 'user9@example.org' }]);
    expect(read.members).toBeLessThan(10);
  });

  it(`the statement these replaced read all ${MEMBERS} members of the community (lower() is not leakproof)`, async () => {
    const { rows, read } = await statement('select external_id from members where community_id = ? and lower(email_address) = any(?::text[])', [a.communityId, arrayOf(['user9@example.org'])]);
    expect(rows).toHaveLength(1);
    expect(read.members).toBeGreaterThanOrEqual(MEMBERS);
  });
});

describe('the search functions hold to the community as the policies do', () => {
  const calls = (c: string) => [
    [`select count(*)::int as n from member_search_rows($1, '%${RARE}%')`, [c]],
    [`select count(*)::int as n from member_search_first($1, '%${RARE}%', 21)`, [c]],
    [`select count(*)::int as n from group_search_rows($1, '%${RARE}%')`, [c]],
    [`select count(*)::int as n from member_ids_by_email($1, 'user1234@example.org')`, [c]],
    [`select count(*)::int as n from member_email_holders($1, '{user1234@example.org}')`, [c]],
  ] as const;
  const counts = async (c: string) => {
    const out: number[] = [];
    for (const [sql, params] of calls(c)) out.push((await owner.query<{ n: number }>(sql, [...params])).rows[0].n);
    return out;
  };

  it("its own community's matches; another community's or none: nothing", async () => {
    expect(await asService(a.communityId, () => counts(a.communityId))).toEqual([1, 1, 1, 1, 1]);
    expect(await asService(a.communityId, () => counts(b.communityId))).toEqual([0, 0, 0, 0, 0]);
    expect(await asService(null, () => counts(a.communityId))).toEqual([0, 0, 0, 0, 0]);
  });

  it("the owner's own work (no role switched, a role that passes row-level security) finds any community's", async () => {
    expect(await counts(b.communityId)).toEqual([1, 1, 1, 1, 1]);
  });

  it('PUBLIC cannot execute them', async () => {
    const { rows } = await owner.query<{ proname: string; acl: string }>(
      `select proname, proacl::text as acl from pg_proc where proname = any($1)`,
      [['search_allowed', 'member_search_rows', 'member_search_first', 'group_search_rows', 'member_ids_by_email', 'member_email_holders']],
    );
    expect(rows).toHaveLength(6);
    for (const r of rows) expect(r.acl, r.proname).not.toMatch(/(^|[{,])=X/);
  });
});
