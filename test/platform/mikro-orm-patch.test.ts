import 'reflect-metadata';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openOrm } from '../../src/db/orm';
import { Group } from '../../src/modules/groups/group.entity';
import { testDatabaseUrl } from '../helpers/database';

/**
 * patches/@mikro-orm+core+6.6.16.patch (docs/performance.md, "Decisions"): every request forks
 * the EntityManager (src/context.ts), and MikroORM's fork() sets `allowGlobalContext` twice,
 * where Configuration.set() re-ran sync(), which writes process.env. The patch skips sync() for
 * that key only. Fails when the patch is missing; the fork and the global guard work as before.
 */
let orm: MikroORM;
beforeAll(async () => {
  orm = (await openOrm(testDatabaseUrl(), 1, false)) as MikroORM;
});
afterAll(async () => {
  await orm.close(true);
});

describe('the MikroORM configuration patch', () => {
  it('a fork no longer re-syncs the configuration; other settings still do', () => {
    // sync() is private in Configuration's types
    const sync = vi.spyOn(orm.config as unknown as { sync(): void }, 'sync');
    try {
      const fork = orm.em.fork({ clear: true, useContext: false, keepTransactionContext: true }) as EntityManager;
      expect(sync).not.toHaveBeenCalled();
      expect(fork.getUnitOfWork().getIdentityMap().keys()).toEqual([]);
      expect(orm.config.get('allowGlobalContext')).toBe(false);
      orm.config.set('debug', false);
      expect(sync).toHaveBeenCalledTimes(1);
    } finally {
      sync.mockRestore();
    }
  });

  it('the global EntityManager still refuses context-specific work; a fork does it', async () => {
    expect(() => orm.em.getUnitOfWork()).toThrow(/global EntityManager/);
    const fork = orm.em.fork() as EntityManager;
    await expect(fork.count(Group, {}, { filters: false })).resolves.toEqual(expect.any(Number));
  });
});
