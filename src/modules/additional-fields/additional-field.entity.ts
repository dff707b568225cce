import { Entity, Enum, OptionalProps, Property, Unique } from '@mikro-orm/core';
import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantRecord } from '../../db/tenant-record';

export enum AdditionalFieldType {
  TEXT = 'TEXT',
}
registerEnumType(AdditionalFieldType, { name: 'AdditionalFieldType' });

export enum IconStyle {
  REGULAR = 'REGULAR',
  SOLID = 'SOLID',
  BRANDS = 'BRANDS',
}
registerEnumType(IconStyle, { name: 'IconStyle', description: 'Font Awesome styles.' });

@ObjectType({ simpleResolvers: true })
export class Icon {
  @Field(() => IconStyle)
  style!: IconStyle;

  @Field({ description: '1-6 hexadecimal digits of a code point.' })
  unicode!: string;
}

@ObjectType({ description: 'An extra field of a community; members carry values for it.', simpleResolvers: true })
@Entity({ tableName: 'additional_fields' })
// What the composite tenant keys of its children reference (docs/scaling.md).
@Unique({ name: 'additional_fields_community_id_id_unique', properties: ['communityId', 'id'] })
export class AdditionalField extends TenantRecord {
  [OptionalProps]?: 'createdAt' | 'modifiedAt' | 'isEditableByMember' | 'isMandatoryForMember' | 'isVisibleInApp';

  @Field()
  @Property({ length: 256 })
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ length: 256, nullable: true })
  placeholder?: string | null;

  @Field(() => AdditionalFieldType)
  @Enum({ items: () => AdditionalFieldType })
  type!: AdditionalFieldType;

  @Enum({ items: () => IconStyle, nullable: true })
  iconStyle?: IconStyle | null;

  @Property({ length: 6, nullable: true })
  iconUnicode?: string | null;

  @Field()
  @Property({ type: 'boolean' })
  isEditableByMember: boolean = true;

  @Field()
  @Property({ type: 'boolean' })
  isMandatoryForMember: boolean = false;

  @Field()
  @Property({ type: 'boolean' })
  isVisibleInApp: boolean = true;

  @Field(() => Int)
  @Property({ type: 'integer' })
  orderNumber!: number;
}
