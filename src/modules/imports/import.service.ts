import { transaction } from '../../db/transaction';
import { insertRecords } from '../../db/write';
import { leanPage } from '../../db/lean';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isId } from '../../common/ids';
import { pageWindow, toPage, type Page, type PageArgs } from '../../common/pagination';
import { notFound } from '../../errors/app-error';
import { IMPORT_ROWS, MAX_IMPORT_ROWS } from '../../common/rules';
import { Checks } from '../../common/validate';
import { enqueue } from '../../jobs/queue';
import { ImportJob, ImportRowError, type ImportKind } from './import-job.entity';

export const RUN_IMPORT = 'import_run';
/** Far above what the 1 MiB body allows; a guard for GraphQL callers. */
export { MAX_IMPORT_ROWS };

export class ImportService {
  constructor(private readonly em: EntityManager) {}

  /**
   * Stores the rows with a QUEUED job and enqueues its run, in one transaction: the client's
   * 202 means the import will run even if this instance dies right after answering.
   */
  async start(communityId: string, kind: ImportKind, field: 'groups' | 'members', rows: object[]): Promise<ImportJob> {
    new Checks().list(field, rows, IMPORT_ROWS, 'rows').done(['input']);
    return transaction(this.em, async (tx) => {
      // The set-based writer binds the rows as one JSON parameter; a flush inlined them into the
      // statement's text, escaped character by character (a 19,000-row CSV body: 4 MB of SQL).
      const [job] = await insertRecords(tx, ImportJob, communityId, [{ kind, total: rows.length, payload: rows }]);
      await enqueue(tx, RUN_IMPORT, { importJobId: job.id }, { jobKey: `import:${job.id}` });
      return job;
    });
  }

  /** For output (an entity: its `pointer` is computed). */
  async read(communityId: string, id: string): Promise<ImportJob> {
    const job = isId(id) ? await this.em.findOne(ImportJob, { id, communityId }) : null;
    if (!job) throw notFound('Import job');
    return job;
  }

  async list(communityId: string, args: PageArgs): Promise<Page<ImportJob>> {
    return leanPage(this.em, ImportJob, { communityId }, pageWindow(args));
  }

  /** The job's row errors in row order; `job` was already read for the caller's community. */
  async errors(job: ImportJob, args: PageArgs): Promise<Page<ImportRowError>> {
    const { limit, skip } = pageWindow(args);
    const rows = await this.em.find(
      ImportRowError,
      { importJobId: job.id },
      { orderBy: [{ row: 'asc' }, { id: 'asc' }], limit: limit + 1, offset: skip },
    );
    return toPage(rows, limit, skip);
  }
}
