import type { EntityManager } from '@mikro-orm/postgresql';
import { createParameterDecorator, type AuthChecker } from 'type-graphql';
import { callerScope } from './db/caller-budget';
import { auditBypass } from './db/tenancy';
import { AppError } from './errors/app-error';
import { Loaders } from './loaders';
import type { RuntimeState } from './state';

export type Caller =
  | {
      kind: 'key';
      keyId: string;
      communityId: string;
      scopes: Set<string>;
      /** Its last write position as of this request's admission (read-your-writes on replicas; src/rate-limit/limiter.ts). */
      position?: bigint;
    }
  | { kind: 'operator' };

/**
 * One caller's key for what is kept per caller: its connection budget (src/db/caller-budget.ts)
 * and its Idempotency-Keys (src/http/idempotency.ts: two API keys of one community never see
 * each other's answers).
 */
export const callerKey = (caller: Caller): string => (caller.kind === 'key' ? `key:${caller.keyId}` : 'operator');

/** A key's last write position as read with its request's count (read-your-writes); undefined when not known. */
export const callerPosition = (caller: Caller): bigint | undefined => (caller.kind === 'key' ? caller.position : undefined);

/**
 * Fills the request's caller scope once the caller is known: its connection budget key and
 * the community the database's row-level security applies to the request's work; an
 * operator's request spans communities and runs under the tenancy bypass, logged
 * (src/db/tenancy.ts).
 */
export function enterCaller(caller: Caller, log?: (fields: object, msg: string) => void): void {
  const scope = callerScope.getStore();
  if (!scope) return;
  scope.key = callerKey(caller);
  if (caller.kind === 'key') scope.communityId = caller.communityId;
  else if (!scope.bypass) {
    // The operator's request: the named bypass, recorded per request.
    scope.bypass = 'operator request';
    auditBypass(scope.bypass, () => undefined);
    log?.({ reason: scope.bypass }, 'tenancy bypass: this request runs across communities');
  }
}

const TESTING = process.env.NODE_ENV === 'test';

/**
 * The community the application's own filters use. Normally the caller's; for the proof that
 * the database's layer stands on its own (test/platform/row-level-security.test.ts), and only when
 * NODE_ENV=test, TENANCY_TEST_APP_COMMUNITY=<from>=<to> makes the application filter the
 * requests of community <from> as if they were <to>'s, while the database still holds them
 * to <from>.
 */
function appCommunity(communityId: string): string {
  // NODE_ENV is read once (each read of process.env is a lookup in the C environment); the swap
  // itself is read per call, as the test sets and clears it.
  const swap = TESTING ? process.env.TENANCY_TEST_APP_COMMUNITY : undefined;
  if (!swap) return communityId;
  const [from, to] = swap.split('=');
  return from === communityId && to ? to : communityId;
}

/** A service class: built per request around the request's EntityManager (and the runtime's state, for those that read it). */
export type ServiceClass<T> = new (em: EntityManager, state: RuntimeState) => T;

export interface Context {
  caller?: Caller;
  em: EntityManager;
  /** Per-request DataLoaders, each built on first use (src/loaders.ts). */
  loaders: Loaders;
  /** The request's instance of a service, built on first use. */
  service<T>(service: ServiceClass<T>): T;
  /** What the runtime keeps for its life (src/state.ts): the event hub, settings. */
  state: RuntimeState;
  requestId: string;
  /**
   * /graphql: filled with the operation Apollo Server resolved, for the request's metrics and
   * log line (an object the app keeps a reference to: Apollo Server clones the context).
   */
  operation?: { type?: string; name?: string };
}

const NO_COMMUNITY = '00000000-0000-0000-0000-000000000000';

export function createContext(em: EntityManager, caller: Caller | undefined, requestId: string, state: RuntimeState): Context {
  // keepTransactionContext: a request with an Idempotency-Key runs in one transaction (src/http/idempotency.ts).
  const fork = em.fork({ clear: true, useContext: false, keepTransactionContext: true }) as EntityManager;
  const services = new Map<ServiceClass<unknown>, unknown>();
  const communityId = caller?.kind === 'key' ? appCommunity(caller.communityId) : NO_COMMUNITY;
  return {
    caller,
    em: fork,
    loaders: new Loaders({ em: fork, communityId }),
    service<T>(service: ServiceClass<T>): T {
      let instance = services.get(service) as T | undefined;
      if (instance === undefined) services.set(service, (instance = new service(fork, state)));
      return instance;
    },
    state,
    requestId,
  };
}

/** The community of a key caller; the operator has none and may not touch community data. */
export function communityOf(ctx: Context): string {
  if (ctx.caller?.kind === 'key') return appCommunity(ctx.caller.communityId);
  throw new AppError('FORBIDDEN', 'This operation needs a community API key');
}

/**
 * `@Community() communityId: string` on a resolver parameter: the caller's community, the
 * one tenant every service call names. Resolved after `@Authorized`, so the scope check
 * answers first; an operator caller gets FORBIDDEN.
 */
export function Community() {
  return createParameterDecorator<Context>(({ context }) => communityOf(context));
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
