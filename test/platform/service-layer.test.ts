import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupService } from '../../src/modules/groups/group.service';
import { useServiceDb } from '../helpers/service';
import { testDatabaseUrl } from '../helpers/database';

/** The service-level layer itself (test/helpers/service.ts): each test's writes are rolled back after it. */
const db = useServiceDb();
let client: Client;
const seen: { communityId?: string; groupId?: string } = {};

beforeAll(async () => {
  client = new Client({ connectionString: testDatabaseUrl() });
  await client.connect();
});
afterAll(async () => {
  await client.end();
});

const countOf = async (table: string, id: string) =>
  Number((await client.query(`select count(*) as n from ${table} where id = $1`, [id])).rows[0].n);

describe('useServiceDb', () => {
  it('gives each test a community and an EntityManager in an open transaction', async () => {
    const group = await new GroupService(db.em).create(db.communityId, { name: 'Rolled back' });
    seen.communityId = db.communityId;
    seen.groupId = group.id;
    expect(db.em.isInTransaction()).toBe(true);
    // uncommitted: another connection does not see it
    expect(await countOf('groups', group.id)).toBe(0);
  });

  it('rolled the previous test back: its community and group are gone', async () => {
    expect(seen.communityId).toBeDefined();
    expect(db.communityId).not.toBe(seen.communityId);
    expect(await countOf('communities', seen.communityId!)).toBe(0);
    expect(await countOf('groups', seen.groupId!)).toBe(0);
  });
});
