import net from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { expectProblem } from '../helpers/factories';
import { listen } from '../../src/runtime';
import { rawHttp } from '../helpers/process';
import { capture } from '../helpers/log';
import { observeEarlyAnswers } from '../../src/http-errors';
import { earlyAnswerObserver } from '../../src/observability/http';

/** Errors of the HTTP layer itself: Node's parser, methods, subscriptions. */
let app: TestApp;
let t: Tenant;
let server: Server;
let port: number;
beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
  server = await listen(app.runtime.app, 0);
  app.runtime.attach(server);
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await app.close();
});

const raw = (data: string) => rawHttp(port, data);

describe("Node's HTTP parser errors are problem+json", () => {
  it('431 for an oversize request line or header', async () => {
    for (const res of [
      await raw(`GET /api/v1/groups?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
      await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`),
    ]) {
      expect(res.status).toBe(431);
      expect(res.head).toMatch(/content-type: application\/problem\+json/i);
      // Every member and header the document's Problem has, as any other answer of the service.
      const requestId = /^x-request-id: ([0-9a-f-]{36})\r?$/im.exec(res.head)?.[1];
      expect(requestId).toBeDefined();
      expect(JSON.parse(res.body)).toMatchObject({ status: 431, title: 'Request Header Fields Too Large', detail: expect.any(String), instance: expect.stringMatching(/^\/(api\/v1\/groups|health)$/), requestId });
    }
  });

  it('400 for a request Node cannot parse', async () => {
    const res = await raw('NOT AN HTTP REQUEST\r\n\r\n');
    expect(res.status).toBe(400);
    expect(res.head).toMatch(/content-type: application\/problem\+json/i);
    expect(res.head).toMatch(/^x-request-id: [0-9a-f-]{36}\r?$/im);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400, type: '/problems/validation-error', instance: '/', requestId: expect.any(String) });
    // A header Node refuses (a control byte in its value): the path of the request line is the instance.
    const header = await raw(`GET /api/v1/groups?limit=1 HTTP/1.1\r\nHost: x\r\nX-Odd: a\x01b\r\n\r\n`);
    expect(header.status).toBe(400);
    expect(JSON.parse(header.body)).toMatchObject({ status: 400, instance: '/api/v1/groups', errors: [{ pointer: '#/header/X-Odd' }] });
    // What else Node refuses names where, as every other 400 does.
    for (const [head, pointer] of [
      ['If-Match: "a\x7fb"', '#/header/If-Match'],
      ['Bad Name: x', '#/header'],
      ['Content-Length: abc', '#/header/Content-Length'],
      ['Content-Length: 1\r\nTransfer-Encoding: chunked', '#/header/Transfer-Encoding'],
    ]) {
      const res = await raw(`POST /api/v1/groups HTTP/1.1\r\nHost: x\r\n${head}\r\n\r\n`);
      expect(res.status, head).toBe(400);
      expect(JSON.parse(res.body), head).toMatchObject({ status: 400, errors: [{ pointer }] });
    }
  });
});

describe('answers written before Express are logged like every answer', () => {
  it('one request line each, with its request id, method, path (never its query), status and what was refused', async () => {
    const { logger, lines } = capture();
    observeEarlyAnswers(server, earlyAnswerObserver({ logger }));
    try {
      const header = await raw(`GET /api/v1/groups?api_key=cm_secret HTTP/1.1\r\nHost: x\r\nX-Odd: a\x01b\r\n\r\n`);
      const garbage = await raw(`${'X'.repeat(5000)} /a HTTP/1.1\r\n\r\n`);
      const expectation = await raw('PUT /api/v1/groups/x?api_key=cm_secret HTTP/1.1\r\nHost: x\r\nX-Request-Id: rid-log\r\nExpect: fancy\r\nConnection: close\r\n\r\n');
      const idOf = (res: { head: string }) => /^x-request-id: (\S+)\r?$/im.exec(res.head)?.[1];
      expect(lines).toEqual([
        expect.objectContaining({ msg: 'request', level: 30, requestId: idOf(header), method: 'GET', route: 'unmatched', url: '/api/v1/groups', status: 400, ms: 0, refused: 'HPE_INVALID_HEADER_TOKEN' }),
        // An unknown method is OTHER, never the 5,000 bytes the client sent (nor the path after them: the first 2,100 bytes are read).
        expect.objectContaining({ requestId: idOf(garbage), method: 'OTHER', url: '/', status: 400, refused: 'HPE_INVALID_METHOD' }),
        expect.objectContaining({ requestId: 'rid-log', method: 'PUT', url: '/api/v1/groups/x', status: 417, refused: 'expect' }),
      ]);
      expect(JSON.stringify(lines)).not.toContain('cm_secret');
    } finally {
      observeEarlyAnswers(server, earlyAnswerObserver({ logger: app.runtime.logger, metrics: app.runtime.metrics }));
    }
  });
});

