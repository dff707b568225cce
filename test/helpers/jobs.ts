import type { EntityManager } from '@mikro-orm/postgresql';
import type { TestApp } from './app';
import { asTestOwner } from './owner';

/** Helpers of the notification and import tests. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type GqlResult = { data?: any; errors?: { message: string; extensions: { code: string } }[] };

/** A GraphQL call with a community key; errors are returned, not thrown. */
export const gqlWith = (app: TestApp) => async (query: string, variables: Record<string, unknown>, key: string): Promise<GqlResult> =>
  (await app.http.post('/graphql').set('X-API-Key', key).send({ query, variables })).body;

/** Plain SQL on the test database, to look at what the API does not show (real database, no mocks). */
export const sqlWith = (app: TestApp) => (query: string, params: unknown[]) =>
  asTestOwner(() => (app.runtime.orm.em.fork() as unknown as EntityManager).execute(query, params));
