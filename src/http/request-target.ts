import type { IncomingMessage } from 'node:http';
import { problem, type Problem } from '../errors/problem';

/**
 * The request target and host every later layer reads (RFC 9112, sections 3.2 and 3.2.2), set
 * by the server's first 'request' listener (src/runtime.ts, `listen`), before Express reads
 * `req.url` (its router keeps an absolute target's scheme and authority apart and splices them
 * back, so a target changed inside Express is cut at the wrong place):
 * - an absolute-form target (`GET http://host/api/v1/groups HTTP/1.1`, what a client sends to a
 *   proxy) becomes the origin-form path and query of that URL, and its authority the host, as the
 *   RFC asks of an origin server. Read as it came, it was routed by its path but written into
 *   `_links.self` after the base (`http://xhttp://host/...`), `next`/`prev` pointed at its host,
 *   and `http://` alone got Express's HTML page "Cannot POST null";
 * - a target that is neither a path, `*` nor an http(s) URL, a `Host` that is not one host and
 *   port (`HOST`), and an HTTP/1.1 request without `Host` (the RFC's MUSTs; Node's own refusal
 *   is a bare 400, so the server lets such requests through: `requireHostHeader: false`) are
 *   refused: the app's first middleware answers the problem (`targetRefusal`,
 *   src/observability/http.ts), with its request id, log line and metrics;
 * - HTTP/1.0 needs no `Host`: without one, the host is the address the request came in on
 *   (`_links.base` read `http://undefined`).
 * - a Transfer-Encoding other than chunked is refused the same way (`CHUNKED`).
 * An origin-form target with one valid Host, nearly every request, costs a pattern test and a
 * pass over the header names.
 */
export function normalizeTarget(req: IncomingMessage): void {
  const target = req.url ?? '';
  const { host } = req.headers;
  const coding = req.headers['transfer-encoding'];
  if (coding !== undefined && !CHUNKED.test(coding)) {
    return refuse(req, 'The only transfer coding accepted is chunked (compress a body with Content-Encoding)', '#/header/Transfer-Encoding');
  }
  if (host !== undefined && !(HOST.test(host) && oneHost(req.rawHeaders))) {
    return refuse(req, 'The Host header must be one host name or address, with an optional port', '#/header/Host');
  }
  if (target.startsWith('/')) {
    if (host !== undefined) return;
  } else if (/^https?:\/\//i.test(target)) {
    let url: URL | undefined;
    try {
      url = new URL(target);
    } catch {
      // not a URL: refused below
    }
    if (!url?.host) return refuse(req, 'The request target is not a valid absolute URL', '#/request-target');
    req.url = `${url.pathname}${url.search}`;
    req.headers.host = url.host;
    return;
  } else if (target !== '*') {
    // Neither a path, `*` (asterisk form), nor an http(s) URL: Express routed `ftp:///api/v1/groups` by its path.
    return refuse(req, 'The request target must be a path or an http(s) URL', '#/request-target');
  }
  if (host !== undefined) return;
  if (req.httpVersion !== '1.0') return refuse(req, 'An HTTP/1.1 request must carry a Host header', '#/header/Host');
  const address = req.socket.localAddress?.replace(/^::ffff:(?=\d+\.)/, '');
  if (address) req.headers.host = `${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}`;
}

/**
 * A Host value as RFC 3986 has a URI's host and port (an IP literal in brackets, or a registered
 * name: unreserved characters, percent-encodings and sub-delimiters), never empty. Node keeps the
 * first of several Host lines; the RFC asks for a 400 (`oneHost`). Anything else was written
 * into every link of the answer (`Host: x/y?z` gave `_links.base` `http://x/y?z`).
 */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+)(?::\d{0,5})?$/;

/**
 * A request's Transfer-Encoding is chunked alone (RFC 9112, 6.1). Node's parser decodes the
 * chunks of `gzip, chunked` and left the gzip on: the body was read as if it were not
 * compressed (plain JSON sent so was created). The RFC's answer to a coding the server does not
 * know is a 501; a client sending one is at fault, so it is a 400 naming the header, as every
 * other malformed header here (docs/api.md).
 */
const CHUNKED = /^\s*chunked\s*$/i;

function oneHost(raw: string[]): boolean {
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'host' && ++seen > 1) return false;
  return true;
}

const refusals = new WeakMap<IncomingMessage, Problem>();

function refuse(req: IncomingMessage, detail: string, pointer: string): void {
  // Routed as the root, so no route runs before the refusal is answered.
  req.url = '/';
  refusals.set(req, problem(400, detail, [{ pointer, detail }]));
}

/** The problem normalizeTarget found with the request, if any. */
export const targetRefusal = (req: IncomingMessage): Problem | undefined => refusals.get(req);