describe('the request target and Host (RFC 9112, 3.2)', () => {
  const close = 'Connection: close\r\n';
  const page = (res: { body: string }) => JSON.parse(res.body) as { results: unknown[]; _links: Record<string, string> };

  it('an absolute-form target is served as its path and query, its authority the host of every link', async () => {
    const res = await raw(`GET http://api.example.com:8443/api/v1/groups?limit=1&sort=name HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\n${close}\r\n`);
    expect(res.status, res.body).toBe(200);
    // Read as it came, self was `http://xhttp://api.example.com:8443/...` and next pointed at that host.
    expect(page(res)._links).toMatchObject({ base: 'http://api.example.com:8443', self: 'http://api.example.com:8443/api/v1/groups?limit=1&sort=name' });
    for (const link of [page(res)._links.next, page(res)._links.prev].filter(Boolean)) expect(link).toMatch(/^\/api\/v1\/groups\?/);
    const missing = await raw(`GET HTTPS://api.example.com/api/v1/groups/nope?x=1 HTTP/1.1\r\nX-API-Key: ${t.key}\r\n${close}\r\n`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ status: 404, instance: '/api/v1/groups/nope' });
  });

  it('an absolute-form target that is no URL: 400 problem+json naming the target, nothing runs', async () => {
    for (const target of ['http://', 'http://[::1/api/v1/groups', 'http://host:99999/api/v1/groups', 'http://%zz/api/v1/groups', 'ftp:///api/v1/groups']) {
      const res = await raw(`POST ${target} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nContent-Type: application/json\r\nContent-Length: 12\r\n${close}\r\n{"name":"t"}`);
      expect(res.status, `${target}: ${res.body}`).toBe(400);
      expect(res.head).toMatch(/content-type: application\/problem\+json/i);
      expect(res.head).toMatch(/^x-request-id: /im);
      expect(JSON.parse(res.body)).toMatchObject({ status: 400, errors: [{ pointer: '#/request-target', detail: expect.stringMatching(/URL/) }] });
    }
    const groups = await app.http.get('/api/v1/groups?limit=100').set('X-API-Key', t.key);
    expect(groups.body.results.map((g: { name: string }) => g.name)).not.toContain('t');
  });

  it('HTTP/1.1 without Host: 400 problem+json naming the header (Node alone answered a bare 400)', async () => {
    const res = await raw(`GET /api/v1/groups HTTP/1.1\r\nX-API-Key: ${t.key}\r\n${close}\r\n`);
    expect(res.status).toBe(400);
    expect(res.head).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400, errors: [{ pointer: '#/header/Host' }] });
  });

  it('a Host that is not one host and port, or two Host lines: 400 problem+json naming the header (each was written into the links)', async () => {
    for (const host of ['x/y', 'x?y=1', 'x#frag', 'user@x', 'x:abc', 'x, y', '<script>', 'x\\y', '']) {
      const res = await raw(`GET /api/v1/groups?limit=1 HTTP/1.1\r\nHost: ${host}\r\nX-API-Key: ${t.key}\r\n${close}\r\n`);
      expect(res.status, `${host}: ${res.body}`).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ status: 400, errors: [{ pointer: '#/header/Host' }] });
    }
    const twice = await raw(`GET /api/v1/groups?limit=1 HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nX-API-Key: ${t.key}\r\n${close}\r\n`);
    expect(twice.status).toBe(400);
    for (const host of ['api.example.com', 'api.example.com:8443', '127.0.0.1:80', '[::1]:3000', 'xn--bcher-kva.example', 'a%41b']) {
      const res = await raw(`GET /api/v1/groups?limit=1 HTTP/1.1\r\nHost: ${host}\r\nX-API-Key: ${t.key}\r\n${close}\r\n`);
      expect(res.status, `${host}: ${res.body}`).toBe(200);
      expect(page(res)._links.base).toBe(`http://${host}`);
    }
  });

  it('a Transfer-Encoding other than chunked: 400 problem+json naming the header, nothing runs (gzip, chunked was read as plain)', async () => {
    const body = '{"name":"te-coded"}';
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    for (const coding of ['gzip, chunked', 'deflate, chunked', 'x-custom, chunked', 'gzip,chunked']) {
      const res = await raw(`POST /api/v1/groups HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: ${coding}\r\n${close}\r\n${chunked}`);
      expect(res.status, `${coding}: ${res.body}`).toBe(400);
      expect(res.head).toMatch(/content-type: application\/problem\+json/i);
      expect(JSON.parse(res.body)).toMatchObject({ status: 400, errors: [{ pointer: '#/header/Transfer-Encoding' }] });
    }
    const groups = await app.http.get('/api/v1/groups?limit=100').set('X-API-Key', t.key);
    expect(groups.body.results.map((g: { name: string }) => g.name)).not.toContain('te-coded');
    const plain = await raw(`POST /api/v1/groups HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: Chunked\r\n${close}\r\n${chunked}`);
    expect(plain.status, plain.body).toBe(201);
  });

  it('HTTP/1.0 without Host: served, its links on the address the request came in on (was http://undefined)', async () => {
    const res = await raw(`GET /api/v1/groups?limit=1 HTTP/1.0\r\nX-API-Key: ${t.key}\r\n\r\n`);
    expect(res.status, res.body).toBe(200);
    expect(page(res)._links).toMatchObject({ base: `http://127.0.0.1:${port}`, self: `http://127.0.0.1:${port}/api/v1/groups?limit=1` });
  });

  it('an Expect other than 100-continue: 417 problem+json naming the header, with the request id; 100-continue is met', async () => {
    const body = '{"name":"expected"}';
    const head = (expect_: string) =>
      `POST /api/v1/groups HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: ${expect_}\r\n${close}\r\n${body}`;
    const refused = await raw(head('fancy-feature').replace('Host: x\r\n', 'Host: x\r\nX-Request-Id: rid-417\r\n'));
    expect(refused.status).toBe(417);
    expect(refused.head).toMatch(/content-type: application\/problem\+json/i);
    expect(refused.head).toMatch(/^x-request-id: rid-417\r?$/im);
    expect(JSON.parse(refused.body)).toMatchObject({ status: 417, title: 'Expectation Failed', type: '/problems/expectation-failed', errors: [{ pointer: '#/header/Expect' }], requestId: 'rid-417' });
    expect((await raw(head('fancy-feature'))).head).toMatch(/^x-request-id: [0-9a-f-]{36}\r?$/im);
    // An absolute-form target: the instance is its path, as on every other answer (was the whole URL).
    const absolute = await raw(head('fancy-feature').replace('POST /api/v1/groups', 'POST http://api.example.com/api/v1/groups?x=1'));
    expect(JSON.parse(absolute.body)).toMatchObject({ status: 417, instance: '/api/v1/groups' });
    const met = await raw(head('100-continue'));
    expect(met.head).toMatch(/^HTTP\/1\.1 100 Continue/);
    expect(met.body).toMatch(/HTTP\/1\.1 201 Created/);
  });
});

