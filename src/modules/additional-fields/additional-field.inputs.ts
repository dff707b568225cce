import { Field, ID, InputType, Int } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';
import { AdditionalFieldType, IconStyle } from './additional-field.entity';

@InputType({ description: 'A Font Awesome icon: style and the code point as 1-6 hexadecimal digits.' })
export class IconInput {
  @Field(() => IconStyle)
  style!: IconStyle;

  @Field({ description: '1-6 hexadecimal digits, e.g. f007.' })
  unicode!: string;
}

@InputType({ description: 'Additional fields are addressed by their service id only.' })
export class AdditionalFieldRef {
  @Field(() => ID)
  id!: string;
}

@InputType({ description: 'ApiAdditionalFieldInput for creation.' })
export class CreateAdditionalFieldInput {
  @Field({ description: '1-256 characters.' })
  name!: string;

  @Field(() => String, { nullable: true, description: 'At most 256 characters.' })
  placeholder?: string | null;

  @Field(() => AdditionalFieldType, { description: 'Cannot be changed later.' })
  type!: AdditionalFieldType;

  @Field(() => IconInput, { nullable: true })
  icon?: IconInput | null;

  @Field(() => Boolean, { nullable: true, description: 'Default true.' })
  isEditableByMember?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Default false.' })
  isMandatoryForMember?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Default true; false also makes the field read-only in the app.' })
  isVisibleInApp?: boolean | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Integer >= 0, default current maximum + 1. A number in use pushes that field and all above back by one.',
  })
  orderNumber?: number | null;
}

@InputType({ description: 'ApiAdditionalFieldPatchInput: only the given fields change; `type` cannot be changed.' })
export class UpdateAdditionalFieldInput {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  placeholder?: string | null;

  @Field(() => IconInput, { nullable: true, description: 'null removes the icon.' })
  icon?: IconInput | null;

  @Field(() => Boolean, { nullable: true })
  isEditableByMember?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  isMandatoryForMember?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  isVisibleInApp?: boolean | null;

  @Field(() => Int, { nullable: true })
  orderNumber?: number | null;
}

export enum AdditionalFieldSortField {
  createdAt = 'createdAt',
  modifiedAt = 'modifiedAt',
  orderNumber = 'orderNumber',
}
export const AdditionalFieldListArgs = sortableArgs('AdditionalField', AdditionalFieldSortField, { modifiedSince: true });
export type AdditionalFieldListArgs = InstanceType<typeof AdditionalFieldListArgs>;
