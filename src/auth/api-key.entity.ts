import { Entity, OptionalProps, Index, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { newId } from '../common/ids';

@Entity({ tableName: 'api_keys' })
// What the composite key of `replacedBy` references (docs/scaling.md).
@Unique({ name: 'api_keys_community_id_id_unique', properties: ['communityId', 'id'] })
export class ApiKey {
  [OptionalProps]?: 'createdAt' | 'scopes' | 'expiresAt' | 'lastUsedAt' | 'replacedBy' | 'expiryAnnouncedAt';

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

  /** After this instant the key is refused (401); null: no expiry. A rotation sets it to the end of the overlap. */
  @Property({ type: 'timestamptz', length: 3, nullable: true })
  expiresAt?: Date | null;

  /** Written in batches by the gate (src/auth/key-usage.ts), at most once a minute per key per instance. */
  @Property({ type: 'timestamptz', length: 3, nullable: true })
  lastUsedAt?: Date | null;

  /** The key a rotation issued in this one's place (a key of the same community: the database refuses another's). */
  @Property({ type: 'uuid', nullable: true })
  replacedBy?: string | null;

  /** When the `api_key.expired` event was written. */
  @Property({ type: 'timestamptz', length: 3, nullable: true })
  expiryAnnouncedAt?: Date | null;
}