describe('Upgrade: only a WebSocket handshake on /graphql is upgraded', () => {
  const close = 'Connection: Upgrade, close\r\n';
  const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';
  // An answer other than 101 closes the connection (`close`), so rawHttp reads it whole at once.
  const handshake = (target: string, extra = '') =>
    `GET ${target} HTTP/1.1\r\nHost: x\r\n${close}Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${KEY}\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n${extra}\r\n`;

  it('any other Upgrade is served as plain HTTP (curl --http2 asks for h2c: every REST route was a plain-text 400, POST /graphql a 405)', async () => {
    const h2c = `Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n${close}`;
    const page = await raw(`GET /api/v1/groups?limit=1 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\n${h2c}\r\n`);
    expect(page.status, page.body).toBe(200);
    expect(page.head).toMatch(/^content-type: application\/json/im);
    const query = '{"query":"{ __typename }"}';
    const graphql = await raw(`POST /graphql HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nContent-Type: application/json\r\nContent-Length: ${query.length}\r\n${h2c}\r\n${query}`);
    expect(graphql.status, graphql.body).toBe(200);
    expect(JSON.parse(graphql.body)).toEqual({ data: { __typename: 'Query' } });
    // A WebSocket handshake elsewhere than /graphql is the HTTP request it also is.
    const elsewhere = await raw(handshake('/api/v1/groups?limit=1', `X-API-Key: ${t.key}\r\n`));
    expect(elsewhere.status, elsewhere.body).toBe(200);
    const unknown = await raw(handshake('/nowhere'));
    expect(unknown.status).toBe(404);
    expect(unknown.head).toMatch(/^content-type: application\/problem\+json/im);
  });

  it('a handshake on /graphql is upgraded, in origin or absolute form; one ws refuses is a 400 problem+json naming the header', async () => {
    for (const target of ['/graphql', 'http://api.example.com/graphql']) {
      const res = await rawHead(handshake(target));
      expect(res, target).toMatch(/^HTTP\/1\.1 101 Switching Protocols/);
      expect(res, target).toMatch(/^sec-websocket-protocol: graphql-transport-ws\r?$/im);
    }
    for (const [header, value] of [
      ['Sec-WebSocket-Key', 'short'],
      ['Sec-WebSocket-Version', '12'],
      ['Sec-WebSocket-Protocol', 'a b'],
    ]) {
      const bad = handshake('/graphql', 'X-Request-Id: rid-ws\r\n').replace(new RegExp(`${header}: [^\\r]*`), `${header}: ${value}`);
      const res = await raw(bad);
      expect(res.status, `${header}: ${res.body}`).toBe(400);
      expect(res.head).toMatch(/^content-type: application\/problem\+json/im);
      expect(res.head).toMatch(/^x-request-id: rid-ws\r?$/im);
      expect(JSON.parse(res.body)).toMatchObject({ status: 400, instance: '/graphql', requestId: 'rid-ws', errors: [{ pointer: `#/header/${header}` }] });
    }
  });
});

