import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { countSql } from '../helpers/sql-count';

let app: TestApp;
let t: Tenant;
beforeAll(async () => {
  app = await startTestApp({ CORS_ORIGINS: 'https://app.example.org', GRAPHQL_MAX_DEPTH: '4', GRAPHQL_MAX_COST: '500' });
  t = await app.tenant();
});
afterAll(() => app.close());

const gql = (body: unknown) => app.http.post('/graphql').set('X-API-Key', t.key).send(body as object);

describe('GraphQL abuse limits', () => {
  it('rejects documents nested deeper than the limit before running them', async () => {
    expect((await gql({ query: '{ groups { results { id } } }' })).body.data.groups.results).toEqual([]);
    const withinLimit = await gql({ query: '{ groups { results { id } } groups2: groups { results { __typename } } } ' });
    expect(withinLimit.body.errors).toBeUndefined();
    const app2 = await startTestApp({ GRAPHQL_MAX_DEPTH: '2' });
    try {
      const t2 = await app2.tenant();
      const res = await app2.http.post('/graphql').set('X-API-Key', t2.key).send({ query: '{ groups { results { id } } }' });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toMatch(/^Query depth limit of 2 exceeded, found 3/);
      expect(res.body.data).toBeUndefined();
    } finally {
      await app2.close();
    }
  });

  it('counts depth through fragments', async () => {
    const app2 = await startTestApp({ GRAPHQL_MAX_DEPTH: '2' });
    try {
      const t2 = await app2.tenant();
      const res = await app2.http
        .post('/graphql')
        .set('X-API-Key', t2.key)
        .send({ query: '{ ...Q } fragment Q on Query { groups { results { id } } }' });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toMatch(/depth limit of 2 exceeded, found 3/);
    } finally {
      await app2.close();
    }
  });

  it('rejects documents whose estimated cost is over the limit', async () => {
    const res = await gql({ query: '{ groups(limit: 100) { results { id name about color state } } }' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/cost \d+ exceeds the maximum of 500/);
    const cheap = await gql({ query: '{ groups(limit: 10) { results { id name } } }' });
    expect(cheap.body.errors).toBeUndefined();
  });

  it('does not accept batched operations', async () => {
    const res = await gql([{ query: '{ groups { size } }' }, { query: '{ groups { size } }' }]);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.js/);
  });

  it('reports no stack traces or internals for malformed documents', async () => {
    for (const query of ['{', '{ nope }', 'query($x: Int!) { groups(limit: $x) { size } }', '{ groups(limit: "x") { size } }']) {
      const res = await gql({ query });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toBeTruthy();
      expect(JSON.stringify(res.body)).not.toMatch(/stacktrace|\.ts:|node_modules|SELECT /i);
    }
  });
});

describe('GraphQL amplification limits (graphql-armor and the root-field rule)', () => {
  const aliased = (n: number, field = 'groups { results { id } }') => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;

  /** A 400 naming `limit`, answered before any resolver ran: no SQL reached the ORM. */
  async function rejected(body: unknown, limit: RegExp) {
    const sql = countSql(app.runtime);
    try {
      const res = await gql(body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors[0].message).toMatch(limit);
      expect(sql.count('orm')).toBe(0);
    } finally {
      sql.stop();
    }
  }

  it('hundreds of aliases of one root list field are refused as one document (aliases limit; 1,000 is over the token limit)', async () => {
    await rejected({ query: aliased(400) }, /^Aliases limit of 15 exceeded, found 400/);
    await rejected({ query: aliased(1000) }, /5000 tokens/);
  });

  it('aliases count everywhere, through fragments too', async () => {
    const frag = `fragment F on GroupPage { ${Array.from({ length: 16 }, (_, i) => `s${i}: size`).join(' ')} }`;
    await rejected({ query: `{ groups { ...F } } ${frag}` }, /Aliases limit of 15 exceeded, found 16/);
  });

  it('root fields count by response name, also without aliases beyond the alias limit', async () => {
    const small = await startTestApp({ GRAPHQL_MAX_ROOT_FIELDS: '2' });
    try {
      const t2 = await small.tenant();
      const res = await small.http.post('/graphql').set('X-API-Key', t2.key).send({ query: '{ groups { size } members { size } additionalFields { size } }' });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toMatch(/^Root fields limit of 2 exceeded, found 3/);
      const two = await small.http.post('/graphql').set('X-API-Key', t2.key).send({ query: '{ groups { size } members { size } groups { size } }' });
      expect(two.body.errors).toBeUndefined();
    } finally {
      await small.close();
    }
  });

  it('directives and tokens are bounded', async () => {
    const many = Array.from({ length: 21 }, () => '@include(if: true)').join(' ');
    await rejected({ query: `{ groups ${many} { size } }` }, /Directives limit of 20 exceeded, found 21/);
    const long = `{ groups { ${Array.from({ length: 6000 }, () => 'size').join(' ')} } }`;
    await rejected({ query: long }, /5000 tokens/);
  });

  it('a subscription operation over HTTP is a 400 pointing to graphql-ws', async () => {
    await rejected({ query: 'subscription { events { id } }' }, /Subscriptions are offered over WebSocket only \(the graphql-ws protocol on \/graphql\)/);
  });
});

