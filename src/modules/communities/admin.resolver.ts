import { Arg, Authorized, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Resolver } from 'type-graphql';
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
}

@ObjectType({ description: 'A new API key. `key` is shown only here, once.', simpleResolvers: true })
class CreatedApiKey {
  @Field(() => ID)
  id!: string;

  @Field()
  key!: string;

  @Field(() => ID)
  communityId!: string;

  @Field(() => [String])
  scopes!: string[];

  @Field(() => Int, { nullable: true })
  rateLimitPerHour?: number | null;
}

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
    return { id: key.id, key: plain, communityId: key.communityId, scopes: key.scopes, rateLimitPerHour: key.rateLimitPerHour };
  }

  @Authorized('operator')
  @Mutation(() => Boolean)
  revokeApiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    return ctx.service(AdminService).revokeKey(id);
  }
}
