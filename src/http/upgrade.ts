import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { problem } from '../errors/problem';
import { endWithProblem, reportEarlyAnswer } from '../http-errors';
import { requestIdOf } from '../observability/http';
import { normalizeTarget, targetRefusal } from './request-target';

/** Where graphql-ws listens: the same path as GraphQL over HTTP (src/graphql/subscriptions.ts). */
export const SUBSCRIPTIONS_PATH = '/graphql';

/**
 * Which requests that carry `Upgrade` the server hands to its 'upgrade' listener, ws's server
 * for graphql-ws (`shouldUpgradeCallback` of node:http, Node 22.21 and 24.9 or later): a GET
 * asking for `websocket` on `/graphql`, after the request target is normalized (an absolute
 * `http://host/graphql` is that path). Every other one is served as the plain HTTP request it
 * also is, its `Upgrade` ignored, as RFC 9110 (7.8) lets a server do. Before, ws took them all
 * and answered in plain text: `curl --http2` (which asks for `Upgrade: h2c`) got
 * "400 Invalid Upgrade header" from every REST route, and its POST to `/graphql` a 405.
 * A request normalizeTarget refuses is not upgraded either: it is answered as its 400 problem.
 */
export function upgradesToWebSocket(req: IncomingMessage): boolean {
  // Here before the 'request' listener; running normalizeTarget twice (for a request served
  // as HTTP after all) gives the same target, host and refusal.
  normalizeTarget(req);
  if (req.method !== 'GET' || req.headers.upgrade?.toLowerCase() !== 'websocket' || targetRefusal(req)) return false;
  const url = req.url ?? '';
  const query = url.indexOf('?');
  return (query < 0 ? url : url.slice(0, query)) === SUBSCRIPTIONS_PATH;
}

/** The header each of ws's handshake refusals is about, read off its message. */
const HANDSHAKE_HEADERS: [RegExp, string][] = [
  [/Sec-WebSocket-Key/, 'Sec-WebSocket-Key'],
  [/Sec-WebSocket-Version/, 'Sec-WebSocket-Version'],
  [/Sec-WebSocket-Protocol/, 'Sec-WebSocket-Protocol'],
  [/Sec-WebSocket-Extensions/, 'Sec-WebSocket-Extensions'],
];

/**
 * A WebSocket handshake on `/graphql` that ws refuses (a missing or malformed
 * `Sec-WebSocket-Key`, a version other than 13 or 8, an unparsable subprotocol or extension
 * list): a 400 problem+json naming the header, with the request id, where ws wrote plain text.
 * ws's `wsClientError` event, which replaces its own answer when listened to.
 */
export function refuseHandshake(server: Server, err: Error, socket: Duplex, req: IncomingMessage): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const header = HANDSHAKE_HEADERS.find(([re]) => re.test(err.message))?.[1];
  const detail = `The WebSocket handshake was refused: ${err.message}`;
  const refusal = problem(400, detail, header ? [{ pointer: `#/header/${header}`, detail }] : undefined);
  const headers: Record<string, string> = header === 'Sec-WebSocket-Version' ? { 'Sec-WebSocket-Version': '13, 8' } : {};
  const requestId = requestIdOf(req.headers['x-request-id']);
  endWithProblem(socket, refusal, SUBSCRIPTIONS_PATH, requestId, headers);
  reportEarlyAnswer(server, { method: 'GET', route: SUBSCRIPTIONS_PATH, api: 'graphql', status: 400, requestId, path: SUBSCRIPTIONS_PATH, refused: 'handshake' });
}