describe('HTTP hardening', () => {
  it('sends security headers and no x-powered-by', async () => {
    const res = await app.http.get('/health');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBeDefined();
    expect(res.headers).not.toHaveProperty('x-powered-by');
  });

  it('allows only configured CORS origins and exposes the rate-limit headers', async () => {
    const ok = await app.http.get('/api/v1/groups').set('Origin', 'https://app.example.org').set('X-API-Key', t.key);
    expect(ok.headers['access-control-allow-origin']).toBe('https://app.example.org');
    expect(ok.headers['access-control-expose-headers']).toContain('X-RateLimit-Remaining');
    const preflight = await app.http
      .options('/api/v1/groups')
      .set('Origin', 'https://app.example.org')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'x-api-key,content-type');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/X-API-Key/i);
    const foreign = await app.http.get('/api/v1/groups').set('Origin', 'https://evil.example').set('X-API-Key', t.key);
    expect(foreign.headers).not.toHaveProperty('access-control-allow-origin');
  });

  it('answers unknown routes with a 404 problem', async () => {
    const res = await app.http.get('/nope');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    const v1 = await app.http.get('/api/v1/nope').set('X-API-Key', t.key);
    expect(v1.status).toBe(404);
    expect(v1.headers['x-ratelimit-limit']).toBe('1000');
  });

  it('serves the Apollo Sandbox page on GET /graphql for browsers, with introspection', async () => {
    const res = await app.http.get('/graphql').set('Accept', 'text/html');
    expect(res.status).toBe(200);
    expect(res.text).toContain('src="/graphql/ide/loader.js"');
    const loader = await app.http.get('/graphql/ide/loader.js').expect(200);
    expect(loader.text).toMatch(/embeddable-sandbox/i);
    expect(loader.text).toMatch(/graphiql\.min\.js/);
    const intro = await app.http.post('/graphql').send({ query: '{ __schema { queryType { name } } }' });
    expect(intro.body.data.__schema.queryType.name).toBe('Query');
  });

  it('GRAPHQL_SANDBOX=false also hides field suggestions, which would reveal the schema', async () => {
    const off = await startTestApp({ GRAPHQL_SANDBOX: 'false' });
    try {
      const t2 = await off.tenant();
      const res = await off.http.post('/graphql').set('X-API-Key', t2.key).send({ query: '{ grou { size } }' });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toBe('Cannot query field "grou" on type "Query".');
      const on = await gql({ query: '{ grou { size } }' });
      expect(on.body.errors[0].message).toMatch(/Did you mean "group"/);
    } finally {
      await off.close();
    }
  });

  it('GRAPHQL_SANDBOX=false turns off both the Sandbox page and introspection', async () => {
    const off = await startTestApp({ GRAPHQL_SANDBOX: 'false' });
    try {
      const page = await off.http.get('/graphql').set('Accept', 'text/html');
      expect(page.text).not.toMatch(/loader\.js/i);
      expect((await off.http.get('/graphql/ide/loader.js')).status).not.toBe(200);
      const intro = await off.http.post('/graphql').send({ query: '{ __schema { queryType { name } } }' });
      expect(intro.body.errors[0].message).toMatch(/introspection/i);
    } finally {
      await off.close();
    }
  });
});
