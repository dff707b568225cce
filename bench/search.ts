import fs from 'node:fs';
import { Client } from 'pg';
import { pageWindow } from '../src/common/pagination';
import { pageStatement } from '../src/db/lean';
import { openOrm } from '../src/db/orm';
import { Member } from '../src/modules/members/member.entity';
import type { MemberFilter } from '../src/modules/members/member.inputs';
import { memberFilters } from '../src/modules/members/member.service';
import { SERVICE_ROLE } from '../src/db/tenancy';

/**
 * The search section of the bench (docs/performance.md, "Search"): a community of a million
 * members with two additional fields filled, seeded set-based in SQL; the p50 of each filter
 * against the p50 of the first page of members on the same data, one request at a time; and
 * the EXPLAIN of each filter's page statement, built by the service's own code.
 */

export const SEARCH_COMMUNITY = '00000000-0000-4000-8000-0000000000a1';
const NEIGHBOUR = '00000000-0000-4000-8000-0000000000b2';
const CITY = '00000000-0000-4000-8000-0000000000c1';
const DEPARTMENT = '00000000-0000-4000-8000-0000000000c2';

/**
 * Set-based (generate_series): one statement per table. Event capture is off meanwhile: these
 * rows are not changes any subscriber should see (and a million events would only slow the seed).
 * Names: 100 first names; last names of three syllables (8,000 of them, ~125 members each);
 * City holds 100 values (1% of the members each), Department 20. The neighbour community has
 * the same people (names, addresses, externalIds) for its first 10,000.
 */
function seedSql(members: number): string {
  return `
  alter table members disable trigger user;
  alter table member_field_values disable trigger user;
  insert into communities (id, name, created_at) values
    ('${SEARCH_COMMUNITY}', 'search bench', now()), ('${NEIGHBOUR}', 'search bench neighbour', now());
  insert into additional_fields (id, community_id, name, type, order_number, created_at, modified_at) values
    ('${CITY}', '${SEARCH_COMMUNITY}', 'City', 'TEXT', 1, now(), now()),
    ('${DEPARTMENT}', '${SEARCH_COMMUNITY}', 'Department', 'TEXT', 2, now(), now());
  insert into members (id, community_id, external_id, first_name, last_name, email_address, created_at, modified_at)
  select md5('m' || i)::uuid, '${SEARCH_COMMUNITY}', 'm-' || i,
         (array['Ada','Alan','Grace','Linus','Edsger','Barbara','Donald','Margaret','Ken','Dennis'])[1 + i % 10]
           || (array['','a','e','o','i','ie','y','us','ine','an'])[1 + (i / 10) % 10],
         initcap((array['ber','lin','ham','ton','mar','kov','sch','neu','wal','dor','fel','gru','hei','kra','lan','mei','ost','pet','ros','sto'])[1 + (i * 7) % 20]
           || (array['ri','wa','do','ke','ma','su','ti','le','no','ba','pe','gi','fo','cu','ja','vi','ze','ha','lo','me'])[1 + (i * 13 / 20) % 20]
           || (array['nn','rt','ck','ld','st','nd','rg','ff','tz','ll','ss','mm','pp','rn','gh','th','sk','lm','rd','ns'])[1 + (i * 17 / 400) % 20]),
         'user' || i || '@example' || (i % 97) || '.org',
         timestamptz '2026-01-01' + i * interval '1 second', timestamptz '2026-01-01' + i * interval '1 second'
    from generate_series(1, ${members}) i;
  insert into members (id, community_id, external_id, first_name, last_name, email_address, created_at, modified_at)
  select md5('n' || m.external_id)::uuid, '${NEIGHBOUR}', m.external_id, m.first_name, m.last_name, m.email_address, m.created_at, m.modified_at
    from members m
   where m.community_id = '${SEARCH_COMMUNITY}' and m.created_at < timestamptz '2026-01-01' + 10001 * interval '1 second';
  insert into member_field_values (community_id, member_id, field_id, value, member_created_at)
  select m.community_id, m.id, f.id, case when f.id = '${CITY}' then 'City ' || (abs(hashtext(m.id::text)) % 100) else 'Dept ' || (abs(hashtext(m.external_id)) % 20) end, m.created_at
    from members m join additional_fields f on f.community_id = m.community_id
   where m.community_id = '${SEARCH_COMMUNITY}';
  alter table members enable trigger user;
  alter table member_field_values enable trigger user;`;
}

/**
 * What autovacuum does soon after a mass insert, done at once: statistics, the visibility map,
 * and the merge of the GIN indexes' pending lists (rows inserted since are kept in a list that
 * every search reads through; right after the seed that list made each trigram index scan
 * read ~400 buffers even for a text nobody has). Not inside a transaction block.
 */
const SETTLE = ['vacuum analyze members', 'vacuum analyze member_field_values', 'vacuum analyze additional_fields'];

