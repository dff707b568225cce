import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers/app';
import { serviceTenant, startService, type ServiceProcess } from '../helpers/process';
import { testDatabaseUrl } from '../helpers/database';

/** kill -9 at random moments of bulk writes and imports: afterwards every write is all or nothing. */
const env = () => ({ DATABASE_URL: testDatabaseUrl(), ADMIN_TOKEN, JOB_WORKER_STALE_SECONDS: '3' });
let service: ServiceProcess;
let db: Client;
let key: string;

async function call(path: string, init: { method?: string; body?: unknown; csv?: string; key?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (init.key !== null) headers['x-api-key'] = init.key ?? key;
  if (init.csv !== undefined) headers['content-type'] = 'text/csv';
  else if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${service.url}${path}`, {
    method: init.method ?? (init.body !== undefined || init.csv !== undefined ? 'POST' : 'GET'),
    headers,
    body: init.csv ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}


const rows = async (sql: string, params: unknown[] = []) => (await db.query(sql, params)).rows;

async function expectCountsExact(communityId: string) {
  const bad = await rows(
    `select g.id, g.membership_count, (select count(*) from group_memberships m where m.group_id = g.id)::int as actual
     from groups g where g.community_id = $1 and g.membership_count <> (select count(*) from group_memberships m where m.group_id = g.id)`,
    [communityId],
  );
  expect(bad).toEqual([]);
}

let communityId: string;
beforeAll(async () => {
  db = new Client({ connectionString: testDatabaseUrl() });
  await db.connect();
  service = await startService(env());
  ({ communityId, key } = await serviceTenant(service.url, ADMIN_TOKEN, 'crash', 1_000_000));
}, 60_000);
afterAll(async () => {
  await service?.stop();
  await db?.end();
});

describe('kill -9 during writes', () => {
  it('bulk creates are all or nothing and membershipCount stays exact', async () => {
    const members = await call('/api/v1/members/_bulk', {
      body: { members: Array.from({ length: 1000 }, (_, i) => ({ externalId: `base-${i}`, firstName: `M${i}` })) },
    });
    expect(members.status).toBe(201);
    const memberIds = members.body.map((m: { id: string }) => m.id);
    for (let round = 0; round < 8; round++) {
      const group = await call('/api/v1/groups', { body: { name: `crash ${round}`, externalId: `crash-${round}` } });
      expect(group.status).toBe(201);
      const inFlight = [
        call(`/api/v1/groups/${group.body.id}/memberships/_bulk`, { body: { groupMemberships: memberIds.map((memberId: string) => ({ memberId })) } }),
        call('/api/v1/members/_bulk', { body: { members: Array.from({ length: 500 }, (_, i) => ({ externalId: `r${round}-${i}`, lastName: 'x' })) } }),
      ].map((p) => p.catch(() => undefined));
      await new Promise((r) => setTimeout(r, Math.random() * 250));
      await service.kill();
      await Promise.all(inFlight);
      service = await startService(env());
      const [{ n }] = await rows('select count(*)::int as n from group_memberships where group_id = $1', [group.body.id]);
      expect([0, 1000]).toContain(n);
      const [{ m }] = await rows(`select count(*)::int as m from members where community_id = $1 and external_id like $2`, [communityId, `r${round}-%`]);
      expect([0, 500]).toContain(m);
      await expectCountsExact(communityId);
    }
  }, 240_000);

  it('an import killed mid-run resumes on the next instance and completes with the right counts', async () => {
    const total = 8000;
    expect((await call('/api/v1/groups', { body: { name: 'import target', externalId: 'imp-group' } })).status).toBe(201);
    const csv = ['externalId,firstName,groupExternalIds', ...Array.from({ length: total }, (_, i) => `imp-${i},N${i},imp-group`)].join('\n');
    const started = await call('/api/v1/triggers/members/import', { csv });
    expect(started.status).toBe(202);
    // Kill while the job is mid-run: some batches committed, others not yet.
    for (const until = Date.now() + 30_000; Date.now() < until; ) {
      const [job] = await rows('select status, processed from import_jobs where id = $1', [started.body.id]);
      if (job.status === 'RUNNING' && job.processed > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    await service.kill();
    const [atKill] = await rows('select status, processed from import_jobs where id = $1', [started.body.id]);
    expect(atKill.status).toBe('RUNNING');
    expect(atKill.processed).toBeLessThan(total);
    service = await startService(env());
    const query = `query($id: ID!) { importJob(id: $id) { status total processed created updated unchanged failed failureReason } }`;
    let job: any;
    for (const until = Date.now() + 90_000; Date.now() < until; ) {
      const res = await fetch(`${service.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ query, variables: { id: started.body.id } }),
      });
      job = ((await res.json()) as any).data.importJob;
      if (['COMPLETED', 'FAILED'].includes(job.status)) break;
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(job).toMatchObject({ status: 'COMPLETED', total, processed: total, failed: 0 });
    expect(job.created + job.updated + job.unchanged).toBe(total);
    const [{ n }] = await rows(`select count(*)::int as n from members where community_id = $1 and external_id like 'imp-%'`, [communityId]);
    expect(n).toBe(total);
    const [{ c }] = await rows(`select membership_count as c from groups where community_id = $1 and external_id = 'imp-group'`, [communityId]);
    expect(c).toBe(total);
    await expectCountsExact(communityId);
  }, 180_000);
});
