import type { IncomingMessage, Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { getOperationAST, GraphQLError, parse, specifiedRules, validate, type DocumentNode, type ExecutionArgs, type GraphQLSchema, type ValidationRule } from 'graphql';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import { CloseCode, type SubscribePayload } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Gate, GateOutcome } from '../auth/gate';
import { createContext } from '../context';
import { KEY_EVENTS, KEY_REVOKED } from '../auth/key-cache';
import type { RuntimeState } from '../state';
import { KINDS } from '../errors/classify';
import { documentLimitRules, nestingError, type QueryLimits } from './limits';
import { nulError } from './nul-check';
import type { formatError } from './server';
import type { Logger } from '../logger';
import { depthError, JSON_MAX_DEPTH, tooDeep } from '../common/json-depth';
import { refuseHandshake, SUBSCRIPTIONS_PATH } from '../http/upgrade';

export interface SubscriptionLimits {
  /** The document limits of /graphql over HTTP: the same object, built once in app.ts. */
  document: QueryLimits;
  perConnection: number;
  perKey: number;
  maxMessageBytes: number;
  /** How deep the variables may nest (config JSON_MAX_DEPTH, as for HTTP bodies). */
  jsonMaxDepth?: number;
  initTimeoutMs: number;
  /** How often the key of every open connection is checked again (a revoked key's connections close). */
  keyRecheckMs: number;
}

export interface SubscriptionDeps {
  schema: GraphQLSchema;
  em: EntityManager;
  /** The runtime's state: the contexts' (services read it) and the key revocations. */
  state: RuntimeState;
  gate: Gate;
  logger: Logger;
  limits: SubscriptionLimits;
  /** The error formatter of /graphql over HTTP (graphql/server.ts). */
  format: ReturnType<typeof formatError>;
  /** The client address as Express computes it for HTTP requests (TRUST_PROXY honoured). */
  clientAddress(request: IncomingMessage): string;
}

/** One acknowledged connection: its key, and the subscriptions it holds (by subscribe payload, unique per subscribe). */
interface Connection {
  apiKey: string;
  keyId: string;
  address: string;
  live: Set<SubscribePayload>;
}

/** 1013 "Try Again Later" (RFC 6455 registry): the key could not be checked now. */
const TRY_AGAIN_LATER = 1013;

/** A refusal as a graphql-ws error: the gate's code, and `retryAfter` (seconds) where HTTP would send `Retry-After`. */
const refusal = (outcome: Extract<GateOutcome, { ok: false }>) =>
  new GraphQLError(outcome.detail, {
    extensions: { code: KINDS[outcome.code].graphql, ...(outcome.retryAfter !== undefined ? { retryAfter: outcome.retryAfter } : {}) },
  });

/** The codes Apollo Server gives parse and validation errors over HTTP. */
const withCode = (error: GraphQLError, code: ApolloServerErrorCode) =>
  new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, extensions: { ...error.extensions, code } });

const validationError = (message: string) => new GraphQLError(message, { extensions: { code: KINDS.VALIDATION.graphql } });

/**
 * Live subscriptions per connection and per API key on this instance. A slot is taken when
 * a subscribe passed every check and given back when the subscription ends (graphql-ws's
 * `onComplete`: completed by the client, finished, or its socket closed) or, at the latest,
 * when its connection closes.
 */
class Slots {
  private readonly perKey = new Map<string, number>();
  /** Live subscriptions on this instance (metrics). */
  live = 0;

  constructor(private readonly limits: Pick<SubscriptionLimits, 'perConnection' | 'perKey'>) {}

  take(conn: Connection, payload: SubscribePayload): GraphQLError | undefined {
    if (conn.live.size >= this.limits.perConnection) {
      return new GraphQLError(`Subscriptions limit of ${this.limits.perConnection} per connection reached; complete one first`, {
        extensions: { code: KINDS.RATE_LIMITED.graphql },
      });
    }
    const held = this.perKey.get(conn.keyId) ?? 0;
    if (held >= this.limits.perKey) {
      return new GraphQLError(`Subscriptions limit of ${this.limits.perKey} per API key reached; complete one first`, {
        extensions: { code: KINDS.RATE_LIMITED.graphql },
      });
    }
    conn.live.add(payload);
    this.live++;
    this.perKey.set(conn.keyId, held + 1);
    return undefined;
  }