/** The share of the members table's pages the visibility map holds as all-visible. */
async function allVisible(client: Client): Promise<number> {
  const { rows } = await client.query<{ share: number }>(
    `select relallvisible::float8 / greatest(relpages, 1) as share from pg_class where oid = 'members'::regclass`,
  );
  return rows[0].share;
}

export async function seedSearch(url: string, members: number): Promise<number> {
  const started = Date.now();
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(seedSql(members));
    for (const statement of SETTLE) await client.query(statement);
    // A vacuum marks a page all-visible only when no snapshot older than its rows is open; the
    // service's own transactions (jobs, the outbox) can hold one back, and then the q= walk's
    // index-only reads each row it tests. Autovacuum comes back for them; here: until done.
    let vacuums = 1;
    for (; vacuums <= 20 && (await allVisible(client)) < 0.99; vacuums++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      await client.query('vacuum members');
    }
    console.log(`[search] members: ${((await allVisible(client)) * 100).toFixed(1)}% of pages all-visible after ${vacuums} vacuum(s)`);
  } finally {
    await client.end();
  }
  return (Date.now() - started) / 1000;
}

interface SearchCase {
  id: string;
  label: string;
  query: string;
  filter?: MemberFilter;
}

function searchCases(members: number): SearchCase[] {
  const i = Math.floor(members / 2);
  const email = `User${i}@Example${i % 97}.ORG`; // stored in lower case: the match ignores case
  return [
    { id: 'page', label: 'first page of members (no filter)', query: 'limit=20' },
    { id: 'email', label: `emailAddress= (${email})`, query: `emailAddress=${encodeURIComponent(email)}`, filter: { emailAddress: email } },
    { id: 'q-digits', label: 'q= 4 characters: "4711" (in addresses and externalIds)', query: 'q=4711', filter: { q: '4711' } },
    { id: 'q-name', label: 'q= 4 characters: "ritz" (in last names)', query: 'q=ritz', filter: { q: 'ritz' } },
    {
      id: 'field',
      label: 'field.<City>=City 42 (1% of the members)',
      query: `field.${CITY}=${encodeURIComponent('City 42')}`,
      filter: { fields: [{ id: CITY, value: 'City 42' }] },
    },
    {
      id: 'field-none',
      label: 'field.<City>=Atlantis (no member)',
      query: `field.${CITY}=Atlantis`,
      filter: { fields: [{ id: CITY, value: 'Atlantis' }] },
    },
  ];
}

export interface SearchResult {
  id: string;
  label: string;
  query: string;
  matches: number;
  size: number;
  p50: number;
  p95: number;
  ratio: number;
  explain: string;
}

export interface SearchReport {
  members: number;
  seedSeconds: number;
  reps: number;
  results: SearchResult[];
}

/** `sql` (with `?` placeholders) as the service does it: the service role, the community set. */
async function asService(client: Client, sql: string, params: unknown[], before: string[] = []) {
  await client.query('begin');
  try {
    for (const statement of before) await client.query(statement);
    await client.query(`set local role ${SERVICE_ROLE}`);
    await client.query(`select set_config('app.community_id', $1, true)`, [SEARCH_COMMUNITY]);
    let n = 0;
    return await client.query(sql.replace(/\?/g, () => `$${++n}`), params);
  } finally {
    await client.query('rollback');
  }
}

/**
 * The EXPLAIN ANALYZE of a page statement run as the service role (row-level security
 * applies), after the plans of the statements inside the search functions it calls
 * (auto_explain's nested statements: the page's plan shows a function scan only), costs and
 * timings left out.
 */
