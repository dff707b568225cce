import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';

/**
 * /graphql executes through graphql-jit (src/graphql/jit.ts) and the REST routes run their
 * documents compiled at boot (src/rest/compile.ts): what a client sees must be what graphql-js
 * would answer. The same requests against a service with GRAPHQL_JIT=false must answer the same.
 */
let jit: TestApp;
let plain: TestApp;
let t: Tenant;
let u: Tenant;

beforeAll(async () => {
  [jit, plain] = await Promise.all([startTestApp(), startTestApp({ GRAPHQL_JIT: 'false' })]);
  [t, u] = await Promise.all([jit.tenant(), plain.tenant()]);
});
afterAll(() => Promise.all([jit?.close(), plain?.close()]));

const gql = (app: TestApp, tenant: Tenant, body: object) => app.http.post('/graphql').set('X-API-Key', tenant.key).send(body);

/** Ids and timestamps differ between the two services; the shape must not. */
const shape = (body: unknown) =>
  JSON.parse(JSON.stringify(body).replace(/"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"/g, '"<id>"').replace(/"\d{4}-\d\d-\d\dT[^"]+"/g, '"<time>"'));

describe('GraphQL execution through graphql-jit', () => {
  it('answers queries, mutations and errors exactly as graphql-js does', async () => {
    const requests = [
      { query: 'mutation M($name: String!) { createGroup(input: { name: $name, externalId: "jit-1" }) { id name externalId membershipCount } }', variables: { name: 'Jit' }, operationName: 'M' },
      { query: '{ groups(limit: 5) { results { name externalId membershipCount state } limit size hasNextPage } }' },
      { query: '{ group(ref: { id: "00000000-0000-4000-8000-000000000000" }) { id name } }' },
      { query: 'query Two { a: groups(limit: 1) { size } b: groups(limit: 2) { size } } query Other { groups { size } }', operationName: 'Two' },
      { query: 'mutation { createGroup(input: { name: "Twin", externalId: "jit-1" }) { id } }' },
      { query: 'query($l: Int) { groups(limit: $l) { size } }', variables: { l: 'many' } },
      // A required input field with a default, left out: graphql-jit 0.8.9 refused it once compiled (patched).
      { query: 'query($s: [GroupSort!]) { groups(sort: $s) { results { name } } }', variables: { s: [{ field: 'name' }] } },
      // A list for an input object: graphql-jit 0.8.9 took it for an object with no fields (patched).
      { query: 'query($s: [GroupSort!]) { groups(sort: $s) { results { name } } }', variables: { s: [[]] } },
    ];
    for (const body of requests) {
      for (let i = 0; i < 3; i++) {
        // three times: graphql-js's answer first, then the document compiled on its second
        // sight, then the compiled document kept in the LRU
        const [a, b] = await Promise.all([gql(jit, t, body), gql(plain, u, body)]);
        expect(a.status, JSON.stringify(body)).toBe(b.status);
        if (body.query.startsWith('mutation M') && i > 0) continue; // the repeats are a 409 on both
        expect(shape(a.body), JSON.stringify(body)).toEqual(shape(b.body));
      }
    }
    const missing = await gql(jit, t, requests[2]);
    expect(missing.body.errors[0]).toMatchObject({ path: ['group'], locations: [{ line: 1, column: 3 }], extensions: { code: 'NOT_FOUND' } });
  });
});