  release(conn: Connection, payload: SubscribePayload): void {
    if (!conn.live.delete(payload)) return;
    this.live--;
    const held = (this.perKey.get(conn.keyId) ?? 1) - 1;
    if (held > 0) this.perKey.set(conn.keyId, held);
    else this.perKey.delete(conn.keyId);
  }

  releaseAll(conn: Connection): void {
    for (const payload of [...conn.live]) this.release(conn, payload);
  }
}

/**
 * GraphQL subscriptions over the `graphql-ws` protocol on /graphql (the same path as HTTP
 * queries; the WebSocket upgrade tells them apart), under the governance of HTTP requests
 * (docs/events.md, GraphQL subscriptions):
 * - connecting: the API key in the connection parameters, `{ "apiKey": "..." }`, is checked
 *   by the gate (unknown keys count against the address's failed-attempt limit); a missing,
 *   unknown or revoked key closes the socket with 4403, an unreachable store with 1013;
 * - each `subscribe`: the key is admitted again and counted against its hourly budget like
 *   one HTTP request; the document is parsed with the same token limit and validated with
 *   the same limit rules as over HTTP, then the NUL check; only subscriptions are served;
 *   then the per-connection and per-key caps. Every refusal is an `error` message;
 * - messages over `maxMessageBytes` close the socket with 1009 (ws `maxPayload`); a
 *   connection that sends no `connection_init` in `initTimeoutMs` is closed with 4408.
 */
