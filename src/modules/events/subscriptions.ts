import type { Server } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import { findKey } from '../../auth/authenticate';
import { createContext, type Caller } from '../../context';
import type { Logger } from '../../logger';

/**
 * GraphQL subscriptions over the `graphql-ws` protocol on /graphql (the same path as HTTP
 * queries; the WebSocket upgrade tells them apart). The API key travels in the connection
 * parameters, `{ "apiKey": "..." }`: an unknown or revoked key closes the socket with 4403.
 */
export function attachSubscriptions(server: Server, deps: { schema: GraphQLSchema; em: EntityManager; pool: Pool; logger: Logger }) {
  const wss = new WebSocketServer({ server, path: '/graphql' });
  const cleanup = useServer<Record<string, unknown>, { caller?: Caller }>(
    {
      schema: deps.schema,
      onConnect: async (ctx) => {
        const apiKey = ctx.connectionParams?.apiKey;
        if (typeof apiKey !== 'string') return false;
        const key = await findKey(deps.pool, apiKey);
        if (!key || key.revoked) return false;
        ctx.extra.caller = { kind: 'key', keyId: key.keyId, communityId: key.communityId, scopes: key.scopes };
        return true;
      },
      context: (ctx) => createContext(deps.em, ctx.extra.caller, randomUUID()),
    },
    wss,
  );
  wss.on('error', (err) => deps.logger.warn({ err: err.message }, 'websocket server error'));
  return {
    async close() {
      await cleanup.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
