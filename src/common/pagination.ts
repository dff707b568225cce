import { ArgsType, ClassType, Field, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Checks } from './validate';

export enum SortDirection {
  ASC = 'ASC',
  DESC = 'DESC',
}
registerEnumType(SortDirection, { name: 'SortDirection' });

export const MAX_LIMIT = 100;

/** Sorted case-insensitively (`lower(column)`, served by the text-sort indexes); ties then fall to createdAt, id. */
export const TEXT_SORT_FIELDS = new Set(['name', 'firstName', 'lastName']);
export const DEFAULT_LIMIT = 20;

export interface SortSpec<F extends string = string> {
  field: F;
  direction?: SortDirection;
}

export interface PageArgs<F extends string = string> {
  limit?: number;
  skip?: number;
  sort?: SortSpec<F>[];
  /** Only records with modifiedAt at or after this instant (lists that offer it). */
  modifiedSince?: Date | null;
}

export interface Page<T> {
  results: T[];
  limit: number;
  skip: number;
  size: number;
  hasNextPage: boolean;
}

/** A `{ field, direction }` input and the paginated args for one resource's sortable fields. */
export function sortableArgs<E extends Record<string, string>>(name: string, fields: E, opts: { modifiedSince?: boolean } = {}) {
  registerEnumType(fields, { name: `${name}SortField` });

  @InputType(`${name}Sort`)
  class Sort {
    @Field(() => fields)
    field!: E[keyof E];

    @Field(() => SortDirection, { defaultValue: SortDirection.ASC })
    direction?: SortDirection;
  }

  @ArgsType()
  class Args implements PageArgs<E[keyof E]> {
    @Field(() => Int, { nullable: true, description: `1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}.` })
    limit?: number;

    @Field(() => Int, { nullable: true, description: 'Zero-based offset, default 0.' })
    skip?: number;

    @Field(() => [Sort], {
      nullable: true,
      description: 'Later entries break ties of earlier ones; ties end with createdAt ASC, then id ASC.',
    })
    sort?: Sort[];
  }
  if (!opts.modifiedSince) return Args;

  @ArgsType()
  class ArgsSince extends Args {
    @Field(() => Date, {
      nullable: true,
      description: 'Only records whose modifiedAt is at or after this instant (for incremental syncs).',
    })
    modifiedSince?: Date | null;
  }
  return ArgsSince as typeof Args & (new () => Args & { modifiedSince?: Date | null });
}

export function pageOf<T extends object>(item: ClassType<T>, name: string) {
  @ObjectType(`${name}Page`, { simpleResolvers: true })
  class PageType implements Page<T> {
    @Field(() => [item])
    results!: T[];

    @Field(() => Int)
    limit!: number;

    @Field(() => Int)
    skip!: number;

    @Field(() => Int, { description: 'Number of records in this page.' })
    size!: number;

    @Field({ description: 'Whether a further page exists.' })
    hasNextPage!: boolean;
  }
  return PageType;
}

export interface PageWindow {
  limit: number;
  skip: number;
  orderBy: Record<string, 'asc' | 'desc'>[];
  modifiedSince?: Date;
}

/** Checks limit/skip and returns the window plus an ORDER BY that never ties. */
export function pageWindow(args: PageArgs): PageWindow {
  const checks = new Checks();
  const limit = args.limit ?? DEFAULT_LIMIT;
  const skip = args.skip ?? 0;
  checks.int('limit', limit, { min: 1, max: MAX_LIMIT }).int('skip', skip, { min: 0 });
  checks.done();
  const orderBy: Record<string, 'asc' | 'desc'>[] = [];
  const seen = new Set<string>();
  for (const s of args.sort ?? []) {
    if (seen.has(s.field)) continue;
    seen.add(s.field);
    orderBy.push({ [s.field]: s.direction === SortDirection.DESC ? 'desc' : 'asc' });
  }
  if (!seen.has('createdAt')) orderBy.push({ createdAt: 'asc' });
  orderBy.push({ id: 'asc' });
  return { limit, skip, orderBy, ...(args.modifiedSince ? { modifiedSince: args.modifiedSince } : {}) };
}

/** Rows were fetched with limit + 1 to learn whether another page exists without a count. */
export function toPage<T>(rows: T[], limit: number, skip: number): Page<T> {
  const hasNextPage = rows.length > limit;
  const results = hasNextPage ? rows.slice(0, limit) : rows;
  return { results, limit, skip, size: results.length, hasNextPage };
}