export function attachSubscriptions(server: Server, deps: SubscriptionDeps) {
  const { schema, gate, limits, format } = deps;
  const rules: ValidationRule[] = [...specifiedRules, ...documentLimitRules(limits.document)];
  const slots = new Slots(limits);
  const wss = new WebSocketServer({ server, path: SUBSCRIPTIONS_PATH, maxPayload: limits.maxMessageBytes });
  wss.on('wsClientError', (err, socket, req) => refuseHandshake(server, err, socket, req));
  const formatted = (errors: readonly GraphQLError[]) => errors.map((e) => format(e.toJSON(), e));

  // Open connections, checked again every keyRecheckMs (through the gate and its key cache, so
  // mostly without SQL): a key revoked or gone closes its sockets with 4403 and their
  // subscriptions end. A revocation on this instance closes them at once.
  const open = new Map<Connection, Extra['socket']>();
  const recheck = async () => {
    for (const [conn, socket] of open) {
      const outcome = await gate.admit(conn.apiKey, conn.address, false).catch(() => undefined);
      if (outcome && !outcome.ok && (outcome.code === 'FORBIDDEN' || outcome.code === 'UNAUTHENTICATED')) socket.close(CloseCode.Forbidden, outcome.detail);
    }
  };
  const rechecks = setInterval(() => void recheck(), limits.keyRecheckMs).unref();
  const revoked = (keyId: string) => {
    for (const [conn, socket] of open) if (conn.keyId === keyId) socket.close(CloseCode.Forbidden, 'The API key has been revoked');
  };
  const keyEvents = deps.state.get(KEY_EVENTS);
  keyEvents.on(KEY_REVOKED, revoked);

  /** `connection_init`: the key is checked (not charged); a refusal closes the socket with the reason. */
  const connect = async (extra: Extra & { conn?: Connection }, apiKey: unknown): Promise<boolean> => {
    if (typeof apiKey !== 'string' || apiKey === '') return false;
    const address = deps.clientAddress(extra.request);
    const outcome = await gate.admit(apiKey, address, false);
    if (!outcome.ok) {
      extra.socket.close(outcome.code === 'UNAVAILABLE' ? TRY_AGAIN_LATER : CloseCode.Forbidden, outcome.detail);
      return false;
    }
    if (outcome.caller?.kind !== 'key') return false;
    extra.conn = { apiKey, keyId: outcome.caller.keyId, address, live: new Set() };
    open.set(extra.conn, extra.socket);
    return true;
  };

  /** Every check of a `subscribe`, in the order of an HTTP request: admission, parse, validation, NUL, then the caps. */
  const admitSubscribe = async (conn: Connection, payload: SubscribePayload): Promise<ExecutionArgs | GraphQLError[]> => {
    const admitted = await gate.admit(conn.apiKey, conn.address);
    if (!admitted.ok) return [refusal(admitted)];
    const nested = nestingError(payload.query, limits.jsonMaxDepth ?? JSON_MAX_DEPTH);
    if (nested) return [nested];
    let document: DocumentNode;
    try {
      document = parse(payload.query, { maxTokens: limits.document.maxTokens });
    } catch (err) {
      if (err instanceof GraphQLError) return [withCode(err, ApolloServerErrorCode.GRAPHQL_PARSE_FAILED)];
      throw err;
    }
    const invalid = validate(schema, document, rules);
    if (invalid.length) return invalid.map((e) => withCode(e, ApolloServerErrorCode.GRAPHQL_VALIDATION_FAILED));
    const operation = getOperationAST(document, payload.operationName);
    if (!operation) {
      return [
        withCode(
          new GraphQLError(payload.operationName ? `Unknown operation named "${payload.operationName}".` : 'Must provide operation name if query contains multiple operations.'),
          ApolloServerErrorCode.BAD_USER_INPUT,
        ),
      ];
    }
    if (operation.operation !== 'subscription') {
      return [validationError(`Only subscriptions are served over WebSocket; send a ${operation.operation} over HTTP (POST /graphql)`)];
    }
    const deep = tooDeep(payload.variables, limits.jsonMaxDepth ?? JSON_MAX_DEPTH);
    if (deep) return [depthError(deep, limits.jsonMaxDepth ?? JSON_MAX_DEPTH)];
    const nul = nulError(operation, payload.variables ?? undefined);
    if (nul) return [nul];
    const full = slots.take(conn, payload);
    if (full) return [full];
    return {
      schema,
      document,
      operationName: payload.operationName,
      variableValues: payload.variables,
      contextValue: createContext(deps.em, admitted.caller, randomUUID(), deps.state),
    };
  };

  /** An unexpected failure: logged, and answered without internals (the socket and its other subscriptions stay). */
  const internal = (what: string) => (err: unknown) => {
    deps.logger.error({ err }, what);
    return [new GraphQLError('Internal server error', { extensions: { code: KINDS.INTERNAL.graphql } })];
  };

  const cleanup = useServer<Record<string, unknown>, { conn: Connection }>(
    {
      schema,
      connectionInitWaitTimeout: limits.initTimeoutMs,
      onConnect: async (ctx) => {
        try {
          return await connect(ctx.extra, ctx.connectionParams?.apiKey);
        } catch (err) {
          internal('graphql-ws connect failed')(err);
          ctx.extra.socket.close(CloseCode.InternalServerError, 'Internal server error');
          return false;
        }
      },
      // graphql-ws refuses a subscribe before the connection is acknowledged, so `conn` is set.
      onSubscribe: (ctx, _id, payload) => admitSubscribe(ctx.extra.conn!, payload).catch(internal('graphql-ws subscribe failed')),
      onComplete: (ctx, _id, payload) => {
        if (ctx.extra.conn) slots.release(ctx.extra.conn, payload);
      },
      onClose: (ctx) => {
        if (ctx.extra.conn) {
          slots.releaseAll(ctx.extra.conn);
          open.delete(ctx.extra.conn);
        }
      },
      // The same presentation as over HTTP: codes, no internals, no "Did you mean" without the IDE.
      onError: (_ctx, _id, _payload, errors) => formatted(errors),
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? { ...result, errors: formatted(result.errors) } : undefined),
    },
    wss,
  );
  wss.on('connection', (socket: Extra['socket']) => {
    // ws has already closed the socket (1009 for a message over maxPayload, 1002 for a bad
    // frame); graphql-ws's own listener would report a client's mistake as an internal error.
    socket.removeAllListeners('error');
    socket.on('error', (err) => deps.logger.info({ err: err.message }, 'websocket client error'));
  });
  wss.on('error', (err) => deps.logger.warn({ err: err.message }, 'websocket server error'));
  return {
    /** Live subscriptions on this instance. */
    live: () => slots.live,
    async close() {
      clearInterval(rechecks);
      keyEvents.off(KEY_REVOKED, revoked);
      await cleanup.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
