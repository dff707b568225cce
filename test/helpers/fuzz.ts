import net from 'node:net';
import { isUtf8 } from 'node:buffer';
import { gzipSync } from 'node:zlib';
import type { Server } from 'node:http';
import fc from 'fast-check';
import { isInputObjectType, isObjectType } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildSchema } from '../../src/graphql/schema';
import { routes } from '../../src/rest/routes';
import { listen } from '../../src/runtime';
import { startTestApp, type TestApp, type Tenant } from './app';
import { rawHttp } from './process';
import { rawRequest } from './raw-request';

/** Internal names that must never reach a client: schema type names, SQL, stack frames. */
const internalTypeNames = Object.values(buildSchema().getTypeMap())
  .filter((t) => !t.name.startsWith('__') && (isInputObjectType(t) || isObjectType(t)) && t.name.length > 6)
  .map((t) => t.name)
  .filter((n) => !['Query', 'Mutation'].includes(n))
  // Compound names only (GroupMembership, CreateGroupInput): a plain word such as Community is English in a detail.
  .filter((n) => /^[A-Z][a-z0-9]+[A-Z]/.test(n));
export const LEAK = new RegExp(
  [
    '\\bat [\\w.<>]+ \\(',
    '\\.ts:\\d+',
    'node_modules',
    '\\bselect\\b.+\\bfrom\\b',
    '\\binsert into\\b',
    '\\bviolates\\b',
    'syntax error at',
    'MikroORM',
    'Cannot query field',
    `\\b(${internalTypeNames.join('|')})\\b`,
  ].join('|'),
  'i',
);

export const weird = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.constantFrom('', ' ', '\u0000', '%00', '..', '../..', 'null', 'undefined', '-1', '1e309', '__proto__', 'constructor', "' or 1=1 --", '<script>', 'a'.repeat(5000)),
  fc.uuid(),
  fc.integer().map(String),
);

export const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc.dictionary(fc.constantFrom('name', 'externalId', 'about', 'color', 'isVisibleInApp', 'title', 'memberId', 'memberExternalId', 'firstName', 'lastName', 'emailAddress', 'type', 'orderNumber', 'icon', 'placeholder', 'groupMemberships', 'members', 'order', 'id', 'state', 'additionalFields', 'message', 'memberIds', 'sendAt', 'groups', '__proto__'), fc.oneof(fc.jsonValue(), weird, fc.array(fc.jsonValue(), { maxLength: 3 }), fc.constant(Number.MAX_SAFE_INTEGER), fc.constant(-1), fc.constant(null))),
  fc.array(fc.jsonValue(), { maxLength: 5 }),
);

/**
 * One request over the route table with hostile parameters, query, body and key (the metrics
 * test sends 10,000 of them to bound the series count).
 */
export const requestArb = fc.record({
  route: fc.constantFrom(...routes),
  params: fc.array(weird, { minLength: 2, maxLength: 2 }),
  query: fc.dictionary(fc.constantFrom('limit', 'skip', 'sort', 'key', 'groupsKey', 'q', 'emailAddress', 'x', 'api_key'), weird, { maxKeys: 4 }),
  body: fc.oneof(
    jsonish.map((v) => ({ type: 'application/json', text: JSON.stringify(v) ?? 'null' })),
    fc.string().map((s) => ({ type: 'application/json', text: s })),
    fc.string().map((s) => ({ type: 'text/plain', text: s })),
    fc.string().map((s) => ({ type: 'text/csv', text: `externalId,name\n${s}` })),
    fc.constant({ type: 'application/json', text: '{"name": "' + 'x'.repeat(1_100_000) + '"}' }),
    fc.constant(undefined),
  ),
  keyHeader: fc.constantFrom('valid', 'valid', 'valid', 'valid', 'garbage', 'none'),
});

