import type { Server } from 'node:http';
import zlib, { gzipSync } from 'node:zlib';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/rest/routes';
import { listen } from '../../src/runtime';
import { nulIssues } from '../../src/graphql/nul-check';
import { tooDeep } from '../../src/common/json-depth';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { snapshot } from '../helpers/fuzz';
import { rawRequest } from '../helpers/raw-request';

/**
 * Every class of 5xx or INTERNAL_SERVER_ERROR an outside stateful fuzzer (and then our own,
 * test/platform/model-fuzz.test.ts) found, each kept as a test named after its class.
 */
let app: TestApp;
let t: Tenant;
let server: Server;
let port: number;

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant({ rateLimitPerHour: 10_000_000 });
  server = await listen(app.runtime.app, 0);
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await app.close();
});

const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  rawRequest(port, {
    method,
    path,
    headers: { 'x-api-key': t.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });

const deep = (n: number, inner = '') => '['.repeat(n) + inner + ']'.repeat(n);

describe('malformed percent-encoding in a query parameter', () => {
  it('is a 400 problem+json naming the parameter, name or value, and changes nothing (it was read as U+FFFD: ?q=%FF searched for it)', async () => {
    for (const bad of ['%FF', '%zz', '%', '%E0%A4%A', '%ED%A0%80', 'a%2']) {
      for (const [url, name] of [
        [`/api/v1/groups?q=${bad}`, 'q'],
        [`/api/v1/members?limit=5&fields=${bad}`, 'fields'],
        [`/api/v1/groups?sort=name&x${bad}=1`, 'x'],
      ] as const) {
        const res = await send('GET', url);
        expect(res.status, `${url}: ${res.text}`).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body.errors?.[0]?.pointer, url).toMatch(new RegExp(`^#/query/${name}`));
      }
    }
    const post = await send('POST', '/api/v1/groups?key=%FF', { name: 'never' });
    expect(post.status, post.text).toBe(400);
    expect((await send('GET', '/api/v1/groups?q=never')).body.results).toEqual([]);
    // Well-formed encodings, plus signs and bare names pass.
    for (const url of ['/api/v1/groups?q=%C3%A9t%C3%A9', '/api/v1/groups?q=a+b', '/api/v1/groups?q=100%25', '/api/v1/groups?flag&q=x']) {
      expect((await send('GET', url)).status, url).toBe(200);
    }
  });
});

describe('malformed percent-encoding in a path parameter', () => {
  const MALFORMED = ['%zz', '%', '%E0%A4%A', '%C0%AE%C0%AE', '%ED%A0%80', 'a%2', '%%'];
  const paramRoutes = [...new Set(routes.filter((r) => r.path.includes(':')).map((r) => r.path))];

  it('is a 400 problem+json naming the parameter, on every route with a parameter and every method', async () => {
    for (const path of paramRoutes) {
      const params = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);
      for (const target of params) {
        for (const bad of MALFORMED) {
          const url = '/api/v1' + path.replace(/:(\w+)/g, (_, name: string) => (name === target ? bad : 'x'));
          for (const method of ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD']) {
            const res = await send(method, url);
            expect(res.status, `${method} ${url}: ${res.text}`).toBe(400);
            if (method === 'HEAD') continue;
            expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
            expect(res.body.errors).toContainEqual({ pointer: `#/path/${target}`, detail: expect.stringContaining(target) });
          }
        }
      }
    }
  });

  it('outside a parameter (a fixed word, or no route) is a 404, never a 5xx', async () => {
    for (const url of ['/api/v1/%zz', '/api/v1/groups/x/%zz', '/api/v1/groups/x/memberships/%zz/y', '/%zz', '/graphql/%zz']) {
      const res = await send('GET', url);
      expect(res.status, `${url}: ${res.text}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${url}: ${res.text}`).toBeLessThan(500);
    }
  });

  it('well-formed encodings still reach the route: an encoded dot segment or slash is an id that matches nothing (404)', async () => {
    for (const id of ['%2e%2e', '%2E', '..%2F..', '%2F', 'a'.repeat(5000), '%F0%9F%98%80']) {
      const res = await send('GET', `/api/v1/groups/${id}`);
      expect(res.status, `${id}: ${res.text}`).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });
});

