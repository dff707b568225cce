import { EXPECTED_VERSION } from '../../db/version';
import { Arg, Args, Authorized, Ctx, FieldResolver, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pageOf } from '../../common/pagination';
import { Community, type Context } from '../../context';
import { AdditionalField, Icon } from './additional-field.entity';
import {
  AdditionalFieldListArgs,
  AdditionalFieldRef,
  CreateAdditionalFieldInput,
  UpdateAdditionalFieldInput,
} from './additional-field.inputs';
import { AdditionalFieldService } from './additional-field.service';
import type { Parent } from '../../graphql/parent';

export const AdditionalFieldPage = pageOf(AdditionalField, 'AdditionalField');

@Resolver(() => AdditionalField)
export class AdditionalFieldResolver {
  @Authorized('additional_fields:read')
  @Query(() => AdditionalFieldPage, { description: 'Additional fields of the caller\'s community, one page.' })
  additionalFields(@Args(() => AdditionalFieldListArgs) args: AdditionalFieldListArgs, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(AdditionalFieldService).list(communityId, args);
  }

  @Authorized('additional_fields:read')
  @Query(() => AdditionalField, { description: 'One additional field by id; NOT_FOUND when missing.' })
  additionalField(@Arg('ref', () => AdditionalFieldRef) ref: AdditionalFieldRef, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(AdditionalFieldService).read(communityId, ref);
  }

  @Authorized('additional_fields:write')
  @Mutation(() => AdditionalField)
  createAdditionalField(@Arg('input', () => CreateAdditionalFieldInput) input: CreateAdditionalFieldInput, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(AdditionalFieldService).create(communityId, input);
  }

  @Authorized('additional_fields:write')
  @Mutation(() => AdditionalField)
  updateAdditionalField(
    @Arg('ref', () => AdditionalFieldRef) ref: AdditionalFieldRef,
    @Arg('input', () => UpdateAdditionalFieldInput) input: UpdateAdditionalFieldInput,
    @Community() communityId: string, @Ctx() ctx: Context,
    @Arg('expectedVersion', () => String, { nullable: true, description: EXPECTED_VERSION }) expectedVersion?: string | null,
  ) {
    return ctx.service(AdditionalFieldService).update(communityId, ref, input, expectedVersion);
  }

  @Authorized('additional_fields:write')
  @Mutation(() => Boolean, { description: 'Deletes the field and every member\'s value for it.' })
  deleteAdditionalField(
    @Arg('ref', () => AdditionalFieldRef) ref: AdditionalFieldRef,
    @Community() communityId: string, @Ctx() ctx: Context,
    @Arg('expectedVersion', () => String, { nullable: true, description: EXPECTED_VERSION }) expectedVersion?: string | null,
  ) {
    return ctx.service(AdditionalFieldService).remove(communityId, ref, expectedVersion);
  }

  @FieldResolver(() => Icon, { nullable: true, description: 'null when the field has no icon.' })
  icon(@Root() field: Parent<AdditionalField>): Icon | null {
    return field.iconStyle && field.iconUnicode ? { style: field.iconStyle, unicode: field.iconUnicode } : null;
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: 'Always null: additional fields have no externalId. Present so insert answers share one shape.',
  })
  externalId(): null {
    return null;
  }
}
