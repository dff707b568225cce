import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { ApolloServer, type BaseContext } from '@apollo/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/graphql/schema';
import { jitExecution } from '../../src/graphql/jit';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';

/**
 * What /graphql keeps per document (src/graphql/jit.ts and src/graphql/nul-check.ts, on
 * top of Apollo Server's own document store) must never change an answer: each request
 * below is sent several times, so that it is answered first by graphql-js, then by the
 * document compiled on its second sight, then from the cache.
 */
let app: TestApp;
let t: Tenant;

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
});
afterAll(() => app?.close());

const gql = (body: object, headers: Record<string, string> = {}) => {
  const req = app.http.post('/graphql').set('X-API-Key', t.key);
  for (const [name, value] of Object.entries(headers)) req.set(name, value);
  return req.send(body);
};
const REPEATS = 4;

/** Query, another query and a mutation in one document text. */
const MIXED = `
  query Page($l: Int) { groups(limit: $l) { limit size } }
  query Fixed { groups(limit: 2) { limit } }
  mutation Make($name: String!) { createGroup(input: { name: $name }) { name } }
`;

describe('/graphql document caches', () => {
  it("a document's validation errors are the same every time it is sent (invalid documents are never cached)", async () => {
    const documents = [
      `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: groups { size }`).join(' ')} }`, // over the alias limit
      '{ groups { sizee } }', // an unknown field
      'query Q($l: Int) { groups(limit: $l) { size } } query Q { groups { size } }', // two operations of one name
      '{ group(ref: { externalId: "a\\u0000b" }) { id } }', // a NUL in a literal (a GraphQL escape): refused before execution
    ];
    for (const query of documents) {
      const first = await gql({ query });
      expect(first.status, query).toBe(400);
      expect(first.body.errors.length, query).toBeGreaterThan(0);
      for (let i = 1; i < REPEATS; i++) {
        const again = await gql({ query });
        expect(again.status, query).toBe(first.status);
        expect(again.body, query).toEqual(first.body);
      }
    }
  });

  it('one document, different operations and variables: each answered as its own', async () => {
    for (let i = 0; i < REPEATS; i++) {
      const one = await gql({ query: MIXED, operationName: 'Page', variables: { l: 1 } });
      expect(one.body).toEqual({ data: { groups: { limit: 1, size: expect.any(Number) } } });
      const three = await gql({ query: MIXED, operationName: 'Page', variables: { l: 3 } });
      expect(three.body.data.groups.limit).toBe(3);
      const fixed = await gql({ query: MIXED, operationName: 'Fixed' });
      expect(fixed.body).toEqual({ data: { groups: { limit: 2 } } });
      const bad = await gql({ query: MIXED, operationName: 'Page', variables: { l: 'many' } });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
      const unknown = await gql({ query: MIXED, operationName: 'Nope' });
      expect(unknown.status).toBe(400);
      expect(unknown.body.errors[0].message).toContain('Nope');
      const none = await gql({ query: MIXED });
      expect(none.status).toBe(400);
    }
  });

  it('a mutation in a cached document is never run as a query', async () => {
    const before = (await gql({ query: MIXED, operationName: 'Page', variables: { l: 100 } })).body.data.groups.size;
    for (let i = 0; i < REPEATS; i++) {
      // Served as a query (and so cached) first; the mutation of the same text still writes...
      await gql({ query: MIXED, operationName: 'Fixed' });
      const made = await gql({ query: MIXED, operationName: 'Make', variables: { name: `Cached ${i}` } });
      expect(made.body).toEqual({ data: { createGroup: { name: `Cached ${i}` } } });
      // ... is refused over GET, which serves queries only ...
      const get = await app.http
        .get('/graphql')
        .query({ query: MIXED, operationName: 'Make', variables: JSON.stringify({ name: 'Never' }) })
        .set('X-API-Key', t.key)
        .set('Apollo-Require-Preflight', 'true');
      expect(get.status).toBe(405);
      // ... and a query of the same text is fine over GET.
      const read = await app.http
        .get('/graphql')
        .query({ query: MIXED, operationName: 'Fixed' })
        .set('X-API-Key', t.key)
        .set('Apollo-Require-Preflight', 'true');
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ data: { groups: { limit: 2 } } });
    }
    const after = (await gql({ query: MIXED, operationName: 'Page', variables: { l: 100 } })).body.data.groups.size;
    expect(after).toBe(before + REPEATS);
    // With an Idempotency-Key the mutation of the mixed document is idempotent: one effect, then the replay.
    const body = { query: MIXED, operationName: 'Make', variables: { name: 'Once' } };
    const a = await gql(body, { 'Idempotency-Key': 'mixed-doc-1' });
    const b = await gql(body, { 'Idempotency-Key': 'mixed-doc-1' });
    expect(a.body).toEqual({ data: { createGroup: { name: 'Once' } } });
    expect(b.body).toEqual(a.body);
    expect(b.headers['idempotent-replayed']).toBe('true');
  });

  it('an automatic persisted query: registered with its text, then sent by its hash alone, answers the same', async () => {
    const query = '{ groups(limit: 2) { limit } }';
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const mismatched = await gql({ query: '{ groups(limit: 4) { limit } }', extensions: { persistedQuery: { version: 1, sha256Hash: 'f'.repeat(64) } } });
    expect(mismatched.body.errors[0].extensions.code).toBe('BAD_REQUEST'); // a hash that is not its text's
    const registered = await gql({ query, extensions });
    expect(registered.body).toEqual({ data: { groups: { limit: 2 } } });
    for (let i = 0; i < REPEATS; i++) {
      const byHash = await gql({ extensions });
      expect(byHash.status).toBe(200);
      expect(byHash.body).toEqual(registered.body);
    }
  });

  it('the compiled documents are bounded: the least recently used go first', async () => {
    const max = 3;
    const execution = jitExecution(buildSchema(), max);
    const server = new ApolloServer<BaseContext>({
      gateway: execution.gateway,
      plugins: [{ requestDidStart: async () => ({ responseForOperation: execution.respond as never }) }],
    });
    await server.start();
    try {
      for (let i = 0; i < 10; i++) {
        for (let n = 0; n < 3; n++) {
          const res = await server.executeOperation({ query: `{ a${i}: __typename }` });
          expect(res.body.kind === 'single' && res.body.singleResult).toEqual({ data: { [`a${i}`]: 'Query' } });
        }
        expect(execution.kept()).toBeLessThanOrEqual(max);
      }
      expect(execution.kept()).toBe(max);
    } finally {
      await server.stop();
    }
  });
});
