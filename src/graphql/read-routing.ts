import type { GraphQLRequestListener } from '@apollo/server';
import { GraphQLError } from 'graphql';
import type { Context } from '../context';
import { callerKey, callerPosition } from '../context';
import { parseToken, type ReadRouter } from '../db/replicas';
import { KINDS } from '../errors/classify';

/**
 * /graphql and the replicas (src/db/replicas.ts): a query reads from a replica that has the
 * caller's last write and the position of the `Consistency-Token` request header; a
 * successful mutation records the caller's position and answers it as `Consistency-Token`,
 * as the REST facade does. The read scope itself is opened around the request in app.ts;
 * the operation's type is known only here, once Apollo has resolved it. One listener for
 * every request (it keeps no per-request state): src/graphql/server.ts runs its hooks.
 */
export function readRouting(reads: ReadRouter | undefined): GraphQLRequestListener<Context> {
  return {
    async didResolveOperation({ operation, request, contextValue }) {
      const token = parseToken(request.http?.headers.get('consistency-token') ?? undefined);
      if (token === null) {
        const detail = 'Consistency-Token must be a token from a Consistency-Token response header (16 hexadecimal digits)';
        throw new GraphQLError(detail, {
          extensions: { code: KINDS.VALIDATION.graphql, errors: [{ path: ['Consistency-Token'], detail }], http: { status: KINDS.VALIDATION.status } },
        });
      }
      const caller = contextValue.caller;
      if (reads && operation?.operation === 'query' && caller) await reads.scope(callerKey(caller), token, callerPosition(caller));
    },
    async willSendResponse({ operation, response, contextValue, errors }) {
      if (!reads || operation?.operation !== 'mutation' || !contextValue.caller || errors?.length) return;
      if (response.body.kind === 'single' && response.body.singleResult.errors?.length) return;
      try {
        response.http.headers.set('consistency-token', await reads.recordWrite(callerKey(contextValue.caller)));
      } catch {
        // the mutation is committed; its answer stands (see the REST facade)
      }
    },
  };
}
