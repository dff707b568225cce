/**
 * Where a read request's CPU goes, stage by stage, in one process on the bench data:
 * `node -r @swc-node/register bench/stages.ts`. CPU time per operation (process.cpuUsage),
 * so it is steadier than throughput on a busy machine, and with the embedded PostgreSQL
 * (no DATABASE_URL) the server's CPU per operation beside it. Evidence for docs/performance.md.
 * `BENCH_PG_PORT` moves the embedded server off the bench's port (another run in progress).
 */
import 'reflect-metadata';
import { execute, parse, type DocumentNode } from 'graphql';
import { Pool } from 'pg';
import { loadConfig } from '../src/config';
import { createContext, type Caller } from '../src/context';
import { buildSchema } from '../src/graphql/schema';
import { Group } from '../src/modules/groups/group.entity';
import { GroupService } from '../src/modules/groups/group.service';
import { GroupMembership } from '../src/modules/memberships/membership.entity';
import { Member } from '../src/modules/members/member.entity';
import { startRuntime } from '../src/runtime';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageWindow } from '../src/common/pagination';
import { leanFindOne, leanPage } from '../src/db/lean';
import { preparedRows } from '../src/db/prepared';
import { GroupMembershipService } from '../src/modules/memberships/membership.service';
import { openBenchDatabase } from './db';
import { documentOf } from './ops';
import { seed, type Seeded } from './seed';
import { runMain } from './proc';

const N = Number(process.env.STAGES_N || 2000);

/** CPU ms of the PostgreSQL server so far, when it is ours to read (embedded). */
let pgCpuMs: (() => number) | undefined;

async function cpu(name: string, fn: () => unknown): Promise<void> {
  for (let i = 0; i < Math.min(300, N); i++) await fn(); // warm the JIT and the pools
  const pgBefore = pgCpuMs?.();
  const before = process.cpuUsage();
  for (let i = 0; i < N; i++) await fn();
  const used = process.cpuUsage(before);
  const pg = pgCpuMs && pgBefore !== undefined ? `${((pgCpuMs() - pgBefore) / N).toFixed(3).padStart(7)} ms pg  ` : '';
  console.log(`${((used.user + used.system) / 1000 / N).toFixed(3).padStart(7)} ms  ${pg}${name}`);
}

