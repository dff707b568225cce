import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuthChecker } from 'type-graphql';
import { AppError } from './errors/app-error';
import { createLoaders, type Loaders } from './loaders';

export type Caller =
  | { kind: 'key'; keyId: string; communityId: string; scopes: Set<string> }
  | { kind: 'operator' };

export interface Context {
  caller?: Caller;
  em: EntityManager;
  loaders: Loaders;
  requestId: string;
}

export function createContext(em: EntityManager, caller: Caller | undefined, requestId: string): Context {
  // keepTransactionContext: a request with an Idempotency-Key runs in one transaction (src/rest/idempotency.ts).
  const fork = em.fork({ clear: true, useContext: false, keepTransactionContext: true }) as EntityManager;
  return { caller, em: fork, loaders: createLoaders(fork, caller), requestId };
}

/** The community of a key caller; the operator has none and may not touch community data. */
export function communityOf(ctx: Context): string {
  if (ctx.caller?.kind === 'key') return ctx.caller.communityId;
  throw new AppError('FORBIDDEN', 'This operation needs a community API key');
}

/**
 * `@Authorized('groups:read')` on root fields; `@Authorized('operator')` on platform
 * mutations. Scopes are checked here only, for REST and GraphQL alike.
 */
export const authChecker: AuthChecker<Context> = ({ context }, roles) => {
  const caller = context.caller;
  if (!caller) throw new AppError('UNAUTHENTICATED', 'An API key is required');
  if (roles.includes('operator')) {
    if (caller.kind === 'operator') return true;
    throw new AppError('FORBIDDEN', 'This operation is reserved for the platform operator');
  }
  if (caller.kind !== 'key') throw new AppError('FORBIDDEN', 'This operation needs a community API key');
  if (roles.every((role) => caller.scopes.has(role))) return true;
  throw new AppError('FORBIDDEN', `The API key lacks the scope ${roles.join(', ')}`);
};
