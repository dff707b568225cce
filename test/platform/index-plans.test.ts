import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from 'pg';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { testDatabaseUrl } from '../helpers/database';
import { sleep } from '../helpers/jobs';
import { preparedText } from '../../bench/prepared-text';

/**
 * Every statement a mix of requests and jobs sends (captured from MikroORM's knex `query`
 * events, which the service's prepared statements emit too), planned as the owner: no
 * row-level security policy adds the community there, as for the jobs (they run as the owner)
 * and under DB_ROW_SECURITY=off. Each scan of a community's table must then still have an
 * index condition: the community leads nearly every index, and a statement that names only a
 * group or a notification read every community's rows. Under the policy the same statements
 * hide it (the policy's community becomes the index condition), so only this view shows it.
 * Found this way: a group's memberships before a reorder, a bulk's clash check, and the
 * count of a notification's deliveries (2026-11-28).
 */

interface Captured {
  sql: string;
  bindings: unknown[];
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

let app: TestApp;
let t: Tenant;
let owner: Client;
const captured: Captured[] = [];

const api = (method: 'get' | 'post' | 'patch' | 'delete', path: string) => app.http[method](`/api/v1${path}`).set('X-API-Key', t.key);

/** A mix of what clients and jobs do, each step checked so that the statements are the working ones. */
async function traffic() {
  const group = (await api('post', '/groups').send({ name: 'Chess', externalId: 'chess' }).expect(201)).body;
  await api('post', '/groups').send({ name: 'Go', externalId: 'go' }).expect(201);
  const members = (await api('post', '/members/_bulk').send({ members: [1, 2, 3, 4].map((i) => ({ externalId: `m${i}`, firstName: `M${i}`, emailAddress: `m${i}@example.org` })) }).expect(201)).body;
  await api('post', '/members').send({ externalId: 'm5', emailAddress: 'm5@example.org' }).expect(201);
  await api('post', '/members').send({ externalId: 'm6', emailAddress: 'M1@example.org' }).expect(409);
  await api('patch', '/members/m5?key=externalId').send({ lastName: 'Five' }).expect(204);
  const ids = (members as { id: string }[]).map((m) => m.id);
  const memberships = (await api('post', `/groups/${group.id}/memberships/_bulk`).send({ groupMemberships: ids.map((memberId, i) => ({ memberId, externalId: `gm${i}` })) }).expect(201)).body as { id: string }[];
  await api('post', `/groups/${group.id}/memberships/_bulk`).send({ groupMemberships: [{ memberId: ids[0] }] }).expect(409);
  await api('patch', `/groups/${group.id}/memberships/order`).send({ order: memberships.map((m) => ({ id: m.id })).reverse() }).expect(204);
  await api('get', `/groups/${group.id}/memberships?sort=orderNumber`).expect(200);
  await api('get', '/groups').expect(200);
  await api('get', '/members?emailAddress=m2@example.org').expect(200);
  await api('get', '/members?q=m3').expect(200);
  await api('post', '/notifications').send({ title: 'Hello', message: 'x', memberIds: ids.slice(0, 2) }).expect(201);
  const job = (await api('post', '/triggers/members/import').set('content-type', 'text/csv')
    .send('externalId,firstName,emailAddress,groupExternalIds\nm1,One,m1@example.org,go\nm7,Seven,m7@example.org,chess;go\n').expect(202)).body;
  for (let i = 0; i < 100; i++) {
    const state = (await api('get', `/import_jobs/${job.id}`).expect(200)).body;
    if (state.status === 'COMPLETED') break;
    await sleep(100);
  }
  expect((await api('get', `/import_jobs/${job.id}`).expect(200)).body).toMatchObject({ status: 'COMPLETED', failed: 0 });
  const field = (await api('post', '/additional_fields').send({ name: 'City', type: 'TEXT' }).expect(201)).body;
  await api('post', '/members').send({ externalId: 'm8', additionalFields: [{ id: field.id, value: 'Oslo' }] }).expect(201);
  await api('patch', '/members/m8?key=externalId').send({ additionalFields: [{ id: field.id, value: 'Bergen' }] }).expect(204);
  await api('get', `/members?field.${field.id}=Bergen`).expect(200);
  await api('get', '/members/m8?key=externalId').expect(200);
  await api('patch', `/groups/${group.id}/memberships/gm1?key=externalId`).send({ title: 'Captain' }).expect(204);
  await api('get', `/groups/${group.id}/memberships/gm1?key=externalId`).expect(200);
  await api('delete', `/groups/${group.id}/memberships/gm2?key=externalId`).expect(204);
  await api('post', '/groups').set('Idempotency-Key', 'plans-1').send({ name: 'Once' }).expect(201);
  await api('post', '/groups').set('Idempotency-Key', 'plans-1').send({ name: 'Once' }).expect(201);
  await api('get', '/events?limit=50').expect(200);
  await api('delete', '/members/m4?key=externalId').expect(204);
  await api('delete', '/groups/go?key=externalId').expect(204);
}

/** The statement's plan as the owner, its `?` or `$n` parameters given as literals (EXECUTE of a PREPAREd text). */
async function planOf(c: Captured, n: number): Promise<PlanNode> {
  const { prepare, execute } = preparedText(`plan_${n}`, c.sql, c.bindings, (x) => owner.escapeLiteral(x));
  await owner.query('begin');
  try {
    // Small tables: ask for the plan a large one gets.
    await owner.query('set local enable_seqscan = off');
    await owner.query(prepare);
    const { rows } = await owner.query(`explain (format json) ${execute}`);
    return (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan;
  } finally {
    await owner.query('rollback');
  }
}

/**
 * The scans of `tables` in a plan that do not bound their index by its first column: none at
 * all, or a condition on a later column only (a btree takes that as an index condition too,
 * and walks the whole index to test it). `leading`: index name -> its first column.
 */
function unboundedScans(node: PlanNode, tables: Set<string>, leading: Map<string, string>): string[] {
  const type = node['Node Type'];
  const index = node['Index Name'];
  const bounded = (cond: string | undefined) => {
    const first = index && leading.get(index);
    return !!cond && !!first && new RegExp(`\\(${first} = `).test(cond);
  };
  const own =
    (type === 'Seq Scan' && node['Relation Name'] && tables.has(node['Relation Name'])) ||
    (/^(Index Scan|Index Only Scan|Bitmap Index Scan)$/.test(type) && index && leading.has(index) && !bounded(node['Index Cond']))
      ? [`${type} on ${node['Relation Name'] ?? ''}${index ? ` using ${index}` : ''}${node['Index Cond'] ? ` (${node['Index Cond']})` : ''}`]
      : [];
  return [...own, ...(node.Plans ?? []).flatMap((p) => unboundedScans(p, tables, leading))];
}

beforeAll(async () => {
  // The worker runs the import, but not the statistics refresher: the plans are judged as the
  // statements' shape makes them on tables never analyzed. Analyzed at a row or two, the planner
  // walks a whole one-page index for a join or picks any index whose later column is bound, which
  // says nothing of a real community's size; the refresher's ANALYZE (2 s after the first rows)
  // came before or after the planning here as the machine's speed had it (CI, 2026-11-29).
  app = await startTestApp({}, { worker: { statisticsSeconds: 0 } });
  t = await app.tenant();
  owner = new Client({ connectionString: testDatabaseUrl() });
  await owner.connect();
  // Nor autovacuum's ANALYZE, for the same reason, whenever its round comes (this file's
  // database is its own: test/file-database.ts).
  const { rows: tables } = await owner.query<{ name: string }>(`select format('%I.%I', schemaname, tablename) as name from pg_tables where schemaname = 'public'`);
  for (const { name } of tables) await owner.query(`alter table ${name} set (autovacuum_enabled = off)`);
  const knex = (app.runtime.orm.em.getConnection() as unknown as { getKnex(): NodeJS.EventEmitter }).getKnex();
  const onQuery = (q: { sql?: string; bindings?: unknown[] }) => captured.push({ sql: q.sql ?? '', bindings: q.bindings ?? [] });
  knex.on('query', onQuery);
  try {
    await traffic();
  } finally {
    knex.off('query', onQuery);
  }
}, 60_000);

afterAll(async () => {
  await owner?.end();
  await app?.close();
});

describe('statements keep an index condition on every community table without the policy', () => {
  it('every read and write of the mix', async () => {
    const { rows } = await owner.query<{ table_name: string }>(
      `select table_name from information_schema.columns where table_schema = 'public' and column_name = 'community_id'`,
    );
    const tables = new Set(rows.map((r) => r.table_name));
    expect(tables.has('group_memberships')).toBe(true);
    const indexes = await owner.query<{ name: string; first: string }>(
      `select c.relname as name, pg_get_indexdef(i.indexrelid, 1, true) as first from pg_index i
         join pg_class c on c.oid = i.indexrelid join pg_class t on t.oid = i.indrelid
        where t.relnamespace = 'public'::regnamespace and t.relname = any($1)`,
      [[...tables]],
    );
    const leading = new Map(indexes.rows.map((r) => [r.name, r.first]));
    expect(leading.get('group_memberships_community_group_order_idx')).toBe('community_id');
    const statements = new Map<string, Captured>();
    // Left out: the scheduled announcement of expired keys (src/modules/communities/key-events.ts).
    // It reads across communities by design, bounded by its partial index over due keys
    // (api_keys_expiry_due_idx), and it was captured only when the minute turned during the mix:
    // the test failed at random on it.
    const crossCommunity = /update api_keys set expiry_announced_at = now\(\)/;
    for (const c of captured) if (/^\s*(select|update|delete|insert|with)\b/i.test(c.sql) && !crossCommunity.test(c.sql) && !statements.has(c.sql)) statements.set(c.sql, c);
    // The mix ran the paths this guards (a reorder's read, a bulk's clash check, a delivery count).
    // (MikroORM's em.execute sends its values inlined, the prepared statements as $n.)
    const texts = [...statements.keys()].map((s) => s.replace(/\s+/g, ' ').trim());
    expect(texts.some((s) => /^select id, external_id from group_memberships where /.test(s))).toBe(true);
    expect(texts.some((s) => /^select member_id, external_id from group_memberships where /.test(s))).toBe(true);
    expect(texts.some((s) => /count\(\*\) from notification_deliveries/.test(s))).toBe(true);
    expect(statements.size).toBeGreaterThan(30);
    const found: string[] = [];
    let n = 0;
    for (const c of statements.values()) {
      const scans = unboundedScans(await planOf(c, ++n), tables, leading);
      if (scans.length) found.push(`${scans.join(', ')}: ${c.sql.replace(/\s+/g, ' ').slice(0, 200)}`);
    }
    expect(found).toEqual([]);
  });
});
