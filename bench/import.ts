import { median, timeOnce } from './load';
import type { Timed } from './singles';

const MAX_CHUNK_BYTES = 1_000_000; // the contract caps bodies at 1 MiB (1,048,576): stay clearly under
const HEADER = 'externalId,firstName,lastName,emailAddress';
const JOB = 'query($id: ID!) { importJob(id: $id) { status total processed failed } }';

/** 100,000 new members as CSV bodies under 1 MiB each, header row in every chunk. */
export function csvChunks(rows: number, tag: string): string[] {
  const chunks: string[] = [];
  let lines: string[] = [HEADER];
  let bytes = HEADER.length + 1;
  for (let n = 1; n <= rows; n++) {
    const line = `${tag}-${n},First ${n},Last ${n},${tag}.${n}@example.org`;
    if (bytes + line.length + 1 > MAX_CHUNK_BYTES) {
      chunks.push(lines.join('\n') + '\n');
      lines = [HEADER];
      bytes = HEADER.length + 1;
    }
    lines.push(line);
    bytes += line.length + 1;
  }
  chunks.push(lines.join('\n') + '\n');
  return chunks;
}

type Job = { status: string; total: number; processed: number; failed: number };

async function jobState(url: string, key: string, id: string): Promise<Job> {
  const res = await timeOnce(url, {
    method: 'POST',
    path: '/graphql',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ query: JOB, variables: { id } }),
  });
  const body = JSON.parse(res.text);
  if (body.errors) throw new Error(`bench: importJob failed: ${res.text.slice(0, 300)}`);
  return body.data.importJob;
}

/** One import: every chunk POSTed, then polled until every job is COMPLETED (or FAILED). */
async function importOnce(url: string, key: string, rows: number, tag: string, timeoutMs: number): Promise<{ ms: number; note?: string }> {
  const started = performance.now();
  const ids: string[] = [];
  for (const chunk of csvChunks(rows, tag)) {
    const res = await timeOnce(url, {
      method: 'POST',
      path: '/api/v1/triggers/members/import',
      headers: { 'x-api-key': key, 'content-type': 'text/csv' },
      body: chunk,
    });
    if (res.status === 404) return { ms: NaN, note: 'skipped: POST /api/v1/triggers/members/import does not exist yet' };
    if (res.status !== 202) return { ms: NaN, note: `skipped: the import route answered ${res.status}: ${res.text.slice(0, 200)}` };
    ids.push(JSON.parse(res.text).id);
  }
  const deadline = Date.now() + timeoutMs;
  let jobs: Job[] = [];
  while (Date.now() < deadline) {
    jobs = await Promise.all(ids.map((id) => jobState(url, key, id)));
    if (jobs.every((j) => j.status === 'COMPLETED' || j.status === 'FAILED')) {
      const ms = performance.now() - started;
      const failedJobs = jobs.filter((j) => j.status === 'FAILED').length;
      const failedRows = jobs.reduce((n, j) => n + j.failed, 0);
      const note = failedJobs || failedRows ? `${failedJobs} jobs FAILED, ${failedRows} rows failed` : undefined;
      return { ms, note };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const processed = jobs.reduce((n, j) => n + j.processed, 0);
  return { ms: NaN, note: `timeout: ${processed} of ${rows} rows processed after ${timeoutMs / 1000} s` };
}

/** The 100,000-member import (REST only: the GraphQL mutation takes JSON, and bodies are capped alike). */
export async function timeImport(url: string, key: string, rows: number, reps: number, timeoutMs: number): Promise<Timed> {
  const runs: number[] = [];
  const notes: string[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const { ms, note } = await importOnce(url, key, rows, `imp${rep}`, timeoutMs);
    if (note) notes.push(note);
    if (!Number.isFinite(ms)) break;
    runs.push(ms);
  }
  const chunks = csvChunks(rows, 'imp0').length;
  return {
    id: 'import',
    label: `POST /triggers/members/import (${rows.toLocaleString('en')} members, ${chunks} CSV chunks < 1 MiB) until COMPLETED`,
    rest: runs,
    graphql: [],
    restMedian: median(runs),
    graphqlMedian: NaN,
    note: notes.length ? [...new Set(notes)].join('; ') : undefined,
  };
}
