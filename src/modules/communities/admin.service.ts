import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey } from '../../auth/api-key.entity';
import { KEY_CHANGED, KEY_EVENTS, KEY_REVOKED } from '../../auth/key-cache';
import { generateKey, hashKey } from '../../auth/keys';
import { invalidScopes } from '../../auth/scopes';
import { isId } from '../../common/ids';
import { Checks } from '../../common/validate';
import { transaction } from '../../db/transaction';
import { AppError, notFound } from '../../errors/app-error';
import type { RuntimeState } from '../../state';
import { Community } from './community.entity';
import { recordKeyEvent } from './key-events';

export interface CreateKeyArgs {
  communityId: string;
  scopes?: string[] | null;
  rateLimitPerHour?: number | null;
  /** Optional expiry; must lie in the future. */
  expiresAt?: Date | null;
}

export interface RotateKeyArgs {
  id: string;
  /** How long the old key stays valid beside its successor (default 24 h, at most 30 days; 0: not at all). */
  overlapSeconds?: number | null;
  /** The successor's expiry (default: none). */
  expiresAt?: Date | null;
}

export const DEFAULT_ROTATION_OVERLAP_SECONDS = 86_400;
export const MAX_ROTATION_OVERLAP_SECONDS = 30 * 86_400;

function checkExpiry(checks: Checks, expiresAt: Date | null | undefined): void {
  if (expiresAt == null) return;
  if (!(expiresAt instanceof Date) || Number.isNaN(expiresAt.getTime())) checks.add(['expiresAt'], 'expiresAt must be an ISO 8601 timestamp');
  else if (expiresAt.getTime() <= Date.now()) checks.add(['expiresAt'], 'expiresAt must lie in the future');
}

/** Platform operations: communities and their API keys (docs/security.md, "API keys"). */
export class AdminService {
  constructor(
    private readonly em: EntityManager,
    private readonly state: RuntimeState,
  ) {}

  async createCommunity(name: string): Promise<Community> {
    new Checks().string('name', name, { min: 1, max: 256 }).done(['input']);
    const community = this.em.create(Community, { name });
    await this.em.flush();
    return community;
  }

  async createKey(args: CreateKeyArgs): Promise<{ key: ApiKey; plain: string }> {
    const checks = new Checks();
    const bad = invalidScopes(args.scopes ?? []);
    if (bad.length) checks.add(['scopes'], `Unknown scopes: ${bad.join(', ')}`);
    checks.int('rateLimitPerHour', args.rateLimitPerHour, { min: 1 });
    checkExpiry(checks, args.expiresAt);
    checks.done(['input']);
    const community = isId(args.communityId) ? await this.em.findOne(Community, { id: args.communityId }) : null;
    if (!community) throw notFound('Community');
    return transaction(this.em, async (tem) => {
      const plain = generateKey();
      const key = tem.create(ApiKey, {
        communityId: community.id,
        keyHash: hashKey(plain),
        scopes: [...new Set(args.scopes ?? [])],
        rateLimitPerHour: args.rateLimitPerHour ?? null,
        expiresAt: args.expiresAt ?? null,
      });
      await tem.flush();
      await recordKeyEvent(tem, 'api_key.created', key.id);
      return { key, plain };
    });
  }

  /**
   * Issues a successor with the same community, scopes and rate limit, and lets the old key run
   * out after the overlap (its expiry becomes the earlier of its own and now + overlap). A
   * revoked, expired or already rotated key cannot be rotated (409): rotate its successor.
   */
  async rotateKey(args: RotateKeyArgs): Promise<{ key: ApiKey; plain: string; previous: ApiKey }> {
    const overlap = args.overlapSeconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS;
    const checks = new Checks();
    if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_ROTATION_OVERLAP_SECONDS) {
      checks.add(['overlapSeconds'], `overlapSeconds must be an integer from 0 to ${MAX_ROTATION_OVERLAP_SECONDS} (30 days)`);
    }
    checkExpiry(checks, args.expiresAt);
    checks.done(['input']);
    if (!isId(args.id)) throw notFound('API key');
    const result = await transaction(this.em, async (tem) => {
      const previous = await tem.findOne(ApiKey, { id: args.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!previous) throw notFound('API key');
      if (previous.revokedAt) throw new AppError('CONFLICT', 'The API key is revoked; create a new one instead');
      if (previous.replacedBy) throw new AppError('CONFLICT', 'The API key was already rotated; rotate its successor instead');
      const now = Date.now();
      if (previous.expiresAt && previous.expiresAt.getTime() <= now) throw new AppError('CONFLICT', 'The API key has expired; create a new one instead');
      const plain = generateKey();
      const key = tem.create(ApiKey, {
        communityId: previous.communityId,
        keyHash: hashKey(plain),
        scopes: [...previous.scopes],
        rateLimitPerHour: previous.rateLimitPerHour ?? null,
        expiresAt: args.expiresAt ?? null,
      });
      const end = new Date(now + overlap * 1000);
      previous.expiresAt = previous.expiresAt && previous.expiresAt < end ? previous.expiresAt : end;
      previous.replacedBy = key.id;
      await tem.flush();
      await recordKeyEvent(tem, 'api_key.created', key.id);
      await recordKeyEvent(tem, 'api_key.rotated', previous.id);
      return { key, plain, previous };
    });
    this.state.get(KEY_EVENTS).emit(KEY_CHANGED, result.previous.id); // this instance's cache forgets the old expiry at once
    return result;
  }

  /** Revoking is idempotent (one `api_key.revoked` event, at the first); an unknown id is a 404. */
  async revokeKey(id: string): Promise<boolean> {
    const key = isId(id) ? await this.em.findOne(ApiKey, { id }) : null;
    if (!key) throw notFound('API key');
    if (!key.revokedAt) {
      await transaction(this.em, async (tem) => {
        const changed = await tem.nativeUpdate(ApiKey, { id: key.id, revokedAt: null }, { revokedAt: new Date() });
        if (changed) await recordKeyEvent(tem, 'api_key.revoked', key.id);
      });
    }
    this.state.get(KEY_EVENTS).emit(KEY_REVOKED, key.id);
    return true;
  }

  /** A community's keys, newest first: what they may do and when they were used, never the key. */
  async listKeys(communityId: string): Promise<ApiKey[]> {
    if (!isId(communityId) || !(await this.em.findOne(Community, { id: communityId }))) throw notFound('Community');
    return this.em.find(ApiKey, { communityId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  }
}
