import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { JobHelpers } from 'graphile-worker';
import { ImportJob, ImportKind } from '../../../src/modules/imports/import-job.entity';
import { runImportTask } from '../../../src/modules/imports/import.task';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { gqlWith } from '../../helpers/jobs';
import { asTestOwner } from '../../helpers/owner';

// The import task is run by hand on job rows that have no queued job (no worker involved).
let app: TestApp;
let t: Tenant;
beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
});
afterAll(() => app.close());

const JOB = 'query($id: ID!) { importJob(id: $id) { status processed created updated failed failureReason } }';
const state = async (id: string) => (await gqlWith(app)(JOB, { id }, t.key)).data.importJob;

describe('checkpoints', () => {
  it('a run stopped after a batch resumes there without counting twice; the last failed attempt marks it FAILED', () =>
    // run by hand as the worker runs it: under the jobs' bypass
    asTestOwner(async () => {
    const em = app.runtime.orm.em.fork() as unknown as EntityManager;
    const rows = Array.from({ length: 2500 }, (_, i) => ({ externalId: `ckpt-${i}`, name: `Group ${i}` }));
    const job = em.create(ImportJob, { communityId: t.communityId, kind: ImportKind.GROUPS, total: rows.length, payload: rows });
    await em.flush();
    const deps = { orm: app.runtime.orm, logger: app.runtime.logger, state: app.runtime.state };
    const helpers = (aborted: (check: number) => boolean, attempts = 1) => {
      let check = 0;
      const abortSignal = { get aborted() { return aborted(++check); } };
      return { abortSignal, job: { attempts, max_attempts: 3 } } as unknown as JobHelpers;
    };
    await expect(runImportTask({ importJobId: job.id }, helpers((n) => n > 1), deps)).rejects.toThrow(/after 1000 rows/);
    expect(await state(job.id)).toMatchObject({ status: 'RUNNING', processed: 1000, created: 1000 });
    await runImportTask({ importJobId: job.id }, helpers(() => false), deps);
    expect(await state(job.id)).toMatchObject({ status: 'COMPLETED', processed: 2500, created: 2500, updated: 0, failed: 0 });

    const doomed = em.create(ImportJob, { communityId: t.communityId, kind: ImportKind.GROUPS, total: 1, payload: [rows[0]] });
    await em.flush();
    await expect(runImportTask({ importJobId: doomed.id }, helpers(() => true, 3), deps)).rejects.toThrow();
    expect(await state(doomed.id)).toMatchObject({ status: 'FAILED', failureReason: expect.stringContaining('0 of 1') });
  }));
});

