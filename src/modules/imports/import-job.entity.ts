import { Entity, Enum, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantRecord } from '../../db/tenant-record';

export enum ImportKind {
  GROUPS = 'GROUPS',
  MEMBERS = 'MEMBERS',
}
registerEnumType(ImportKind, { name: 'ImportKind' });

export enum ImportJobStatus {
  QUEUED = 'QUEUED',
  RUNNING = 'RUNNING',
  COMPLETED = 'COMPLETED',
  FAILED = 'FAILED',
}
registerEnumType(ImportJobStatus, {
  name: 'ImportJobStatus',
  description: 'QUEUED -> RUNNING -> COMPLETED, or FAILED when the job itself could not finish (not for bad rows).',
});

@ObjectType({ description: 'A background import of groups or members, upserted by externalId.', simpleResolvers: true })
@Entity({ tableName: 'import_jobs' })
export class ImportJob extends TenantRecord {
  [OptionalProps]?: 'createdAt' | 'modifiedAt' | 'status' | 'processed' | 'created' | 'updated' | 'unchanged' | 'failed' | 'membershipsCreated';

  @Field(() => ImportKind)
  @Enum({ items: () => ImportKind })
  kind!: ImportKind;

  @Field(() => ImportJobStatus)
  @Enum({ items: () => ImportJobStatus })
  status: ImportJobStatus = ImportJobStatus.QUEUED;

  /** The rows to import (kept until the job ends); lazy, so reads for GraphQL never load it. */
  @Property({ type: 'json', nullable: true, lazy: true })
  payload?: unknown[] | null;

  @Field(() => Int, { description: 'Data rows in the import.' })
  @Property({ type: 'integer' })
  total!: number;

  @Field(() => Int, { description: 'Rows handled so far (progress: processed of total).' })
  @Property({ type: 'integer' })
  processed: number = 0;

  @Field(() => Int, { description: 'Rows that created a record.' })
  @Property({ type: 'integer' })
  created: number = 0;

  @Field(() => Int, { description: 'Rows that changed an existing record.' })
  @Property({ type: 'integer' })
  updated: number = 0;

  @Field(() => Int, { description: 'Rows equal to their existing record (nothing written).' })
  @Property({ type: 'integer' })
  unchanged: number = 0;

  @Field(() => Int, { description: 'Rows not saved because of errors (see errors).' })
  @Property({ type: 'integer' })
  failed: number = 0;

  @Field(() => Int, { description: 'Member imports: group memberships created from groupExternalIds.' })
  @Property({ type: 'integer' })
  membershipsCreated: number = 0;

  @Field(() => String, { nullable: true, description: 'Why the job FAILED, when it did.' })
  @Property({ type: 'text', nullable: true })
  failureReason?: string | null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', length: 3, nullable: true })
  startedAt?: Date | null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', length: 3, nullable: true })
  finishedAt?: Date | null;
}

@ObjectType({ description: 'One problem with one data row of an import (rows are numbered from 1, header excluded).', simpleResolvers: true })
@Entity({ tableName: 'import_job_errors' })
export class ImportRowError {
  @PrimaryKey({ type: 'bigint' })
  id!: string;

  @Property({ type: 'uuid' })
  importJobId!: string;

  @Field(() => Int, { description: '1-based number of the data row (JSON: array index + 1; CSV: record after the header).' })
  @Property({ type: 'integer', fieldName: 'row_number' })
  row!: number;

  @Field(() => String, { nullable: true, description: 'The field (CSV column) at fault; null for the whole row.' })
  @Property({ type: 'text', nullable: true })
  field?: string | null;

  @Field()
  @Property({ type: 'text' })
  detail!: string;

  @Field(() => String, { description: 'JSON Pointer into the row (e.g. /name, /groupExternalIds/0); empty for the whole row.' })
  get pointer(): string {
    if (!this.field) return '';
    return '/' + this.field.split('.').map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  }
}
