import type { EntityManager } from '@mikro-orm/postgresql';
import type { JobHelpers } from 'graphile-worker';
import { withDeadlockRetry } from '../../db/transaction';
import type { TaskHandler } from '../../jobs/queue';
import { applyGroupBatch } from './group-rows';
import { ImportKind } from './import-job.entity';
import { applyMemberBatch } from './member-rows';
import type { BatchOutcome, NumberedRow, RunState } from './rows';

export const BATCH_SIZE = 1000;

type Apply = (tx: EntityManager, communityId: string, batch: NumberedRow<any>[], state: RunState) => Promise<BatchOutcome>;
const APPLY: Record<ImportKind, Apply> = { [ImportKind.GROUPS]: applyGroupBatch, [ImportKind.MEMBERS]: applyMemberBatch };

interface JobRow {
  community_id: string;
  kind: ImportKind;
  total: number;
  processed: number;
}

/**
 * Runs (or resumes) one import. Each batch of BATCH_SIZE rows is written, counted and
 * checkpointed (`processed`) in ONE transaction, so a crash loses at most the batch in
 * flight, which is rolled back and redone by the retry; nothing is counted twice.
 */
async function runImport(em: EntityManager, importJobId: string, helpers: JobHelpers): Promise<void> {
  const [job] = await em.execute<JobRow[]>(
    `update import_jobs set status = 'RUNNING', started_at = coalesce(started_at, ?), modified_at = ?
      where id = ? and status in ('QUEUED', 'RUNNING') returning community_id, kind, total, processed`,
    [new Date(), new Date(), importJobId],
  );
  if (!job) return; // finished, failed or deleted: nothing to do
  const [{ payload }] = await em.execute<{ payload: Record<string, any>[] }[]>(`select payload from import_jobs where id = ?`, [importJobId]);
  const rows: NumberedRow<any>[] = payload.map((data, i) => ({ row: i + 1, data }));
  const state: RunState = { firstRow: new Map(), emailOwner: new Map() };
  for (const { row, data } of rows) if (!state.firstRow.has(data.externalId)) state.firstRow.set(data.externalId, row);

  let processed = job.processed;
  while (processed < job.total) {
    if (helpers.abortSignal?.aborted) throw new Error(`Stopped by shutdown after ${processed} rows; the retry resumes there`);
    // A deadlock rolled the whole batch back: it is simply tried again (withDeadlockRetry).
    processed = await withDeadlockRetry(em, async (tx) => {
      // The checkpoint is re-read under the row lock: should a second run ever overlap
      // (a lock expired on a stuck worker), it continues after the other's batches.
      const [current] = await tx.execute<{ processed: number }[]>(`select processed from import_jobs where id = ? for update`, [importJobId]);
      if (!current) return job.total; // deleted with its community meanwhile: nothing left to do
      const done = current.processed;
      if (done >= job.total) return done;
      const batch = rows.slice(done, done + BATCH_SIZE);
      const outcome = await APPLY[job.kind](tx, job.community_id, batch, state);
      if (outcome.issues.length) {
        await tx.execute(
          `insert into import_job_errors (import_job_id, row_number, field, detail)
           select ?, e.row, e.field, e.detail from jsonb_to_recordset(?::jsonb) as e(row int, field text, detail text)`,
          [importJobId, JSON.stringify(outcome.issues)],
        );
      }
      await tx.execute(
        `update import_jobs set processed = processed + ?, created = created + ?, updated = updated + ?,
                unchanged = unchanged + ?, failed = failed + ?, memberships_created = memberships_created + ?, modified_at = ?
          where id = ?`,
        [batch.length, outcome.created, outcome.updated, outcome.unchanged, outcome.failed, outcome.membershipsCreated, new Date(), importJobId],
      );
      return done + batch.length;
    });
  }
  // The rows are no longer needed once applied: drop them, keep the counts and errors.
  await em.execute(
    `update import_jobs set status = 'COMPLETED', finished_at = ?, modified_at = ?, payload = null where id = ? and status = 'RUNNING'`,
    [new Date(), new Date(), importJobId],
  );
}

/**
 * A failing run is retried by the queue (with backoff) and resumes at its checkpoint; after
 * the last attempt the job is marked FAILED. The reason names no internals: those are logged.
 */
export const runImportTask: TaskHandler = async (payload, helpers, { orm, logger }) => {
  const { importJobId } = payload as { importJobId: string };
  const em = orm.em.fork() as unknown as EntityManager;
  try {
    await runImport(em, importJobId, helpers);
  } catch (err) {
    const last = helpers.job.attempts >= helpers.job.max_attempts;
    logger.error({ err, importJobId, attempt: helpers.job.attempts, last }, 'import run failed');
    if (last) {
      await em.execute(
        `update import_jobs set status = 'FAILED', finished_at = ?, modified_at = ?,
                failure_reason = 'The import stopped after ' || processed || ' of ' || total || ' rows and could not be resumed; the rows before are saved.'
          where id = ? and status in ('QUEUED', 'RUNNING')`,
        [new Date(), new Date(), importJobId],
      );
    }
    throw err;
  }
};
