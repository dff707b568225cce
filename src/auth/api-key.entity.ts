import { Entity, OptionalProps, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { newId } from '../common/ids';

@Entity({ tableName: 'api_keys' })
export class ApiKey {
  [OptionalProps]?: 'createdAt' | 'scopes';

  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Index()
  @Property({ type: 'uuid' })
  communityId!: string;

  /** sha256 of the plain key, hex; the plain key is shown once and never stored. */
  @Property({ length: 64, unique: true })
  keyHash!: string;

  @Property({ type: 'text[]', default: '{}' })
  scopes: string[] = [];

  @Property({ type: 'integer', nullable: true })
  rateLimitPerHour?: number | null;

  @Property({ type: 'timestamptz', length: 3, nullable: true })
  revokedAt?: Date | null;

  @Property({ type: 'timestamptz', length: 3 })
  createdAt: Date = new Date();
}
