import { createHash } from 'node:crypto';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { NextFunction, Request, Response } from 'express';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import type { Gate } from '../auth/gate';
import { callerKey, createContext, enterCaller, type Context } from '../context';
import { searchOf } from './express';
import { STATUS } from '../errors/problem';
import type { ErrorCode } from '../errors/app-error';
import type { RuntimeState } from '../state';
import { SECRET_BOX } from '../security/secret-box';
import { sendAnswer, type Answer } from '../http/answer';
import { idempotencyKeyOf, runIdempotent, STORED_ERRORS } from '../http/idempotency';

/**
 * Idempotency-Key on /graphql: a mutation sent with the header runs like an idempotent REST
 * POST (src/http/idempotency.ts): in one transaction with its stored answer, 409 while the
 * same key runs, 422 for another request, the stored answer with `Idempotent-Replayed: true`.
 * The gate runs first (its outcome is reused by the Apollo context), so 401/403/429 are never
 * stored. An answer with errors of a stored kind (validation, not found, conflict) is kept
 * like a success, effects included, as without the header; an answer with any other error
 * (internal, unavailable, forbidden) is not stored and its effects are rolled back, so its
 * `data` is cleared: nothing it reported was kept.
 */
const GRAPHQL_STATUS: Record<string, number> = { ...STATUS, INTERNAL_SERVER_ERROR: 500, BAD_USER_INPUT: 400, GRAPHQL_VALIDATION_FAILED: 400, GRAPHQL_PARSE_FAILED: 400 };

function isMutation(body: { query?: unknown; operationName?: unknown }): boolean {
  if (typeof body?.query !== 'string') return false;
  try {
    const ops = parse(body.query).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    const op = typeof body.operationName === 'string' ? ops.find((o) => o.name?.value === body.operationName) : ops.length === 1 ? ops[0] : undefined;
    return op?.operation === 'mutation';
  } catch {
    return false; // Apollo answers the syntax error
  }
}

/** The status that decides whether the answer is stored: the worst error that is not of a stored kind. */
function classify(body: string): number {
  try {
    const { errors } = JSON.parse(body) as { errors?: { extensions?: { code?: string } }[] };
    const statuses = (errors ?? []).map((e) => GRAPHQL_STATUS[e.extensions?.code as ErrorCode] ?? 500).filter((s) => !STORED_ERRORS.has(s));
    return statuses.length ? Math.max(...statuses) : 200;
  } catch {
    return 500;
  }
}

export function graphqlIdempotency(apollo: ApolloServer<Context>, gate: Gate, em: EntityManager, pool: Pool, state: RuntimeState) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const { key, problem } = idempotencyKeyOf(req);
    if (req.method !== 'POST' || (!key && !problem) || !isMutation(req.body)) return next();
    if (problem) {
      res.status(400).json({ errors: [{ message: problem.detail, extensions: { code: 'BAD_USER_INPUT', errors: problem.errors } }] });
      return;
    }
    const outcome = await gate.check(req, res, true);
    res.locals.gateOutcome = outcome; // the Apollo context reuses it: one count per request
    if (!outcome.ok || !outcome.caller) return next();
    const caller = outcome.caller;
    enterCaller(caller); // the connection budget and the database's tenancy, before the transaction opens
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    const { query, variables, operationName } = req.body as Record<string, unknown>;
    let answer: Answer & { discarded?: boolean };
    try {
      answer = await runIdempotent({
        em,
        pool,
        box: state.get(SECRET_BOX),
        owner: callerKey(caller),
        key: key!,
        fingerprint: createHash('sha256').update('POST /graphql\n').update(JSON.stringify([query, variables ?? null, operationName ?? null])).digest('base64url'),
        problemAnswer: (p) => ({ status: p.status, contentType: 'application/json', body: JSON.stringify({ errors: [{ message: p.detail, extensions: { code: p.status === 409 ? 'CONFLICT' : 'BAD_USER_INPUT' } }] }) }),
        run: async (tx) => {
          const response = await apollo.executeHTTPGraphQLRequest({
            httpGraphQLRequest: { method: 'POST', headers, search: searchOf(req.url), body: req.body },
            context: async () => createContext(tx, caller, res.locals.requestId, state),
          });
          const body = response.body.kind === 'complete' ? response.body.string : '';
          const contentType = response.headers.get('content-type') ?? 'application/json';
          return { status: response.status ?? 200, contentType, body, classifyAs: classify(body) };
        },
      });
    } catch (err) {
      return next(err);
    }
    if (answer.discarded && answer.status < 300) {
      // Rolled back: the reported data was not kept.
      const parsed = JSON.parse(answer.body) as Record<string, unknown>;
      if (parsed.data) answer = { ...answer, body: JSON.stringify({ ...parsed, data: null }) };
    }
    sendAnswer(res, answer);
  };
}