/** graphql-jit when installed (`npm i --no-save graphql-jit`): the same document, compiled. */
function jit(schema: ReturnType<typeof buildSchema>, doc: DocumentNode) {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { compileQuery, isCompiledQuery } = require('graphql-jit');
    const compiled = compileQuery(schema, doc);
    return isCompiledQuery(compiled) ? compiled : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The statements of the hot reads, each run both ways on the ORM's pool: `em.execute` (MikroORM
 * inlines the parameters: PostgreSQL parses and plans every call) and `prepared` (a named
 * statement: parsed once per connection, plan cache). The texts are the ones the lean reads send
 * (captured from knex's `query` event); rounds alternate the two ways so load drift hits both.
 */
async function statementPaths(em: EntityManager, s: Seeded): Promise<void> {
  const captured: { sql: string; bindings: unknown[] }[] = [];
  const knex = em.getConnection().getKnex();
  const listen = (q: { sql: string; bindings: unknown[] }) => captured.push(q);
  const capture = async (run: () => Promise<unknown>) => {
    captured.length = 0;
    knex.on('query', listen);
    try {
      await run();
    } finally {
      knex.off('query', listen);
    }
    return captured[captured.length - 1];
  };
  const byOrder = { limit: 100, sort: [{ field: 'orderNumber', direction: 'ASC' }] } as unknown as Parameters<GroupMembershipService['list']>[2];
  const statements: [string, { sql: string; bindings: unknown[] }][] = [
    ['groups page, limit=20', await capture(() => leanPage(em.fork(), Group, { communityId: s.communityId }, pageWindow({ limit: 20 })))],
    ['group by id', await capture(() => leanFindOne(em.fork(), Group, { id: s.groupId, communityId: s.communityId }))],
    ['group by externalId', await capture(() => leanFindOne(em.fork(), Group, { externalId: s.groupExternalId, communityId: s.communityId }))],
    [
      'memberships page of the 10k group, limit=100, with member externalId',
      await capture(() => new GroupMembershipService(em.fork()).list(s.communityId, { id: s.bigGroupId }, byOrder)),
    ],
  ];
  console.log('\nStatements of the hot reads: em.execute (inlined) vs prepared (named), alternating rounds');
  for (let round = 1; round <= 2; round++) {
    for (const [label, q] of statements) {
      const inlined = q.sql.replace(/\$\d+/g, '?'); // each $n is used once, in order
      await cpu(`round ${round}: ${label}: em.execute`, () => em.fork().execute(inlined, q.bindings));
      await cpu(`round ${round}: ${label}: prepared`, () => preparedRows(em.fork(), q.sql, q.bindings));
    }
  }
}

async function main() {
  const db = await openBenchDatabase();
  pgCpuMs = db.cpuMs;
  const s = await seed(db.url);
  const runtime = await startRuntime(loadConfig({ LOG_LEVEL: 'silent' }), db.url, { migrate: false });
  const pool = new Pool({ connectionString: db.url, max: 2 });
  const em = runtime.orm.em as unknown as EntityManager;
  const schema = buildSchema();
  const scopes = new Set(['groups:read', 'group_memberships:read', 'members:read']);
  const caller: Caller = { kind: 'key', keyId: 'stages', communityId: s.communityId, scopes };
  const ctx = () => createContext(em, caller, 'stages', runtime.state);
  try {
    await statementPaths(em, s);
    for (const limit of [20, 100]) {
      console.log(`\nGET /groups?limit=${limit}`);
      const order = 'order by created_at asc, id asc limit $2';
      await cpu('SQL alone (pg, prepared statement)', () =>
        pool.query({ name: `g${limit}`, text: `select * from groups where community_id = $1 ${order}`, values: [s.communityId, limit + 1] }));
      await cpu('em.execute (MikroORM connection, plain rows)', () =>
        em.fork().execute('select * from groups where community_id = ? order by created_at asc, id asc limit ?', [s.communityId, limit + 1]));
      const findOpts = { orderBy: [{ createdAt: 'asc' as const }, { id: 'asc' as const }], limit: limit + 1 };
      await cpu('em.find (query builder + hydrated entities)', () => em.fork().find(Group, { communityId: s.communityId }, findOpts));
      await cpu('em.find, disableIdentityMap', () => em.fork().find(Group, { communityId: s.communityId }, { ...findOpts, disableIdentityMap: true }));
      const doc = parse(documentOf('getGroups'));
      await cpu('graphql execute of the route document (with SQL)', () => execute({ schema, document: doc, variableValues: { limit }, contextValue: ctx() }));
      // The same execution with the page already loaded: the cost of graphql + type-graphql alone.
      const page = await new GroupService(em.fork()).list(s.communityId, { limit });
      const list = GroupService.prototype.list;
      GroupService.prototype.list = async () => page;
      await cpu('graphql execute, page preloaded (no SQL)', () => execute({ schema, document: doc, variableValues: { limit }, contextValue: ctx() }));
      const compiled = jit(schema, doc);
      if (compiled) await cpu('graphql-jit, page preloaded (no SQL)', () => compiled.query(undefined, ctx(), { limit }));
      GroupService.prototype.list = list;
      const answer = await execute({ schema, document: doc, variableValues: { limit }, contextValue: ctx() });
      await cpu('JSON.stringify of the answer', () => JSON.stringify(answer.data));
    }
    const getGroup = parse(documentOf('getGroup'));
    for (const ref of [{ id: s.groupId }, { externalId: s.groupExternalId }]) {
      const once = await execute({ schema, document: getGroup, variableValues: { ref }, contextValue: ctx() });
      if (once.errors || !once.data) throw new Error(`getGroup failed: ${JSON.stringify(once.errors)}`);
    }
    console.log('\nGET /groups/{id}, GET /groups/{externalId}?key=externalId');
    await cpu('graphql execute of the route document, by id (with SQL)', () =>
      execute({ schema, document: getGroup, variableValues: { ref: { id: s.groupId } }, contextValue: ctx() }));
    await cpu('graphql execute of the route document, by externalId (with SQL)', () =>
      execute({ schema, document: getGroup, variableValues: { ref: { externalId: s.groupExternalId } }, contextValue: ctx() }));
    console.log('\nGET /groups/{10k group}/memberships?sort=orderNumber&limit=100');
    const where = { communityId: s.communityId, groupId: s.bigGroupId };
    const orderBy = [{ orderNumber: 'asc' as const }, { createdAt: 'asc' as const }, { id: 'asc' as const }];
    const rows = await em.fork().find(GroupMembership, where, { orderBy, limit: 101 });
    const memberIds = rows.map((r) => r.memberId);
    await cpu('page: em.execute (plain rows)', () =>
      em.fork().execute('select * from group_memberships where community_id = ? and group_id = ? order by order_number, created_at, id limit 101', [s.communityId, s.bigGroupId]));
    await cpu('page: em.find (hydrated)', () => em.fork().find(GroupMembership, where, { orderBy, limit: 101 }));
    await cpu('members of the page: em.execute (id, external_id)', () =>
      em.fork().execute('select id, external_id from members where id in (?) and community_id = ?', [memberIds, s.communityId]));
    await cpu('members of the page: em.find (hydrated, every column)', () => em.fork().find(Member, { id: { $in: memberIds }, communityId: s.communityId }));
    const doc = parse(documentOf('getGroupMemberships'));
    const variables = { groupRef: { id: s.bigGroupId }, limit: 100, sort: [{ field: 'orderNumber', direction: 'ASC' }] };
    await cpu('graphql execute of the route document (with SQL)', () => execute({ schema, document: doc, variableValues: variables, contextValue: ctx() }));
  } finally {
    await pool.end();
    await runtime.close();
    await db.close();
  }
}

runMain(main);
