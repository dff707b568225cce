import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../helpers/database';

/**
 * A statement's rows die young (docs/performance.md, "Rows promoted by pg's promise form").
 * pg's promise form (`client.query(config)` without a callback) makes its Query and then stores
 * a new closure in `query.callback`; with that order V8's scavenger kept each statement's rows
 * alive until the next mark-compact, so every page a request read was promoted to the old
 * generation (about 60 KB per `GET /groups?limit=100`, a mark-compact every half second at 300
 * requests a second). The tenancy layer (src/db/tenancy.ts, `settlement`) makes the callback
 * before the query. This runs test/fixtures/promotion-probe.ts under V8's GC trace, with the
 * production young generation fixed at its full size, and sums the bytes each way of sending
 * a statement got promoted; pg's own promise form is the control that shows the trace sees it.
 */
const STATEMENTS = 1200;

function promotedPerStatement(): Record<string, number> {
  const run = spawnSync(
    process.execPath,
    [
      '--trace-gc-nvp',
      '--min-semi-space-size=16',
      '--max-semi-space-size=16',
      '--no-allocation-site-pretenuring',
      '-r',
      '@swc-node/register',
      path.resolve('test/fixtures/promotion-probe.ts'),
      testDatabaseUrl(),
    ],
    { encoding: 'utf8', env: { ...process.env, PROBE_STATEMENTS: String(STATEMENTS) }, maxBuffer: 64 * 2 ** 20 },
  );
  expect(run.stderr.trim()).toBe('');
  expect(run.status).toBe(0);
  const promoted: Record<string, number> = {};
  let current: string | undefined;
  for (const line of run.stdout.split('\n')) {
    const marker = /^=== (BEGIN|END) (\S+)/.exec(line);
    if (marker) current = marker[1] === 'BEGIN' ? marker[2] : undefined;
    else if (current && line.includes(' gc=s ')) promoted[current] = (promoted[current] ?? 0) + Number(/ promoted=(\d+)/.exec(line)?.[1] ?? NaN);
  }
  return Object.fromEntries(Object.entries(promoted).map(([way, bytes]) => [way, bytes / STATEMENTS]));
}

describe('rows of a statement', () => {
  it('are not promoted to the old generation, in either of the ways the service sends statements', () => {
    const perStatement = promotedPerStatement();
    const seen = JSON.stringify(perStatement);
    // 100 rows of four columns. The control, pg's own promise form, promoted about 30 KB a
    // statement (Node 22 and 24); the service's ways 40-750 bytes, a few percent of one
    // statement's rows. A tenth of the control is the line.
    expect(perStatement['pg-promise'], seen).toBeGreaterThan(15_000);
    for (const way of ['tenant', 'plain']) expect(perStatement[way], `${way}: ${seen}`).toBeLessThan(3_000);
  }, 120_000);
});
