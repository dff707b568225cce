import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { openOrm } from '../../src/db/orm';
import { AppError, type ErrorCode } from '../../src/errors/app-error';
import { Community } from '../../src/modules/communities/community.entity';
import { testDatabaseUrl } from './database';

/*
 * The service-level test layer (docs/architecture.md, "Tests"): a service on a real
 * EntityManager, without the HTTP app. One ORM per test file on the run's database (migrated
 * once by test/global-setup.ts); each test runs in a transaction that is rolled back after
 * it, so tests leave nothing behind and need no cleanup. A service's own transactions nest
 * in it as savepoints.
 *
 *   const db = useServiceDb();
 *   it('...', async () => {
 *     const groups = new GroupService(db.em);
 *     await expectAppError(groups.create(db.communityId, { name: '' }), 'VALIDATION', [['input', 'name']]);
 *   });
 *
 * A database error (a unique or foreign key violation outside a service's own savepoint)
 * aborts the test's transaction: make it the test's last statement.
 */

export interface ServiceDb {
  /** The test's EntityManager, inside its transaction. */
  readonly em: EntityManager;
  /** A community created in the test's transaction. */
  readonly communityId: string;
  /** One more community, in the test's transaction (tenancy: another community's records). */
  newCommunity(name?: string): Promise<string>;
}

export function useServiceDb(): ServiceDb {
  let orm: MikroORM | undefined;
  let em: EntityManager | undefined;
  let communityId: string | undefined;

  const newCommunity = async (name = 'Service test community'): Promise<string> => {
    const community = current().create(Community, { name });
    await current().flush();
    return community.id;
  };
  const current = (): EntityManager => {
    if (!em) throw new Error('useServiceDb: em is only there inside a test');
    return em;
  };

  beforeAll(async () => {
    orm = (await openOrm(testDatabaseUrl(), 2, false)) as MikroORM;
  });
  afterAll(async () => {
    await orm?.close(true);
  });
  beforeEach(async () => {
    em = orm!.em.fork() as EntityManager;
    await em.begin();
    communityId = await newCommunity();
  });
  afterEach(async () => {
    const done = em;
    em = undefined;
    communityId = undefined;
    await done?.rollback();
  });

  return {
    get em() {
      return current();
    },
    get communityId() {
      if (!communityId) throw new Error('useServiceDb: communityId is only there inside a test');
      return communityId;
    },
    newCommunity,
  };
}

/**
 * The AppError `work` rejects with: its code, and (when given) exactly these issue paths, in
 * any order. Returns it for further assertions on the details.
 */
export async function expectAppError(work: Promise<unknown>, code: ErrorCode, paths?: (string | number)[][]): Promise<AppError> {
  let error: unknown;
  try {
    await work;
  } catch (err) {
    error = err;
  }
  expect(error, 'expected the service to reject').toBeInstanceOf(AppError);
  const appError = error as AppError;
  expect(appError.code).toBe(code);
  if (paths) expect(appError.issues.map((i) => i.path)).toEqual(expect.arrayContaining(paths.map((p) => p)));
  if (paths) expect(appError.issues).toHaveLength(paths.length);
  return appError;
}
