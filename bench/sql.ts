import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config';
import { listen, startRuntime } from '../src/runtime';
import { countSql } from '../test/helpers/sql-count';
import { bulkBody, graphqlBody, orderBody, type LoadOp } from './ops';
import type { Seeded } from './seed';

export interface SqlCount {
  all: number;
  /** The gate's pool: key lookups and the rate-limit upsert. */
  pool: number;
  orm: number;
  keyLookups: number;
  statements: string[];
}

export interface SqlReport {
  rest: Record<string, SqlCount>;
  graphql: Record<string, SqlCount>;
  auth: { warmKeyLookups: number; revokedStatus: number; statusBeforeRevoke: number; ttlMs: number };
}

export const ADMIN_TOKEN = 'bench-operator-token-0123456789';
const short = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 160);

/**
 * Counts the SQL statements of each operation in an in-process runtime on the bench
 * database (test/helpers/sql-count.ts: MikroORM's knex `query` events plus the gate's
 * pool). Each request runs once first, so the key cache is warm when it is counted.
 * Single operations (bulk, reorder, the import request) are counted once each.
 */
export async function countStatements(url: string, seeded: Seeded, ops: LoadOp[], order: string[]): Promise<SqlReport> {
  const config = loadConfig({ LOG_LEVEL: 'silent', ADMIN_TOKEN });
  const runtime = await startRuntime(config, url, { migrate: false });
  const server = await listen(runtime.app, 0);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  const operator = async (query: string, variables: Record<string, unknown>) => {
    const res = await call('POST', '/graphql', { authorization: `Bearer ${ADMIN_TOKEN}` }, { query, variables });
    const json = JSON.parse(res.text);
    if (json.errors) throw new Error(`bench: operator call failed: ${res.text}`);
    return json.data;
  };
  const newKey = async () =>
    (await operator('mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { id key } }', {
      input: { communityId: seeded.communityId, rateLimitPerHour: 1_000_000_000 },
    })).createApiKey as { id: string; key: string };

  const counter = countSql(runtime);
  const counted = async (fn: () => Promise<{ status: number; text: string }>): Promise<SqlCount> => {
    counter.reset();
    const res = await fn();
    if (res.status >= 300) throw new Error(`bench: counted request failed with ${res.status}: ${res.text.slice(0, 300)}`);
    const statements = [...counter.statements];
    return {
      all: statements.length,
      pool: statements.filter((s) => s.source === 'pool').length,
      orm: statements.filter((s) => s.source === 'orm').length,
      keyLookups: statements.filter((s) => /from api_keys/i.test(s.sql)).length,
      statements: statements.map((s) => `${s.source}: ${short(s.sql)}`),
    };
  };
  try {
    const { key } = await newKey();
    const h = { 'x-api-key': key };
    const report: SqlReport = { rest: {}, graphql: {}, auth: { warmKeyLookups: NaN, revokedStatus: 0, statusBeforeRevoke: 0, ttlMs: config.keyCacheTtlMs } };
    for (const op of ops) {
      const rest = () => call(op.method, op.path, h, op.body);
      const gql = () => call('POST', '/graphql', h, graphqlBody(op));
      await rest();
      report.rest[op.id] = await counted(rest);
      await gql();
      report.graphql[op.id] = await counted(gql);
    }
    report.auth.warmKeyLookups = Math.max(...Object.values(report.rest).map((c) => c.keyLookups));

    // Bulk into an empty group, and a reorder of the 10,000 memberships of the big group.
    const created = JSON.parse((await call('POST', '/api/v1/groups', h, { name: 'SQL count bulk' })).text);
    report.rest.bulk = await counted(() =>
      call('POST', `/api/v1/groups/${created.id}/memberships/_bulk`, h, bulkBody(seeded.memberIds, 1000, 'sql')),
    );
    report.rest.reorder = await counted(() => call('PATCH', `/api/v1/groups/${seeded.bigGroupId}/memberships/order`, h, orderBody(order)));
    // The import request only queues its job; the job's SQL is the worker's, not the request's.
    const importProbe = await call('POST', '/api/v1/triggers/members/import', h, { members: [{ externalId: 'sql-probe-0', firstName: 'Probe' }] });
    if (importProbe.status === 202) {
      report.rest.import = await counted(() =>
        call('POST', '/api/v1/triggers/members/import', h, { members: [{ externalId: 'sql-probe-1', firstName: 'Probe' }] }),
      );
    }

    // Revocation takes effect at once on the instance that revoked, warm cache or not.
    const victim = await newKey();
    report.auth.statusBeforeRevoke = (await call('GET', '/api/v1/groups?limit=1', { 'x-api-key': victim.key })).status;
    await operator('mutation($id: ID!) { revokeApiKey(id: $id) }', { id: victim.id });
    report.auth.revokedStatus = (await call('GET', '/api/v1/groups?limit=1', { 'x-api-key': victim.key })).status;
    return report;
  } finally {
    counter.stop();
    server.close();
    await runtime.close();
  }
}
