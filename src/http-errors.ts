import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import type { ErrorCode } from './errors/app-error';
import { KINDS } from './errors/classify';
import { problem, problemJson, problemOf, sendProblem, writeProblem, type Problem } from './errors/problem';
import { requestIdOf, UNMATCHED, type EarlyAnswer } from './observability/http';
import { normalizeTarget } from './http/request-target';

/** Node's HTTP parser error codes and what they mean to a client. */
const PARSER: Record<string, { code: ErrorCode; detail: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'HEADERS_TOO_LARGE', detail: 'The request line or headers are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'REQUEST_TIMEOUT', detail: 'The request was not received in time' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { code: 'PAYLOAD_TOO_LARGE', detail: 'The chunk extensions are too large' },
};

/** Who is told of each answer a server writes before Express (src/app.ts: the request log and metrics). */
const earlyObservers = new WeakMap<Server, (answer: EarlyAnswer) => void>();

/** Tells `observer` of every answer written on `server` before Express saw the request. */
export function observeEarlyAnswers(server: Server, observer: (answer: EarlyAnswer) => void): void {
  earlyObservers.set(server, observer);
}

/** Called by each writer of such an answer (here, src/http/upgrade.ts), after the answer is written. */
export function reportEarlyAnswer(server: Server, answer: EarlyAnswer): void {
  earlyObservers.get(server)?.(answer);
}

/**
 * Errors Node's HTTP parser meets before Express sees a request (a huge request line or
 * header, a malformed request, a client too slow to send its headers) are answered as
 * problem+json with the status Node itself would use (400, 408, 413, 431), then closed; so is an
 * `Expect` header the server does not meet (417). Each is logged and counted like any answer
 * (observeEarlyAnswers), with the route `unmatched`.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const known = err.code ? PARSER[err.code] : undefined;
    const code = known?.code ?? 'VALIDATION';
    // The headers were not parsed: the request id is a new one, the path read off the request line when it can be.
    const rawPacket = (err as { rawPacket?: Buffer }).rawPacket;
    const detail = known?.detail ?? 'The request could not be parsed as HTTP';
    const at = known ? undefined : whereUnparsable(err.code, rawPacket);
    const refusal = at ? problemOf(code, at.detail, [{ pointer: at.pointer, detail: at.detail }]) : problemOf(code, detail);
    const { method, path } = requestLineOf(rawPacket);
    const requestId = randomUUID();
    endWithProblem(socket, refusal, path, requestId);
    reportEarlyAnswer(server, { method, route: UNMATCHED, api: 'other', status: refusal.status, requestId, path, refused: err.code ?? 'unknown' });
  });
  // `Expect` other than 100-continue: Node's own answer is a bare 417 (RFC 9110, section 10.1.1).
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const detail = 'Only the expectation 100-continue is supported';
    const requestId = requestIdOf(req.headers['x-request-id']);
    // Before the server's request listeners: an absolute-form target is made its path here too.
    normalizeTarget(req);
    const path = (req.url ?? '').split('?')[0];
    writeProblem(res, problemOf('EXPECTATION_FAILED', detail, [{ pointer: '#/header/Expect', detail }]), path, requestId, { Connection: 'close' });
    reportEarlyAnswer(server, { method: req.method ?? 'OTHER', route: UNMATCHED, api: 'other', status: 417, requestId, path, refused: 'expect' });
  });
}

/**
 * Writes a problem as a whole HTTP/1.1 answer on a socket Express never saw (a parser error, a
 * refused WebSocket handshake) and closes it: with `instance` and `requestId` in the body and
 * `X-Request-Id`, as every problem of the service has them (the OpenAPI document requires both).
 */
