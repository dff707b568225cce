import { createHash, timingSafeEqual } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import type { Pool } from 'pg';
import { callerKey, type Caller } from '../context';
import { isUnavailable, RETRY_AFTER_SECONDS } from '../errors/classify';
import { RequestLimiter, StoreUnavailableError, type Verdict } from '../rate-limit/limiter';
import { findKey } from './authenticate';
import { KeyCache } from './key-cache';
import { KeyUsage } from './key-usage';

export interface GateConfig {
  rateLimitPerHour: number;
  authFailuresPerWindow: number;
  adminToken: string | undefined;
  keyCacheTtlMs: number;
}

export type GateOutcome =
  | { ok: true; caller?: Caller }
  | { ok: false; code: 'UNAUTHENTICATED' | 'FORBIDDEN' | 'RATE_LIMITED' | 'UNAVAILABLE'; detail: string; retryAfter?: number };

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Header `X-API-Key` wins over query `api_key` (docs/api.md). */
export function presentedKey(req: Request): string | undefined {
  const header = req.get('x-api-key');
  if (header !== undefined) return header;
  const query = req.query.api_key;
  return typeof query === 'string' ? query : undefined;
}

/**
 * Authenticates a request and counts it against its key's hourly budget. Shared by
 * the REST facade and /graphql, so both enforce the same keys and limits.
 */
export class Gate {
  private readonly keys: KeyCache;
  /** lastUsedAt, batched off the request path. */
  readonly usage: KeyUsage;

  constructor(
    private readonly pool: Pool,
    private readonly limiter: RequestLimiter,
    private readonly failures: RequestLimiter,
    private readonly config: GateConfig,
    /** Revocations (KEY_EVENTS of the runtime's state): the cache forgets a revoked key at once. */
    keyEvents: EventEmitter,
    onUsageError: (err: Error) => void = () => undefined,
    /** Told of every 429 (metrics): the key's budget, or an address's failed attempts. */
    private readonly onRefused: (reason: 'key_budget' | 'auth_failures') => void = () => undefined,
  ) {
    this.keys = new KeyCache(config.keyCacheTtlMs, keyEvents);
    this.usage = new KeyUsage(pool, onUsageError);
  }

  isOperator(req: Request): boolean {
    const auth = req.get('authorization');
    if (!auth || !this.config.adminToken || !auth.startsWith('Bearer ')) return false;
    return timingSafeEqual(digest(auth.slice(7).trim()), digest(this.config.adminToken));
  }

  /** `optional`: no credential at all passes without a caller (GraphQL introspection). */
  async check(req: Request, res: Response, optional = false): Promise<GateOutcome> {
    if (this.isOperator(req)) return { ok: true, caller: { kind: 'operator' } };
    const plain = presentedKey(req);
    if (plain === undefined || plain === '') {
      return optional ? { ok: true } : { ok: false, code: 'UNAUTHENTICATED', detail: 'An API key is required (X-API-Key header or api_key query parameter)' };
    }
    const { verdict, ...outcome } = await this.admit(plain, req.ip ?? 'unknown');
    if (verdict) {
      res.setHeader('X-RateLimit-Limit', String(verdict.limit));
      res.setHeader('X-RateLimit-Remaining', String(verdict.remaining));
      res.setHeader('X-RateLimit-Reset', String(verdict.reset));
    }
    return outcome;
  }

  /**
   * Authenticates a presented key and, with `charge`, counts one request against its hourly
   * budget. Every HTTP request is admitted here, and so is each graphql-ws `subscribe`
   * (a WebSocket connection itself is only authenticated, `charge` false). `address`: the
   * client's, for the failed-attempt limit.
   */
  async admit(plain: string, address: string, charge = true): Promise<GateOutcome & { verdict?: Verdict }> {
    try {
      const key = await findKey(this.pool, plain, this.keys);
      if (!key) {
        // Failed attempts are limited per client address, so keys cannot be guessed.
        const verdict = await this.failures.consume(address, this.config.authFailuresPerWindow);
        if (!verdict.allowed) {
          this.onRefused('auth_failures');
          return { ok: false, code: 'RATE_LIMITED', detail: 'Too many failed authentication attempts from this address', retryAfter: verdict.retryAfter };
        }
        return { ok: false, code: 'UNAUTHENTICATED', detail: 'The API key is not valid' };
      }
      if (key.revoked) return { ok: false, code: 'FORBIDDEN', detail: 'The API key has been revoked' };
      if (key.expiresAt !== null && key.expiresAt <= Date.now()) return { ok: false, code: 'UNAUTHENTICATED', detail: 'The API key has expired' };
      this.usage.touch(key.keyId);
      const caller: Caller = { kind: 'key', keyId: key.keyId, communityId: key.communityId, scopes: key.scopes };
      if (!charge) return { ok: true, caller };
      const verdict = await this.limiter.consume(key.keyId, key.rateLimitPerHour ?? this.config.rateLimitPerHour, callerKey(caller));
      if (verdict.position !== undefined) caller.position = verdict.position;
      if (!verdict.allowed) {
        this.onRefused('key_budget');
        return { ok: false, code: 'RATE_LIMITED', detail: 'The API key exceeded its hourly request allowance', retryAfter: verdict.retryAfter, verdict };
      }
      return { ok: true, caller, verdict };
    } catch (err) {
      if (err instanceof StoreUnavailableError || isUnavailable(err)) {
        return { ok: false, code: 'UNAVAILABLE', detail: 'The service is temporarily unavailable; try again shortly.', retryAfter: RETRY_AFTER_SECONDS };
      }
      throw err;
    }
  }
}
