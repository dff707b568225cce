import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey } from '../../auth/api-key.entity';
import { KEY_EVENTS, KEY_REVOKED } from '../../auth/key-cache';
import { generateKey, hashKey } from '../../auth/keys';
import { invalidScopes } from '../../auth/scopes';
import { isId } from '../../common/ids';
import { Checks } from '../../common/validate';
import { notFound } from '../../errors/app-error';
import type { RuntimeState } from '../../state';
import { Community } from './community.entity';

export interface CreateKeyArgs {
  communityId: string;
  scopes?: string[] | null;
  rateLimitPerHour?: number | null;
}

/** Platform operations: communities and their API keys. */
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
    checks.done(['input']);
    const community = isId(args.communityId) ? await this.em.findOne(Community, { id: args.communityId }) : null;
    if (!community) throw notFound('Community');
    const plain = generateKey();
    const key = this.em.create(ApiKey, {
      communityId: community.id,
      keyHash: hashKey(plain),
      scopes: [...new Set(args.scopes ?? [])],
      rateLimitPerHour: args.rateLimitPerHour ?? null,
    });
    await this.em.flush();
    return { key, plain };
  }

  /** Revoking is idempotent; an unknown id is a 404. */
  async revokeKey(id: string): Promise<boolean> {
    const key = isId(id) ? await this.em.findOne(ApiKey, { id }) : null;
    if (!key) throw notFound('API key');
    if (!key.revokedAt) {
      key.revokedAt = new Date();
      await this.em.flush();
    }
    this.state.get(KEY_EVENTS).emit(KEY_REVOKED, key.id);
    return true;
  }
}
