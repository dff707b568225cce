import 'reflect-metadata';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { startRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime';
import { withContract } from './contract';
import { testDatabaseUrl } from './database';

export const ADMIN_TOKEN = 'test-operator-token-0123456789';

export interface TestApp {
  runtime: Runtime;
  http: ReturnType<typeof request>;
  /** Operator GraphQL call. */
  operator<T = any>(query: string, variables?: Record<string, unknown>): Promise<T>;
  /** A new community and a key for it. */
  tenant(opts?: { scopes?: string[]; rateLimitPerHour?: number }): Promise<Tenant>;
  close(): Promise<void>;
}

export interface Tenant {
  communityId: string;
  key: string;
  keyId: string;
}

/** `opts.worker`: also run the background job worker (notifications, imports). */
export async function startTestApp(env: Record<string, string> = {}, opts: Pick<RuntimeOptions, 'worker'> = {}): Promise<TestApp> {
  // Failed-key attempts are counted per address across the whole run; tests that need the
  // limit set it themselves (with their own forwarded address).
  const config = loadConfig({ LOG_LEVEL: process.env.TEST_LOG_LEVEL || 'silent', ADMIN_TOKEN, AUTH_FAILURES_PER_WINDOW: '1000000', ...env });
  const runtime = await startRuntime(config, testDatabaseUrl(), { migrate: false, worker: opts.worker });
  // Every /api/v1 response of every test is checked against the OpenAPI document.
  const http = withContract(request(runtime.app));
  const operator = async (query: string, variables?: Record<string, unknown>) => {
    const res = await http.post('/graphql').set('Authorization', `Bearer ${ADMIN_TOKEN}`).send({ query, variables });
    if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
    return res.body.data;
  };
  const createKey = async (communityId: string, opts: { scopes?: string[]; rateLimitPerHour?: number } = {}) => {
    const data = await operator(
      'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { id key } }',
      { input: { communityId, ...opts } },
    );
    return data.createApiKey as { id: string; key: string };
  };
  return {
    runtime,
    http,
    operator,
    async tenant(opts = {}) {
      const data = await operator('mutation($input: CreateCommunityInput!) { createCommunity(input: $input) { id } }', {
        input: { name: 'Test community' },
      });
      const communityId = data.createCommunity.id;
      const key = await createKey(communityId, opts);
      return { communityId, key: key.key, keyId: key.id };
    },
    close: () => runtime.close(),
  };
}

/** Row-level security on and off, for `describe.each`: what must hold in both modes (the `norls` bench arm's). */
export const ROW_SECURITY_MODES: [string, Record<string, string>][] = [
  ['on', {}],
  ['off', { DB_ROW_SECURITY: 'off' }],
];