describe('deeply nested GraphQL documents', () => {
  it('a document nested deeper than JSON_MAX_DEPTH is a 400 GRAPHQL_PARSE_FAILED naming the limit, however deep (graphql-js would overflow its stack)', async () => {
    for (const n of [65, 2_400, 100_000]) {
      for (const query of [`{ groups(limit: 1, sort: ${deep(n, 'x')}) { size } }`, `{ groups(limit: 1) ${'{ size '.repeat(n)}${'}'.repeat(n)} }`]) {
        const res = await send('POST', '/graphql', { query });
        expect(res.status, `${n}`).toBe(400);
        expect(res.body).toEqual({
          errors: [{ message: 'The document nests brackets, braces or parentheses more than 64 levels deep (JSON_MAX_DEPTH).', extensions: { code: 'GRAPHQL_PARSE_FAILED' } }],
        });
      }
    }
    const get = await send('GET', `/graphql?query=${encodeURIComponent(`{ groups(limit: 1, sort: ${deep(65, 'x')}) { size } }`)}`, undefined, { 'apollo-require-preflight': 'true' });
    expect(get.status).toBe(400);
    expect(get.text).toContain('more than 64 levels deep');
  });

  it('brackets inside strings, block strings and comments do not count; 64 levels are judged by the usual rules', async () => {
    // Counted, these would nest 180 levels: the check must skip them.
    const inString = '['.repeat(20) + '{'.repeat(20) + '('.repeat(20);
    const document = [
      `{ groups(limit: 1, filter: { q: ${JSON.stringify(inString)} }) { size }`,
      `# ${inString}`,
      `  g2: groups(limit: 1, filter: { q: """${inString.slice(0, 30)} \\""" ${inString.slice(30)}""" }) { size } }`,
    ].join('\n');
    const ok = await send('POST', '/graphql', { query: document });
    expect(ok.status, ok.text).toBe(200);
    const at = await send('POST', '/graphql', { query: `{ groups(limit: 1, sort: ${deep(62, 'x')}) { size } }` });
    expect(at.status).toBe(400);
    expect(at.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});

describe('deeply nested JSON', () => {
  it('10,000 levels in any field of any JSON body route: 400 naming the limit, nothing written', async () => {
    const before = await snapshot(app, t.communityId);
    const bodyRoutes = routes.filter((r) => r.body);
    for (const route of bodyRoutes) {
      const url = '/api/v1' + route.path.replace(/:(\w+)/g, 'x');
      for (const raw of [
        `{"name":"x","about":${deep(10_000)}}`,
        `{"members":[{"externalId":"a","firstName":${deep(10_000)}}],"groups":[{"externalId":"a","name":${deep(10_000)}}],"groupMemberships":[{"title":${deep(10_000)}}]}`,
        deep(10_000),
        `{"a":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
      ]) {
        const res = await send(route.method, url, raw);
        expect(res.status, `${route.method} ${url}: ${res.text.slice(0, 300)}`).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body.detail).toMatch(/nesting exceeds the limit of 64 levels \(JSON_MAX_DEPTH\)/);
        expect(res.body.errors[0].pointer).toMatch(/^\//);
      }
    }
    expect(await snapshot(app, t.communityId)).toBe(before);
  });

  it('a body as deep as the limit is judged on its fields; one level more is refused for its depth', async () => {
    const at = await send('POST', '/api/v1/groups', `{"name":"x","about":${deep(63)}}`);
    expect(at.status).toBe(400);
    expect(at.body.detail).not.toMatch(/JSON_MAX_DEPTH/);
    expect(at.body.errors).toContainEqual({ pointer: '/about', detail: expect.any(String) });
    const over = await send('POST', '/api/v1/groups', `{"name":"x","about":${deep(64)}}`);
    expect(over.status).toBe(400);
    expect(over.body.detail).toMatch(/JSON_MAX_DEPTH/);
    expect(over.body.errors[0].pointer).toBe('/about' + '/0'.repeat(63));
  });

  it('in GraphQL variables (and extensions): 400 naming the limit, never INTERNAL_SERVER_ERROR', async () => {
    const query = 'mutation($input: CreateGroupInput!) { createGroup(input: $input) { id } }';
    for (const raw of [
      `{"query":${JSON.stringify(query)},"variables":{"input":{"name":"x","about":${deep(10_000)}}}}`,
      `{"query":"{ groups { size } }","variables":{"x":${deep(10_000)}}}`,
      `{"query":"{ groups { size } }","extensions":{"x":${deep(10_000)}}}`,
    ]) {
      const res = await send('POST', '/graphql', raw);
      expect(res.status, res.text.slice(0, 300)).toBe(400);
      expect(res.text).not.toMatch(/INTERNAL_SERVER_ERROR/);
      expect(res.body.detail).toMatch(/JSON_MAX_DEPTH/);
    }
  });

  it('the walks over client values are iterative: 100,000 levels neither overflow the stack nor stop', () => {
    const value = JSON.parse(deep(100_000, '"\\u0000"'));
    expect(tooDeep(value, 64)).toHaveLength(64);
    const issues = nulIssues(undefined, { input: value });
    expect(issues).toHaveLength(1);
    expect(issues[0].path).toHaveLength(100_001);
  });
});

describe('GraphQL documents of unexpected shapes', () => {
  it('a body that is JSON but no object (null, a string, a number): 400 problem+json saying so, as on REST (it said "not valid JSON")', async () => {
    for (const body of ['null', '"query"', '1', 'true']) {
      for (const path of ['/graphql', '/api/v1/groups']) {
        const res = await send('POST', path, body);
        expect(res.status, `${path} ${body}`).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body.detail, `${path} ${body}`).toMatch(/^The body must (be a JSON object|not be null)$/);
      }
    }
    expect((await send('POST', '/graphql', '{"query":')).body.detail).toBe('The request body is not valid JSON');
  });

  it('an operationName the document does not define: 400 OPERATION_RESOLUTION_FAILURE, also once compiled', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await send('POST', '/graphql', { query: 'query A { groups { size } }', operationName: 'Z' });
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ message: 'Unknown operation named "Z".', extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } });
    }
  });

  it('an operationName of "" (or any) once the document\'s only operation is compiled: 400, and the mutation does not run', async () => {
    // Found by the model fuzz (seed 988332751): sent twice without a name, the document was compiled
    // under the key a "" name shared, so `operationName: ""` ran the mutation and Apollo Server answered 500.
    const MAKE = 'mutation ($name: String!) { createGroup(input: { name: $name }) { name } }';
    for (let i = 0; i < 3; i++) expect((await send('POST', '/graphql', { query: MAKE, variables: { name: `Only ${i}` } })).status).toBe(200);
    const size = async () => (await send('POST', '/graphql', { query: '{ groups(limit: 1) { size } }' })).body.data.groups.size as number;
    const before = await size();
    for (const operationName of ['', ' ', 'Make']) {
      for (let i = 0; i < 3; i++) {
        const res = await send('POST', '/graphql', { query: MAKE, operationName, variables: { name: 'Never' } });
        expect(res.status, `${JSON.stringify(operationName)}: ${res.text}`).toBe(400);
        expect(res.body.errors[0].extensions.code).toBe('OPERATION_RESOLUTION_FAILURE');
      }
    }
    expect(await size()).toBe(before);
  });

  it('a persisted-query hash that does not match its document: 400 BAD_REQUEST, not INTERNAL_SERVER_ERROR', async () => {
    const res = await send('POST', '/graphql', { query: '{ groups { size } }', extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  });
});

describe('a body whose Content-Encoding does not match its bytes', () => {
  it('gzip, deflate, br or zstd over plain or empty bytes: 400 problem+json naming the body, on REST and /graphql', async () => {
    // zstd: body-parser inflates it where node:zlib has it (Node 22.15 and later); its errors were "could not be read"
    for (const encoding of ['gzip', 'deflate', 'br', ...('zstdDecompress' in zlib ? ['zstd'] : [])]) {
      // Zero bytes are no zstd frame, yet Node 22's zstd reads them as an empty body (then a 400 naming what is missing).
      for (const body of encoding === 'zstd' ? ['{"name":"x"}'] : ['', '{"name":"x"}']) {
        for (const path of ['/api/v1/groups', '/graphql']) {
          const res = await send('POST', path, body, { 'content-type': 'application/json', 'content-encoding': encoding });
          expect(res.status, `${encoding} ${path}: ${res.text}`).toBe(400);
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(res.body.errors).toEqual([{ pointer: '/', detail: expect.stringMatching(/decompressed/) }]);
        }
      }
    }
  });

  it('a body that is what its Content-Encoding says is read, zstd included where Node has it', async () => {
    const body = Buffer.from('{"name":"compressed"}');
    const ways: [string, (b: Buffer) => Buffer][] = [
      ['gzip', zlib.gzipSync],
      ['deflate', zlib.deflateSync],
      ['br', zlib.brotliCompressSync],
      ...('zstdCompressSync' in zlib ? [['zstd', (zlib as unknown as { zstdCompressSync: (b: Buffer) => Buffer }).zstdCompressSync] as [string, (b: Buffer) => Buffer]] : []),
    ];
    for (const [encoding, compress] of ways) {
      const res = await send('POST', '/api/v1/groups', compress(body), { 'content-type': 'application/json', 'content-encoding': encoding });
      expect(res.status, `${encoding}: ${res.text}`).toBe(201);
    }
  });
});

describe('a body that is not the UTF-8 it is read as', () => {
  // Bytes that are no UTF-8: a lone continuation byte, a byte never used, an overlong `.`, a
  // truncated sequence, an encoded surrogate (U+D800). Decoded as they came they became U+FFFD
  // and were stored with a 201.
  const BAD = [Buffer.from([0x80]), Buffer.from([0xff, 0xfe]), Buffer.from([0xc0, 0xae]), Buffer.from([0xe2, 0x82]), Buffer.from([0xed, 0xa0, 0x80])];
  const json = (bytes: Buffer, before: string, after: string) => Buffer.concat([Buffer.from(before), bytes, Buffer.from(after)]);
  const notUtf8 = [{ pointer: '/', detail: 'The request body is not valid UTF-8' }];

  it('JSON on REST and /graphql, gzipped or not, and a CSV import: 400 problem+json naming the body, nothing written', async () => {
    const before = await snapshot(app, t.communityId);
    const query = 'mutation($input: CreateGroupInput!) { createGroup(input: $input) { id } }';
    for (const bytes of BAD) {
      for (const [path, body] of [
        ['/api/v1/groups', json(bytes, '{"name":"x', '"}')],
        ['/api/v1/members/_bulk', json(bytes, '{"members":[{"firstName":"a","lastName":"', '"}]}')],
        ['/graphql', json(bytes, `{"query":${JSON.stringify(query)},"variables":{"input":{"name":"x`, '"}}}')],
      ] as const) {
        for (const encoding of ['identity', 'gzip']) {
          const sent = encoding === 'gzip' ? gzipSync(body) : body;
          const res = await send('POST', path, sent, encoding === 'gzip' ? { 'content-encoding': 'gzip' } : {});
          expect(res.status, `${path} ${encoding} ${bytes.toString('hex')}: ${res.text}`).toBe(400);
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(res.body.errors).toEqual(notUtf8);
        }
      }
      const csv = await send('POST', '/api/v1/triggers/members/import', json(bytes, 'externalId,firstName\nx1,Ren', '\n'), { 'content-type': 'text/csv' });
      expect(csv.status, csv.text).toBe(400);
      expect(csv.body.errors).toEqual(notUtf8);
    }
    expect(await snapshot(app, t.communityId)).toBe(before);
  });

  it('valid UTF-8 of every length, and a CSV whose charset names another encoding, are taken as they are', async () => {
    const ok = await send('POST', '/api/v1/groups', Buffer.from('{"name":"Zoë ∑ 🎉"}'));
    expect(ok.status, ok.text).toBe(201);
    expect((await send('GET', `/api/v1/groups/${ok.body.id}`)).body.name).toBe('Zoë ∑ 🎉');
    // ISO-8859-1 bytes (é is 0xE9) are not UTF-8, and are read as the charset says.
    const latin1 = await send('POST', '/api/v1/triggers/members/import', Buffer.from('externalId,firstName\nutf8-latin1,Ren\xe9\n', 'latin1'), {
      'content-type': 'text/csv; charset=iso-8859-1',
    });
    expect(latin1.status, latin1.text).toBe(202);
  });
});

describe('unpaired surrogates in a string', () => {
  it('a lone \\uD800 or \\uDC00 in a REST body or a GraphQL variable: 400 naming the field, nothing written', async () => {
    const before = await snapshot(app, t.communityId);
    for (const escape of ['\\ud800', '\\udc00', 'a\\ud83d', '\\ude00b']) {
      const res = await send('POST', '/api/v1/groups', `{"name":"x${escape}"}`);
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors).toEqual([{ pointer: '/name', detail: expect.stringMatching(/unpaired surrogate/) }]);
      const members = await send('POST', '/api/v1/members/_bulk', `{"members":[{"firstName":"a","lastName":"b"},{"firstName":"x${escape}","lastName":"b"}]}`);
      expect(members.status, members.text).toBe(400);
      expect(members.body.errors).toEqual([{ pointer: '/members/1/firstName', detail: expect.stringMatching(/unpaired surrogate/) }]);
      const query = 'mutation($input: CreateGroupInput!) { createGroup(input: $input) { id } }';
      const gql = await send('POST', '/graphql', `{"query":${JSON.stringify(query)},"variables":{"input":{"name":"x${escape}"}}}`);
      expect(gql.status, gql.text).toBe(400);
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION', errors: [{ path: ['input', 'name'] }] });
    }
    // A well-formed pair (an emoji) is text like any other.
    const ok = await send('POST', '/api/v1/groups', '{"name":"x\\ud83d\\ude00"}');
    expect(ok.status, ok.text).toBe(201);
    const read = await send('GET', `/api/v1/groups/${ok.body.id}`);
    expect(read.body.name).toBe('x😀');
    expect(before).not.toBe(await snapshot(app, t.communityId));
  });
});