export function endWithProblem(socket: Duplex, p: Problem, instance: string, requestId: string, headers: Record<string, string> = {}): void {
  const body = problemJson(p, instance, requestId);
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${p.status} ${STATUS_CODES[p.status]}\r\n` +
      'Content-Type: application/problem+json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      extra.join('') +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/**
 * What in a request Node's parser refused, for the problem's `errors`: the header whose name or
 * value has a byte HTTP does not allow there (a control character, say), read off the raw
 * request; the framing headers by the parser's own code; the request line. Undefined when it
 * cannot tell (the problem then says only that the request could not be parsed).
 */
function whereUnparsable(code: string | undefined, raw: Buffer | undefined): { pointer: string; detail: string } | undefined {
  if (code === 'HPE_INVALID_CONTENT_LENGTH' || code === 'HPE_UNEXPECTED_CONTENT_LENGTH') {
    return { pointer: '#/header/Content-Length', detail: 'Content-Length must be one decimal number' };
  }
  if (code === 'HPE_INVALID_TRANSFER_ENCODING') return { pointer: '#/header/Transfer-Encoding', detail: 'Transfer-Encoding must be chunked, and not be sent with Content-Length' };
  if (code === 'HPE_INVALID_METHOD' || code === 'HPE_INVALID_URL' || code === 'HPE_INVALID_VERSION') {
    return { pointer: '#/request-line', detail: 'The request line must be a method, a target and HTTP/1.0 or HTTP/1.1' };
  }
  if (code !== 'HPE_INVALID_HEADER_TOKEN' || !raw) return undefined;
  const lines = raw.subarray(0, 16 * 1024).toString('latin1').split('\r\n').slice(1);
  for (const line of lines) {
    if (line === '') break;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1);
    if (colon > 0 && TOKEN.test(name) && !BAD_VALUE.test(value)) continue;
    const named = TOKEN.test(name) && name.length <= 64 ? name : undefined;
    const detail = named ? `The header ${named} has a character HTTP does not allow in a header value` : 'A header name has a character HTTP does not allow there';
    return { pointer: named ? `#/header/${named}` : '#/header', detail };
  }
  return undefined;
}

/** A header name (RFC 9110 token), and a byte no header value may hold (control characters but tab). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/** A method (a token) and a path of visible characters, up to its query or the version. */
const REQUEST_LINE = new RegExp(`^(${TOKEN.source.slice(1, -1)}) (\\/[\\x21-\\x7e]{0,2047})[ ?]`);

/** The method and path of a request line Node could not parse (`GET /a?b HTTP/1.1` -> GET, `/a`), or OTHER and `/`. */
function requestLineOf(raw: Buffer | undefined): { method: string; path: string } {
  const line = REQUEST_LINE.exec(raw?.subarray(0, 2100).toString('latin1') ?? '');
  return line ? { method: line[1], path: line[2].split('?')[0] } : { method: 'OTHER', path: '/' };
}

export interface KnownPath {
  path: string;
  methods: string[];
}

/**
 * A known path asked with a method it does not serve: 405 problem+json with `Allow`, derived
 * from the route table (REST) and the few fixed endpoints. Unknown paths fall through to 404.
 */
export function methodNotAllowed(known: KnownPath[]) {
  const { allowedAt, everywhere } = methodTable(known);
  return (req: Request, res: Response, next: NextFunction) => {
    if (everywhere.has(req.method)) return next();
    const path = req.baseUrl + req.path;
    const allowed = allowedAt(path);
    // HEAD is GET without the body wherever GET is served (Express routes it so; /graphql: src/app.ts).
    if (!allowed.size || allowed.has(req.method)) return next();
    const allow = [...allowed].sort().join(', ');
    res.setHeader('Allow', allow);
    sendProblem(res, problem(KINDS.METHOD_NOT_ALLOWED.status, `${req.method} is not supported on ${path}; allowed: ${allow}`));
  };
}

/**
 * `OPTIONS` on a known path (RFC 9110, 9.3.7): 204 with `Allow`, the same list a 405 there
 * gives, before the key gate (it tells nothing of any community). Express answered it on REST
 * routes with a 200 `text/plain` body of the methods and only with a key, `/docs` with the
 * page, the fixed endpoints with a 405. With CORS_ORIGINS set, the CORS middleware before this
 * one answers every OPTIONS (preflights) itself. An unknown path goes on (404).
 */
export function answerOptions(known: KnownPath[]) {
  const { allowedAt } = methodTable(known);
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'OPTIONS') return next();
    const allowed = allowedAt(req.path);
    if (!allowed.size) return next();
    res.setHeader('Allow', [...allowed].sort().join(', '));
    res.status(204).end();
  };
}

/** The methods of each known path (`:name` matches one segment; a trailing slash is the same path), HEAD wherever GET is. */
function methodTable(known: KnownPath[]) {
  const table = new Map<RegExp, Set<string>>();
  for (const { path, methods } of known) {
    const re = new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z]+/g, '[^/]+')}/?$`);
    const entry = [...table].find(([r]) => r.source === re.source)?.[1];
    if (entry) methods.forEach((m) => entry.add(m));
    else table.set(re, new Set(methods));
  }
  // A method every known path allows passes without matching the path (GET and POST on /graphql).
  const [first, ...rest] = table.values();
  const everywhere = new Set([...(first ?? [])].filter((m) => rest.every((methods) => methods.has(m))));
  const allowedAt = (path: string): Set<string> => {
    const allowed = new Set<string>();
    for (const [re, methods] of table) if (re.test(path)) methods.forEach((m) => allowed.add(m));
    if (allowed.has('GET')) allowed.add('HEAD');
    return allowed;
  };
  return { allowedAt, everywhere };
}