/** The head of the answer to `data`, read until the blank line (a 101's socket stays open). */
function rawHead(data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(got.slice(0, got.indexOf('\r\n\r\n')));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
    socket.write(data);
  });
}

describe('405 for a known path with another method', () => {
  it('REST: Allow derived from the route table', async () => {
    const res = await app.http.put('/api/v1/groups').set('X-API-Key', t.key).send({});
    expectProblem(res, 405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    const one = await app.http.put('/api/v1/groups/some-id').set('X-API-Key', t.key);
    expectProblem(one, 405);
    expect(one.headers.allow).toBe('DELETE, GET, HEAD, PATCH');
    expectProblem(await app.http.put('/api/v1/nowhere').set('X-API-Key', t.key), 404);
  });

  it('HEAD where GET is served: /graphql answers as its GET without the body (was 405 while Allow listed HEAD)', async () => {
    const path = `/graphql?query=${encodeURIComponent('{ __typename }')}`;
    const get = await app.http.get(path).set('X-API-Key', t.key).set('apollo-require-preflight', '1');
    expect(get.status, get.text).toBe(200);
    const head = await app.http.head(path).set('X-API-Key', t.key).set('apollo-require-preflight', '1');
    expect(head.status).toBe(200);
    // The head of the GET's answer (Node itself leaves out a HEAD's body).
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(get.headers['content-length']).toMatch(/^[1-9]\d*$/);
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    const rest = await app.http.head('/api/v1/groups').set('X-API-Key', t.key);
    expect(rest.status).toBe(200);
  });

  it('fixed endpoints', async () => {
    const health = await app.http.post('/health');
    expect(health.status).toBe(405);
    expect(health.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(health.headers.allow).toBe('GET, HEAD');
    const graphql = await app.http.put('/graphql').send({ query: '{ groups { size } }' });
    expect(graphql.status).toBe(405);
    expect(graphql.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(graphql.headers.allow).toBe('GET, HEAD, POST');
  });

  it('OPTIONS on a known path: 204 with the Allow a 405 there gives, without a key (REST was a 200 text/plain only with a key, /docs the page, the fixed endpoints a 405)', async () => {
    for (const [path, allow] of [
      ['/api/v1/groups', 'GET, HEAD, POST'],
      ['/api/v1/groups/some-id', 'DELETE, GET, HEAD, PATCH'],
      ['/api/v1/notifications', 'POST'],
      ['/api/v1/openapi.json', 'GET, HEAD'],
      ['/graphql', 'GET, HEAD, POST'],
      ['/livez', 'GET, HEAD'],
      ['/docs/', 'GET, HEAD'],
    ]) {
      const res = await app.http.options(path);
      expect(res.status, path).toBe(204);
      expect(res.headers.allow, path).toBe(allow);
      expect(res.text ?? '', path).toBe('');
      if (path !== '/api/v1/openapi.json' && !path.startsWith('/docs')) {
        const refused = await app.http.put(path).set('X-API-Key', t.key);
        expect(refused.status, path).toBe(405);
        expect(refused.headers.allow, `PUT ${path}`).toBe(allow);
      }
    }
    for (const path of ['/nowhere', '/docs/swagger-ui.css']) expectProblem(await app.http.options(path), 404);
    const post = await app.http.post('/docs/');
    expectProblem(post, 405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});

describe('the query string', () => {
  it('is parsed once per request, however many parameters a route reads (Express 5 parses at every read of req.query)', async () => {
    const express = app.runtime.app;
    const parse = express.get('query parser fn') as (text: string) => unknown;
    let calls = 0;
    express.set('query parser fn', (text: string) => {
      calls++;
      return parse(text);
    });
    try {
      const res = await app.http.get('/api/v1/groups?limit=5&skip=0&sort=name:asc&q=chess').set('X-API-Key', t.key);
      expect(res.status).toBe(200);
      expect(res.body.limit).toBe(5);
      expect(calls).toBe(1);
    } finally {
      express.set('query parser fn', parse);
    }
  });
});

describe('answers on the wire', () => {
  /** Connection: close, so the raw answer ends with the body; its bytes, for Content-Length. */
  const wire = async (method: string, path: string) => {
    const res = await raw(`${method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nConnection: close\r\n\r\n`);
    return { head: res.head, body: res.bodyBytes };
  };
  const header = (head: string, name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1];

  it('a JSON body of many multibyte characters: the content type with its charset, the length in bytes, the same head for HEAD without a body', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await app.http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name: `Schachfreunde Übersee ${i} ${'♞'.repeat(220)}` });
      expect(res.status).toBe(201);
    }
    const get = await wire('GET', '/api/v1/groups?limit=3');
    expect(get.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(header(get.head, 'content-type')).toBe('application/json; charset=utf-8');
    expect(get.body.length).toBeGreaterThan(1500);
    expect(Number(header(get.head, 'content-length'))).toBe(get.body.length);
    const page = JSON.parse(get.body.toString('utf8'));
    expect(page.results.map((g: { name: string }) => g.name)).toEqual(expect.arrayContaining([expect.stringContaining('♞♞♞')]));
    const head = await wire('HEAD', '/api/v1/groups?limit=3');
    expect(header(head.head, 'content-type')).toBe('application/json; charset=utf-8');
    expect(header(head.head, 'content-length')).toBe(header(get.head, 'content-length'));
    expect(head.body.length).toBe(0);
    const missing = await wire('GET', '/api/v1/groups/no-such-group');
    expect(missing.head).toMatch(/^HTTP\/1\.1 404 /);
    expect(header(missing.head, 'content-type')).toBe('application/problem+json; charset=utf-8');
    expect(Number(header(missing.head, 'content-length'))).toBe(missing.body.length);
  });
});