async function servicePlans(client: Client, explain: string, params: unknown[]): Promise<string> {
  const logged: string[] = [];
  const onNotice = (msg: { message?: string }) => {
    if (msg.message?.includes('plan:')) logged.push(msg.message);
  };
  client.on('notice', onNotice);
  let plan: string[] = [];
  try {
    const { rows } = await asService(client, explain, params, [
      "load 'auto_explain'",
      'set local auto_explain.log_min_duration = 0',
      'set local auto_explain.log_nested_statements = on',
      'set local auto_explain.log_analyze = on',
      'set local auto_explain.log_timing = off',
      'set local client_min_messages = log',
    ]);
    plan = rows.map((r) => r['QUERY PLAN']);
  } finally {
    client.off('notice', onNotice);
  }
  const tidy = (plan: string) =>
    plan
      .replace(/^duration: [\d.]+ ms\s+plan:\n/, '')
      .replace(/ {2}\(cost=[^)]*\)/g, '')
      .split('\n')
      .filter((line) => line.trim() && !/^\s*(Planning|Execution|Buffers)/.test(line))
      .join('\n');
  // The functions' statements (not search_allowed's, nor the page itself or the setting), then the page's EXPLAIN.
  const nested = logged.map(tidy).filter((plan) => !/from pg_roles|set_config|as "id"/.test(plan));
  return [...nested, plan.join('\n')].join('\n\n');
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** `reps` requests per case, one at a time, after 20 unmeasured ones. */
export async function timeSearch(url: string, key: string, dbUrl: string, members: number, seedSeconds: number, reps: number): Promise<SearchReport> {
  const cases = searchCases(members);
  const orm = await openOrm(dbUrl, 2, false);
  const results: SearchResult[] = [];
  try {
    const plans: { matches: number; explain: string }[] = [];
    const client = new Client({ connectionString: dbUrl });
    await client.connect();
    try {
      for (const c of cases) {
        const em = orm.em.fork();
        const filters = c.filter ? memberFilters(SEARCH_COMMUNITY, c.filter).filters : [];
        const page = pageStatement(em, Member as never, { communityId: SEARCH_COMMUNITY }, pageWindow({ limit: 20 }), undefined, filters);
        const all = pageStatement(em, Member as never, { communityId: SEARCH_COMMUNITY }, { ...pageWindow({ limit: 20 }), limit: 10_000_000 }, undefined, filters);
        const { rows } = await asService(client, `select count(*) as n from (${all.sql}) x`, all.params);
        plans.push({ matches: Number(rows[0].n), explain: await servicePlans(client, `explain (analyze, costs off, timing off, summary off) ${page.sql}`, page.params) });
      }
    } finally {
      await client.end();
    }
    const get = async (c: SearchCase) => {
      const t0 = performance.now();
      const res = await fetch(`${url}/api/v1/members?${c.query}`, { headers: { 'X-API-Key': key } });
      const body = (await res.json()) as { size: number };
      if (res.status !== 200) throw new Error(`bench search ${c.id}: ${res.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - t0, size: body.size };
    };
    // Interleaved (one request of each case per round): a busy machine slows every case alike.
    const times = cases.map(() => [] as number[]);
    const sizes = cases.map(() => 0);
    for (let r = -20; r < reps; r++) {
      for (const [k, c] of cases.entries()) {
        const { ms, size } = await get(c);
        if (r < 0) continue; // unmeasured warm-up rounds
        times[k].push(ms);
        sizes[k] = size;
      }
    }
    for (const [k, c] of cases.entries()) {
      const sorted = times[k].sort((a, b) => a - b);
      results.push({ id: c.id, label: c.label, query: c.query, matches: plans[k].matches, size: sizes[k], p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), ratio: 0, explain: plans[k].explain });
    }
  } finally {
    await orm.close(true);
  }
  const base = results[0].p50;
  for (const r of results) r.ratio = r.p50 / base;
  return { members, seedSeconds, reps, results };
}

const START = '<!-- search:start -->';
const END = '<!-- search:end -->';

export function renderSearch(report: SearchReport, meta: { date: string; commit: string; database: string; node: string; load: number[] }): string {
  const rows = report.results.map(
    (r) =>
      `| ${r.label} | ${r.matches.toLocaleString('en')} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.id === 'page' ? '1 (base)' : `${r.ratio.toFixed(2)}x`} | ${r.id === 'page' ? '' : r.ratio <= 2 ? 'yes' : 'no'} |`,
  );
  return [
    START,
    '## Search (finding members)',
    '',
    `Run ${meta.date}, commit ${meta.commit}, ${meta.database}, service on Node ${meta.node}, load average at start ${meta.load.map((l) => l.toFixed(2)).join(' ')}.`,
    `${report.members.toLocaleString('en')} members in one community (two additional fields each, plus a neighbour community of 10,000 look-alikes), seeded in SQL in ${report.seedSeconds.toFixed(0)} s.`,
    `Each row: ${report.reps} \`GET /api/v1/members?...\` (a page of 20), one request at a time, the cases interleaved (one of each per round, after 20 unmeasured rounds), end to end over HTTP; goal: p50 within 2x the first page.`,
    '`npm run bench -- search` runs this section alone (BENCH_SEARCH_MEMBERS, BENCH_SEARCH_REPS).',
    '',
    '| Request | Matching members | p50 ms | p95 ms | p50 / first page | Within 2x |',
    '|---|---:|---:|---:|---:|---|',
    ...rows,
    '',
    'Plans of the page statements as the service role (row-level security on), built by the service code, with the plans of the statements inside the search functions they call (auto_explain; costs and timing left out):',
    '',
    ...report.results.flatMap((r) => [`${r.label}:`, '', '```', r.explain, '```', '']),
    END,
  ].join('\n');
}

/** Replaces the search section of a results file (or appends it), leaving the rest as it is. */
export function writeSearchSection(file: string, markdown: string): void {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  const next = start >= 0 && end > start ? text.slice(0, start) + markdown + text.slice(end + END.length) : `${text.trimEnd()}\n\n${markdown}\n`;
  fs.writeFileSync(file, next);
}
