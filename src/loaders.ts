import DataLoader from 'dataloader';
import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageWindow, type Page, type PageArgs, type PageWindow } from './common/pagination';
import { byIds, leanByIds } from './db/lean';
import { preparedRows } from './db/prepared';
import { anyOf, arrayOf } from './db/sql';
import { VERSION_COLUMN } from './db/version';

/** What a loader is built for: one request's EntityManager and the caller's community. */
export interface LoaderScope {
  em: EntityManager;
  communityId: string;
}

/** Builds one loader (or a family of them) for one request; listed in its feature module's `loaders`. */
export type LoaderFactory<T> = (scope: LoaderScope) => T;

const registered = new Set<LoaderFactory<unknown>>();

/** Called once with every feature module's `loaders` (src/modules/index.ts). */
export function registerLoaders(factories: LoaderFactory<unknown>[]): void {
  for (const factory of factories) registered.add(factory);
}

/**
 * Per-request loaders, each built on first use: a request that touches no relation builds
 * none. They are built for one caller, so every batch is scoped to that caller's
 * community and a loader can never return a foreign row.
 */
export class Loaders {
  private readonly built = new Map<LoaderFactory<unknown>, unknown>();

  constructor(private readonly scope: LoaderScope) {}

  get<T>(factory: LoaderFactory<T>): T {
    let loader = this.built.get(factory) as T | undefined;
    if (loader === undefined) {
      if (!registered.has(factory)) throw new Error(`Loader ${factory.name} is not listed in a feature module's loaders`);
      loader = factory(this.scope);
      this.built.set(factory, loader);
    }
    return loader;
  }
}

/** Rows of `entity` by id, as plain rows (src/db/lean.ts), for the caller's community. */
export function rowsById<T extends { id: string }>(entity: EntityClass<T>): LoaderFactory<DataLoader<string, T | undefined>> {
  return ({ em, communityId }) => new DataLoader(async (ids) => byIds(await leanByIds(em, entity, communityId, ids), ids));
}

/**
 * One page per owner id, with one DataLoader per distinct page arguments (a batch shares one
 * window). Bad limit/skip fail the field with a 400 before any batch is formed.
 */
export function pagesByOwner<T, A extends PageArgs = PageArgs>(
  load: (scope: LoaderScope, ids: readonly string[], window: PageWindow, args: A) => Promise<Page<T>[]>,
): LoaderFactory<(args: A) => DataLoader<string, Page<T>>> {
  return (scope) => {
    const loaders = new Map<string, DataLoader<string, Page<T>>>();
    return (args) => {
      const window = pageWindow(args);
      const key = JSON.stringify(window);
      let loader = loaders.get(key);
      if (!loader) loaders.set(key, (loader = new DataLoader((ids) => load(scope, ids, window, args))));
      return loader;
    };
  };
}

const versionLoaders = new WeakMap<EntityClass<object>, LoaderFactory<DataLoader<string, string | undefined>>>();

/**
 * The current version (src/db/version.ts) of records of a versioned entity the request wrote
 * or loaded as entities (reads that return lean rows carry it already); one factory per
 * entity, registered for every entity a module lists in `versioned`. Read in the request's
 * transaction, after its flush; never cached (a mutation may write again).
 */
export function versionsById(entity: EntityClass<object>): LoaderFactory<DataLoader<string, string | undefined>> {
  let factory = versionLoaders.get(entity);
  if (!factory) {
    factory = ({ em }) =>
      new DataLoader(
        async (ids) => {
          const table = em.getMetadata().get(entity.name).tableName;
          const rows = await preparedRows<{ id: string; version: string }>(
            em,
            `select t.id, ${VERSION_COLUMN('t')} as version from "${table}" t where t.id = ${anyOf('uuid')}`,
            [arrayOf(ids)],
          );
          return byIds(rows, ids).map((r) => r?.version);
        },
        { cache: false },
      );
    Object.defineProperty(factory, 'name', { value: `${entity.name}Versions` });
    versionLoaders.set(entity, factory);
  }
  return factory;
}