/** A digest of everything a community owns: a rejected write must leave it unchanged. */
export async function snapshot(app: TestApp, communityId: string): Promise<string> {
  const { rows: tables } = await app.runtime.pool.query(
    // api_keys: not written by requests, except lastUsedAt, which any authenticated request notes (docs/security.md).
    `select table_name from information_schema.columns where column_name = 'community_id' and table_schema = 'public' and table_name <> 'api_keys' order by table_name`,
  );
  const parts = tables.map(
    ({ table_name }: { table_name: string }) =>
      `(select coalesce(md5(string_agg(t::text, ',' order by t::text)), '') from "${table_name}" t where community_id = $1)`,
  );
  parts.push(`(select coalesce(md5(string_agg(v::text, ',' order by v::text)), '') from member_field_values v join members m on m.id = v.member_id where m.community_id = $1)`);
  const { rows } = await app.runtime.pool.query(`select ${parts.join(" || '|' || ")} as digest`, [communityId]);
  return rows[0].digest;
}

/** Runs a property; on failure reports a short counterexample (bodies can be megabytes). */
async function check<T>(property: fc.IAsyncProperty<T>, params: fc.Parameters<T>) {
  const out = await fc.check(property, { ...params, endOnFailure: true });
  if (out.failed) {
    const example = JSON.stringify(out.counterexample, (_k, v) => (typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}…(${v.length})` : v));
    const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
    throw new Error(`fuzz failure (seed ${out.seed}, path ${out.counterexamplePath}):\n${cause.slice(0, 1500)}\ncounterexample: ${example.slice(0, 1500)}`);
  }
}

/** Hostile GraphQL documents of known shapes (the model fuzzer sends them too). */
export const docArb = fc.oneof(
  fc.string(),
  fc.constantFrom(
    '{',
    '{ groups { results { id } } ',
    'query { __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }',
    'fragment A on Query { ...B } fragment B on Query { ...A } { ...A }',
    `{ ${Array.from({ length: 300 }, (_, i) => `a${i}: groups { size }`).join(' ')} }`,
    '{ groups(limit: 2147483648) { size } }',
    'mutation { createGroup(input: { name: "" }) { id } }',
    'mutation { deleteGroup(ref: {}) }',
    'subscription { x }',
    `query ${'{ groups { results { id '.repeat(50)}${'} } '.repeat(50)}`,
  ),
);

/**
 * The seed of a fuzz run: `FUZZ_SEED` when given (to replay a failure), else `fallback`
 * (`npm test` passes a fixed one, so it is deterministic; the hardening run draws a new one).
 * Printed up front and in every failure message.
 */
export function fuzzSeed(label: string, fallback: number): number {
  const given = process.env.FUZZ_SEED;
  const seed = given !== undefined && given !== '' ? Number(given) : fallback;
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${given}`);
  console.log(`${label}: seed ${seed} (replay: FUZZ_SEED=${seed})`);
  return seed;
}

/* ---- Attack classes (resource governance): amplification, NUL, oversize HTTP, targets and hosts, methods ---- */

const ROOT_LISTS = ['groups { size }', 'members { size }', 'additionalFields { size }', 'importJobs { size }', 'notifications { size }'];
const BODY_FIELDS = ['name', 'externalId', 'about', 'title', 'firstName', 'lastName', 'emailAddress', 'placeholder', 'memberExternalId', 'message'];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function attackSuite(opts: { runs: number; timeoutMs: number; seed: number }) {
  let app: TestApp;
  let t: Tenant;
  let server: Server;
  let port: number;
  const params = { numRuns: opts.runs, seed: opts.seed };
  beforeAll(async () => {
    app = await startTestApp();
    t = await app.tenant({ rateLimitPerHour: 10_000_000 });
    await app.http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name: 'seed', externalId: 'seed' });
    server = await listen(app.runtime.app, 0);
    app.runtime.attach(server);
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await app.close();
  });

  it(`${opts.runs} alias and root-field amplifications: over a limit is a 400 naming it, nothing runs`, async () => {
    await check(
      fc.asyncProperty(fc.integer({ min: 1, max: 1500 }), fc.constantFrom(...ROOT_LISTS), async (n, field) => {
        const query = `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;
        const res = await app.http.post('/graphql').set('X-API-Key', t.key).send({ query });
        if (n <= 10) {
          expect(res.status, res.text.slice(0, 300)).toBe(200);
        } else {
          expect(res.status, res.text.slice(0, 300)).toBe(400);
          expect(res.body.data).toBeUndefined();
          expect(res.body.errors[0].message).toMatch(/Aliases limit|Root fields limit|tokens/);
        }
      }),
      params,
    );
  }, opts.timeoutMs);

  it(`${opts.runs} NUL characters in every string position (JSON, CSV, path, GraphQL): 400 naming the field, nothing changes`, async () => {
    const bodyRoutes = routes.filter((r) => r.body);
    await check(
      fc.asyncProperty(
        fc.constantFrom(...bodyRoutes),
        fc.constantFrom(...BODY_FIELDS),
        fc.string({ maxLength: 5 }),
        fc.constantFrom('json', 'nested', 'csv', 'path', 'graphql-variable', 'graphql-literal'),
        async (route, field, around, where) => {
          const nul = `${around}\u0000${around}`;
          const before = await snapshot(app, t.communityId);
          let res;
          if (where.startsWith('graphql')) {
            const literal = where === 'graphql-literal';
            const query = literal
              ? `mutation { createGroup(input: { name: ${JSON.stringify(nul)} }) { id } }`
              : 'mutation($input: CreateGroupInput!) { createGroup(input: $input) { id } }';
            res = await app.http.post('/graphql').set('X-API-Key', t.key).send({ query, variables: literal ? undefined : { input: { name: nul } } });
            expect(res.status, res.text.slice(0, 300)).toBe(400);
            expect(res.body.errors[0].extensions.errors[0].path).toEqual(['input', 'name']);
          } else {
            const path = '/api/v1' + route.path.replace(/:(\w+)/g, () => (where === 'path' ? encodeURIComponent(nul) : 'seed'));
            let req = app.http[route.method.toLowerCase() as 'post'](`${path}?key=externalId`).set('X-API-Key', t.key);
            if (where === 'csv' && route.csv) {
              // A column the file may have (an unknown one is refused at the header, before any cell is read).
              const column = route.csv.rows === 'groups' ? 'name' : 'firstName';
              req = req.set('Content-Type', 'text/csv').send(`externalId,${column}\r\nx,${nul.replace(/[",\r\n]/g, '')}\r\n`);
            } else {
              const value = where === 'nested' ? { groupMemberships: [{ [field]: nul }], members: [{ [field]: nul }], groups: [{ [field]: nul }] } : { [field]: nul };
              req = req.send(value);
            }
            res = await req;
            expect(res.status, `${route.method} ${path} ${where} -> ${res.text.slice(0, 300)}`).toBe(400);
            expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
            expect(res.body.errors.some((e: { detail: string }) => /U\+0000|NUL/.test(e.detail))).toBe(true);
          }
          expect(await snapshot(app, t.communityId)).toBe(before);
        },
      ),
      params,
    );
  }, opts.timeoutMs);

  it(`${opts.runs} bytes that are no UTF-8 in every string position (JSON, nested, CSV, /graphql), compressed or not: 400 naming the body, nothing changes`, async () => {
    const bodyRoutes = routes.filter((r) => r.body);
    // Each kind of ill-formed UTF-8, and random bytes that happen to be ill-formed.
    const badBytes = fc.oneof(
      fc.constantFrom(
        [0x80], [0xbf], [0xc0, 0xae], [0xc1, 0xbf], [0xe0, 0x80, 0xaf], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
        [0xf0, 0x82, 0x82, 0xac], [0xf4, 0x90, 0x80, 0x80], [0xf5], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xfe], [0xff],
      ),
      fc.uint8Array({ minLength: 1, maxLength: 6 }).map((b) => [...b]).filter((b) => !isUtf8(Buffer.from(b))),
    );
    const MARK = '\ue000'; // where the bytes go: a character no generated text holds
    await check(
      fc.asyncProperty(
        fc.constantFrom(...bodyRoutes),
        fc.constantFrom(...BODY_FIELDS),
        fc.string({ maxLength: 5 }).map((s) => s.replace(/\ue000/g, '')),
        badBytes,
        fc.constantFrom('json', 'nested', 'csv', 'graphql'),
        fc.boolean(),
        async (route, field, around, bytes, where, gzip) => {
          const before = await snapshot(app, t.communityId);
          let text: string;
          let type = 'application/json';
          let path = '/graphql';
          if (where === 'graphql') {
            text = JSON.stringify({ query: 'mutation($input: CreateGroupInput!) { createGroup(input: $input) { id } }', variables: { input: { name: `${around}${MARK}${around}` } } });
          } else {
            path = '/api/v1' + route.path.replace(/:(\w+)/g, 'seed') + '?key=externalId';
            if (where === 'csv' && route.csv) {
              type = 'text/csv';
              text = `externalId,${route.csv.rows === 'groups' ? 'name' : 'firstName'}\r\nx,${around.replace(/[",\r\n]/g, '')}${MARK}\r\n`;
            } else {
              const value = `${around}${MARK}${around}`;
              text = JSON.stringify(where === 'nested' ? { groupMemberships: [{ [field]: value }], members: [{ [field]: value }], groups: [{ [field]: value }] } : { [field]: value });
            }
          }
          const [head, ...rest] = text.split(MARK);
          const body = Buffer.concat([Buffer.from(head), ...rest.flatMap((part) => [Buffer.from(bytes), Buffer.from(part)])]);
          // Sent as bytes (supertest would send a Buffer with a JSON type as the JSON of the Buffer).
          const res = await rawRequest(port, {
            method: where === 'graphql' ? 'POST' : route.method,
            path,
            headers: { 'x-api-key': t.key, 'content-type': type, ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
            body: gzip ? gzipSync(body) : body,
          });
          expect(res.status, `${route.method} ${path} ${where} ${Buffer.from(bytes).toString('hex')} -> ${res.text.slice(0, 300)}`).toBe(400);
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(res.body.errors).toEqual([{ pointer: '/', detail: 'The request body is not valid UTF-8' }]);
          expect(await snapshot(app, t.communityId)).toBe(before);
        },
      ),
      params,
    );
  }, opts.timeoutMs);

  it(`${opts.runs} oversize request lines and headers: 431 problem+json; ordinary sizes pass the parser`, async () => {
    await check(
      fc.asyncProperty(fc.integer({ min: 1, max: 64 }), fc.boolean(), async (kib, inHeader) => {
        const filler = 'a'.repeat(kib * 1024);
        const request = inHeader
          ? `GET /health HTTP/1.1\r\nHost: x\r\nX-Filler: ${filler}\r\nConnection: close\r\n\r\n`
          : `GET /health?${filler} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
        const res = await rawHttp(port, request);
        if (kib < 15) {
          expect(res.status).toBe(200);
        } else if (kib > 17) {
          // Node's default maxHeaderSize is 16 KiB for the request line and headers together.
          expect(res.status).toBe(431);
          expect(res.head).toMatch(/content-type: application\/problem\+json/i);
          expect(JSON.parse(res.body)).toMatchObject({ status: 431, title: expect.any(String), detail: expect.any(String) });
        }
      }),
      params,
    );
  }, opts.timeoutMs);

  it(`${opts.runs} request targets, Host and Upgrade values (absolute form, any authority, any Host, none, two; any Upgrade): JSON or problem+json, links on one host, never 5xx`, async () => {
    // Visible ASCII and space, as a request line or a header value can carry them (Node's parser refuses the rest: 400).
    const text = (max: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: max });
    const authority = fc.oneof(text(30), fc.constantFrom('api.example.com', 'api.example.com:8443', '[::1]:1', '', 'a@b', 'h:99999', '%zz'));
    const target = fc.oneof(
      fc.constant('/api/v1/groups?limit=1'),
      fc.tuple(fc.constantFrom('http', 'https', 'HTTP', 'ftp'), authority, fc.constantFrom('/api/v1/groups?limit=1', '', '/x')).map(([scheme, auth, path]) => `${scheme}://${auth}${path}`),
    );
    const host = fc.oneof(fc.constant(undefined), fc.constant('x'), text(30), fc.tuple(text(10), text(10)));
    await check(
      fc.asyncProperty(target, host, fc.constantFrom('1.1', '1.0'), fc.constantFrom(undefined, 'h2c', 'websocket', 'WebSocket', 'TLS/1.2'), async (tgt, h, version, upgrade) => {
        const hosts = h === undefined ? '' : Array.isArray(h) ? `Host: ${h[0]}\r\nHost: ${h[1]}\r\n` : `Host: ${h}\r\n`;
        const upgrading = upgrade === undefined ? 'Connection: close\r\n' : `Connection: Upgrade, close\r\nUpgrade: ${upgrade}\r\n`;
        const res = await rawHttp(port, `GET ${tgt} HTTP/${version}\r\n${hosts}X-API-Key: ${t.key}\r\n${upgrading}\r\n`);
        const what = `${tgt} ${JSON.stringify(h)} ${version} ${upgrade}: ${res.status} ${res.body.slice(0, 200)}`;
        expect(res.status, what).toBeLessThan(500);
        expect(res.head, what).toMatch(/^content-type: application\/(problem\+)?json/im);
        if (res.status === 200) {
          const links = (JSON.parse(res.body) as { _links: { base: string; self: string } })._links;
          expect(links.base, what).toMatch(/^http:\/\/[^/?#@\s]+$/);
          expect(links.self.startsWith(`${links.base}/api/v1/groups?`), what).toBe(true);
        }
      }),
      params,
    );
  }, opts.timeoutMs);

  it(`${opts.runs} body framing (Transfer-Encoding, Content-Length, Content-Encoding): a create only when the body is read as sent, never 5xx`, async () => {
    const coding = fc.constantFrom(undefined, 'chunked', 'Chunked', 'gzip, chunked', 'gzip,chunked', 'chunked, gzip', 'identity', 'deflate, chunked', 'compress, chunked', 'chunked, chunked', '');
    const encoding = fc.constantFrom(undefined, 'identity', 'gzip', 'x-unknown');
    await check(
      fc.asyncProperty(coding, fc.boolean(), encoding, fc.boolean(), async (te, withLength, ce, gzipped) => {
        const name = `framed-${Math.random().toString(36).slice(2)}`;
        const json = Buffer.from(JSON.stringify({ name }));
        const body = gzipped ? gzipSync(json) : json;
        const framed = te === undefined ? body : Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
        const head =
          `POST /api/v1/groups HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nContent-Type: application/json\r\nConnection: close\r\n` +
          (te === undefined ? '' : `Transfer-Encoding: ${te}\r\n`) +
          (withLength || te === undefined ? `Content-Length: ${body.length}\r\n` : '') +
          (ce === undefined ? '' : `Content-Encoding: ${ce}\r\n`);
        const res = await rawHttp(port, Buffer.concat([Buffer.from(`${head}\r\n`), framed]));
        const what = `TE ${te} CL ${withLength} CE ${ce} gzipped ${gzipped}: ${res.status} ${res.body.slice(0, 200)}`;
        expect(res.status, what).toBeLessThan(500);
        expect(res.head, what).toMatch(/^content-type: application\/(problem\+)?json/im);
        // Created only when the framing is one the server reads whole: chunked alone or a length, and the body decoded as its Content-Encoding says.
        const readAsSent = (te === undefined || /^chunked$/i.test(te)) && !(te !== undefined && withLength) && (gzipped ? ce === 'gzip' : ce === undefined || ce === 'identity');
        expect(res.status === 201, what).toBe(readAsSent);
        if (res.status === 201) {
          const read = await app.http.get(`/api/v1/groups/${JSON.parse(res.body).id}`).set('X-API-Key', t.key);
          expect(read.body.name, what).toBe(name);
        }
      }),
      params,
    );
  }, opts.timeoutMs);

  it(`${opts.runs} unsupported methods on known paths: 405 problem+json with Allow, never 404 or 5xx`, async () => {
    await check(
      fc.asyncProperty(fc.constantFrom(...routes), fc.constantFrom(...METHODS), async (route, method) => {
        const path = '/api/v1' + route.path.replace(/:(\w+)/g, 'seed');
        const allowed: string[] = routes
          .filter((r) => new RegExp(`^${r.path.replace(/:(\w+)/g, '[^/]+')}$`).test(path.slice('/api/v1'.length)))
          .map((r) => r.method);
        const res = await rawHttp(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
        if (allowed.includes(method)) {
          expect(res.status).not.toBe(405);
        } else {
          expect(res.status, res.body.slice(0, 300)).toBe(405);
          const allow = /^allow: (.*)$/im.exec(res.head)?.[1].trim().split(', ') ?? [];
          for (const m of allowed) expect(allow).toContain(m);
          expect(res.head).toMatch(/content-type: application\/problem\+json/i);
        }
        expect(res.status).toBeLessThan(500);
      }),
      params,
    );
  }, opts.timeoutMs);
}
