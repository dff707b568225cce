import { Field, ID, InputType, Int } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';
import { ADDITIONAL_FIELD as F, Rule } from '../../common/rules';
import { AdditionalFieldType, IconStyle } from './additional-field.entity';

@InputType({ description: 'A Font Awesome icon: style and the code point as 1-6 hexadecimal digits.' })
@Rule({ name: 'ApiIconInput' })
export class IconInput {
  @Field(() => IconStyle)
  style!: IconStyle;

  @Field({ description: '1-6 hexadecimal digits, e.g. f007.' })
  @Rule(F.unicode)
  unicode!: string;
}

@InputType({ description: 'Additional fields are addressed by their service id only.' })
export class AdditionalFieldRef {
  @Field(() => ID)
  id!: string;
}

@InputType({ description: 'ApiAdditionalFieldInput for creation.' })
@Rule({ name: 'ApiAdditionalFieldInput' })
export class CreateAdditionalFieldInput {
  @Field({ description: '1-256 characters.' })
  @Rule(F.name)
  name!: string;

  @Field(() => String, { nullable: true, description: 'At most 256 characters.' })
  @Rule(F.placeholder)
  placeholder?: string | null;

  @Field(() => AdditionalFieldType, { description: 'Cannot be changed later.' })
  type!: AdditionalFieldType;

  @Field(() => IconInput, { nullable: true, description: 'null: no icon.' })
  icon?: IconInput | null;

  @Field(() => Boolean, { nullable: true, description: 'Default true; not null.' })
  @Rule(F.isEditableByMember)
  isEditableByMember?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Default false; not null.' })
  @Rule(F.isMandatoryForMember)
  isMandatoryForMember?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Default true; false also makes the field read-only in the app. Not null.' })
  @Rule(F.isVisibleInApp)
  isVisibleInApp?: boolean | null;

  @Field(() => Int, {
    nullable: true,
    description: `0-${F.orderNumber.max}, default current maximum + 1. A number in use pushes that field and all above back by one. Not null.`,
  })
  @Rule(F.orderNumber)
  orderNumber?: number | null;
}

@InputType({ description: 'ApiAdditionalFieldPatchInput: only the given fields change; `type` cannot be changed.' })
@Rule({ name: 'ApiAdditionalFieldPatchInput', example: { placeholder: 'e.g. Engineering' } })
export class UpdateAdditionalFieldInput {
  @Field(() => String, { nullable: true, description: '1-256 characters; not null.' })
  @Rule(F.name)
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'null clears it.' })
  @Rule(F.placeholder)
  placeholder?: string | null;

  @Field(() => IconInput, { nullable: true, description: 'null removes the icon.' })
  icon?: IconInput | null;

  @Field(() => Boolean, { nullable: true, description: 'Not null.' })
  @Rule({ ...F.isEditableByMember, default: undefined })
  isEditableByMember?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Not null.' })
  @Rule({ ...F.isMandatoryForMember, default: undefined })
  isMandatoryForMember?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Not null.' })
  @Rule({ ...F.isVisibleInApp, default: undefined })
  isVisibleInApp?: boolean | null;

  @Field(() => Int, { nullable: true, description: `0-${F.orderNumber.max}; not null.` })
  @Rule(F.orderNumber)
  orderNumber?: number | null;
}

export enum AdditionalFieldSortField {
  createdAt = 'createdAt',
  modifiedAt = 'modifiedAt',
  orderNumber = 'orderNumber',
}
export const AdditionalFieldListArgs = sortableArgs('AdditionalField', AdditionalFieldSortField, { modifiedSince: true });
export type AdditionalFieldListArgs = InstanceType<typeof AdditionalFieldListArgs>;
