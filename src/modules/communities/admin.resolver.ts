import { Arg, Authorized, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { ApiKey } from '../../auth/api-key.entity';
import type { Context } from '../../context';
import { AdminService } from './admin.service';
import { Community } from './community.entity';

@InputType()
class CreateCommunityInput {
  @Field()
  name!: string;
}

@InputType()
class CreateApiKeyInput {
  @Field(() => ID)
  communityId!: string;

  @Field(() => [String], { nullable: true, description: 'e.g. groups, members:read. None: all resources.' })
  scopes?: string[] | null;

  @Field(() => Int, { nullable: true, description: 'Requests per hour; default RATE_LIMIT_PER_HOUR.' })
  rateLimitPerHour?: number | null;

  @Field(() => Date, { nullable: true, description: 'After this instant the key is refused (401). Must lie in the future; null: no expiry.' })
  expiresAt?: Date | null;
}

@InputType()
class RotateApiKeyInput {
  @Field(() => ID, { description: 'The key to replace.' })
  id!: string;

  @Field(() => Int, { nullable: true, description: 'Seconds the old key stays valid beside its successor: 0 to 2592000 (30 days), default 86400 (24 h).' })
  overlapSeconds?: number | null;

  @Field(() => Date, { nullable: true, description: "The successor's expiry; null: none." })
  expiresAt?: Date | null;
}

/** What every view of an API key shows (never the key or its hash). */
@ObjectType({ simpleResolvers: true })
abstract class ApiKeyFields {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  communityId!: string;

  @Field(() => [String])
  scopes!: string[];

  @Field(() => Int, { nullable: true })
  rateLimitPerHour?: number | null;

  @Field(() => Date, { nullable: true, description: 'After this instant the key is refused (401).' })
  expiresAt?: Date | null;
}

@ObjectType({ description: 'A new API key. `key` is shown only here, once.', simpleResolvers: true })
class CreatedApiKey extends ApiKeyFields {
  @Field()
  key!: string;
}

@ObjectType({ description: 'An API key as the operator sees it: never the key or its hash.', simpleResolvers: true })
class ApiKeyInfo extends ApiKeyFields {
  @Field()
  createdAt!: Date;

  @Field(() => Date, { nullable: true, description: 'Last successful use, to within about a minute (recorded in batches).' })
  lastUsedAt?: Date | null;

  @Field(() => Date, { nullable: true })
  revokedAt?: Date | null;

  @Field(() => ID, { nullable: true, description: 'The successor a rotation issued.' })
  replacedBy?: string | null;
}

@ObjectType({ description: 'A rotation: the successor (its key shown only here) and the old key, valid until its `expiresAt`.', simpleResolvers: true })
class RotatedApiKey {
  @Field(() => CreatedApiKey)
  successor!: CreatedApiKey;

  @Field(() => ApiKeyInfo)
  previous!: ApiKeyInfo;
}

const created = (key: ApiKey, plain: string): CreatedApiKey => ({
  id: key.id,
  key: plain,
  communityId: key.communityId,
  scopes: key.scopes,
  rateLimitPerHour: key.rateLimitPerHour ?? null,
  expiresAt: key.expiresAt ?? null,
});

const info = (key: ApiKey): ApiKeyInfo => ({
  id: key.id,
  communityId: key.communityId,
  scopes: key.scopes,
  rateLimitPerHour: key.rateLimitPerHour ?? null,
  createdAt: key.createdAt,
  expiresAt: key.expiresAt ?? null,
  lastUsedAt: key.lastUsedAt ?? null,
  revokedAt: key.revokedAt ?? null,
  replacedBy: key.replacedBy ?? null,
});

@Resolver()
export class AdminResolver {
  @Authorized('operator')
  @Mutation(() => Community)
  createCommunity(@Arg('input', () => CreateCommunityInput) input: CreateCommunityInput, @Ctx() ctx: Context) {
    return ctx.service(AdminService).createCommunity(input.name);
  }

  @Authorized('operator')
  @Mutation(() => CreatedApiKey)
  async createApiKey(@Arg('input', () => CreateApiKeyInput) input: CreateApiKeyInput, @Ctx() ctx: Context) {
    const { key, plain } = await ctx.service(AdminService).createKey(input);
    return created(key, plain);
  }

  @Authorized('operator')
  @Mutation(() => RotatedApiKey, { description: 'Issues a successor (same community, scopes and rate limit); the old key stays valid for the overlap, then expires.' })
  async rotateApiKey(@Arg('input', () => RotateApiKeyInput) input: RotateApiKeyInput, @Ctx() ctx: Context): Promise<RotatedApiKey> {
    const { key, plain, previous } = await ctx.service(AdminService).rotateKey(input);
    return { successor: created(key, plain), previous: info(previous) };
  }

  @Authorized('operator')
  @Mutation(() => Boolean)
  revokeApiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    return ctx.service(AdminService).revokeKey(id);
  }

  @Authorized('operator')
  @Query(() => [ApiKeyInfo], { description: "A community's API keys, newest first." })
  async apiKeys(@Arg('communityId', () => ID) communityId: string, @Ctx() ctx: Context): Promise<ApiKeyInfo[]> {
    return (await ctx.service(AdminService).listKeys(communityId)).map(info);
  }
}
