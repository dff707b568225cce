import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { ClientRequest } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docCommands, parseExpectation, ROOT, shellBlocks, substitute, valuesOf, type DocCommand } from '../helpers/docs';
import { startTestApp } from '../helpers/app';
import { startService, type ServiceProcess } from '../helpers/process';
import { testDatabaseUrl } from '../helpers/database';

const run = promisify(execFile);

/** Commands a reader runs once to set up, not examples: the suite itself is what they set up. */
const SETUP = /^(npm (install|ci|test)\b|npm run (build|bench|test:hardening|start:prod)\b|docker\b|bash \.ci\/run)/;
/** `VAR=value ... npm start &`: the test starts the service itself, with those variables. */
const START = /^((?:[A-Z_]+=\S+\s+)*)npm start\s*&?\s*$/;

const DOC_FILES = fs
  .readdirSync(path.join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => `docs/${f}`);

/** README first (it creates the community and the key), then the docs in file-name order. */
const commands: DocCommand[] = [...docCommands('README.md', false), ...DOC_FILES.flatMap((f) => docCommands(f, true))];

describe('the convention of executable docs', () => {
  it('reads status, body parts, captures and headers from a comment', () => {
    expect(parseExpectation('# Add a group: 201 {"id": "<group id>", "externalId": "board", "about": "..."}')).toMatchObject({
      status: 201,
      values: [['externalId', 'board']],
      keys: ['about'],
      captures: [['id', '<group id>']],
    });
    expect(parseExpectation('# Update: 204, no body')).toMatchObject({ status: 204, values: [], keys: [] });
    expect(parseExpectation('# {"id": "<community id>", "name": "Chess Club", ...}')).toMatchObject({
      status: undefined,
      values: [['name', 'Chess Club']],
      captures: [['id', '<community id>']],
    });
    expect(parseExpectation('# 200 again, with `Idempotent-Replayed: true`')).toMatchObject({
      status: 200,
      headers: [['Idempotent-Replayed', 'true']],
    });
    expect(parseExpectation('# An additional field, then members (up to 1000, atomic)')).toBeUndefined();
  });

  it('finds the README walkthrough with an expectation for every call of the service', () => {
    const calls = commands.filter((c) => c.file === 'README.md' && c.text.includes('localhost:3000'));
    expect(calls.length).toBeGreaterThan(30);
    for (const c of commands.filter((x) => x.text.includes('localhost:3000') && !SETUP.test(x.text.trim()) && !/^npx /.test(x.text))) {
      expect(c.expect?.status, `${c.file}:${c.line} has no expected status in the comment before it`).toBeDefined();
    }
  });
});

describe('README.md and docs/*.md: every shell example runs as written and answers what its comment says', () => {
  let service: ServiceProcess | undefined;
  let work: string;
  const captured = new Map<string, string>();
  const env: Record<string, string> = {};

  beforeAll(() => {
    // Commands run in a scratch directory (files they write land there); `npm run` finds the project above it.
    work = path.join(ROOT, '.data', `docs-run-${process.pid}`);
    fs.rmSync(work, { recursive: true, force: true });
    fs.mkdirSync(work, { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'portman'), path.join(work, 'portman'));
  });

  afterAll(async () => {
    await service?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  async function start(vars: Record<string, string>) {
    service = await startService({ DATABASE_URL: testDatabaseUrl(), ...vars });
  }

  it('runs every command in order', async () => {
    let file = '';
    for (const c of commands) {
      const where = `${c.file}:${c.line}`;
      if (c.file !== file) captured.clear(); // placeholders belong to their file; $KEY and the service carry over
      file = c.file;
      const text = c.text.trim();
      if (SETUP.test(text)) continue;
      const startCommand = START.exec(text);
      if (startCommand) {
        expect(service === undefined, `${where}: the service is started once`).toBe(true);
        const vars = Object.fromEntries(startCommand[1].trim().split(/\s+/).filter(Boolean).map((a) => a.split('=', 2)));
        await start(vars);
        continue;
      }
      if (!service) await start({});
      const literal = substitute(text, captured, where);
      const exported = /^export ([A-Z_]+)=(\S+)$/.exec(literal);
      if (exported) {
        env[exported[1]] = exported[2];
        continue;
      }
      // The documented host and port become the test service's; nothing else of the command changes.
      const command = literal.replace(/(http:\/\/)?localhost:3000/g, service!.url);
      const files = { body: path.join(work, 'body'), head: path.join(work, 'head'), status: path.join(work, 'status') };
      for (const f of Object.values(files)) fs.rmSync(f, { force: true });
      // `curl` keeps every argument as written; the wrapper only records what came back.
      const script = `set -o pipefail
curl() { command curl -o "$DOCS_BODY" -D "$DOCS_HEAD" -w '%{http_code}' "$@" > "$DOCS_STATUS"; }
${command}`;
      const result = await run('bash', ['-c', script], {
        cwd: work,
        env: { ...process.env, ...env, DATABASE_URL: testDatabaseUrl(), DOCS_BODY: files.body, DOCS_HEAD: files.head, DOCS_STATUS: files.status },
        maxBuffer: 16 * 1024 * 1024,
        timeout: 120_000,
      }).catch((err: { code?: number; stdout?: string; stderr?: string }) => {
        throw new Error(`${where}: exit ${err.code}\n${text}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
      });
      const calledService = fs.existsSync(files.status);
      let raw = calledService ? (fs.existsSync(files.body) ? fs.readFileSync(files.body, 'utf8') : '') : result.stdout;
      if (/^HTTP\/\S+ \d{3}/.test(raw)) raw = raw.slice(raw.indexOf('\r\n\r\n') + 4); // curl -i
      const e = c.expect;
      if (!e) {
        expect(calledService, `${where}: a call of the service needs an expectation comment before it`).toBe(false);
        continue;
      }
      const label = `${where}: ${text}\n-> ${raw.slice(0, 2000)}`;
      if (e.status !== undefined) {
        expect(calledService, `${where}: the comment states a status but the command made no request`).toBe(true);
        expect(Number(fs.readFileSync(files.status, 'utf8')), label).toBe(e.status);
      }
      if (e.values.length || e.keys.length || e.captures.length) {
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          throw new Error(`${label}\nis not JSON, but the comment describes a body`);
        }
        for (const [name, value] of e.values) expect(valuesOf(body, name), `${label}\n"${name}"`).toContainEqual(value);
        for (const name of e.keys) expect(valuesOf(body, name).length, `${label}\n"${name}"`).toBeGreaterThan(0);
        for (const [name, hole] of e.captures) {
          const known = captured.get(hole);
          // A placeholder named before is a value the answer must contain; a new one is taken from it.
          if (known !== undefined) expect(valuesOf(body, name).map(String), `${label}\n"${name}": ${hole}`).toContain(known);
          else {
            const [value] = valuesOf(body, name);
            expect(typeof value === 'string' || typeof value === 'number', `${label}\n"${name}" for ${hole}`).toBe(true);
            captured.set(hole, String(value));
          }
        }
      } else if (e.status === 204 || e.status === 304) {
        expect(raw, label).toBe('');
      }
      if (e.headers.length) {
        const head = fs.readFileSync(files.head, 'utf8');
        for (const [name, value] of e.headers) {
          const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
          expect(line, `${label}\nheader ${name}`).toBeDefined();
          const got = line!.slice(name.length + 1).trim();
          if (/^<[a-z][a-z0-9 ]*>$/.test(value) && !captured.has(value)) captured.set(value, got);
          else expect(got, `${label}\nheader ${name}`).toBe(value.replace(/<[a-z][a-z0-9 ]*>/g, (h) => captured.get(h) ?? h));
        }
      }
    }
  }, 600_000);
});

describe('what the docs promise besides the walkthrough', () => {
  it('npm run admin -- --help prints the usage and exits 0', async () => {
    const { stdout } = await run('npm', ['run', '-s', 'admin', '--', '--help'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: 'postgres://unused' } });
    expect(stdout).toMatch(/^usage: npm run admin -- <command>/);
    expect(stdout).toContain('create-key --community <id>');
  }, 60_000);

  it('without CORS_ORIGINS no response carries a CORS header (docs/configuration.md)', async () => {
    const app = await startTestApp();
    try {
      const t = await app.tenant();
      const answers = [
        await app.http.get('/api/v1/groups').set('Origin', 'https://app.example.org').set('X-API-Key', t.key).expect(200),
        await app.http.get('/health').set('Origin', 'https://app.example.org').expect(200),
        await app.http.post('/graphql').set('Origin', 'https://app.example.org').set('X-API-Key', t.key).send({ query: '{ groups { size } }' }),
        await app.http
          .options('/api/v1/groups')
          .set('Origin', 'https://app.example.org')
          .set('Access-Control-Request-Method', 'POST')
          .set('Access-Control-Request-Headers', 'x-api-key'),
      ];
      for (const res of answers) {
        // superagent's Response type leaves out `req`, the http.ClientRequest it answers
        const { req } = res as typeof res & { req: ClientRequest };
        expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-')), `${req.method} ${req.path}`).toEqual([]);
      }
    } finally {
      await app.close();
    }
  });

  it('docs/events.md shows an event id shaped like the ids the service assigns', async () => {
    const text = fs.readFileSync(path.join(ROOT, 'docs/events.md'), 'utf8');
    const json = /```json\n([\s\S]*?)\n```/.exec(text)![1];
    const { id } = JSON.parse(json);
    // event_id(): 48 bits of position, version 8, variant 10, 60 bits of seq.
    const shape = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(id).toMatch(shape);
    const app = await startTestApp();
    try {
      const t = await app.tenant();
      await app.http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name: 'Evented' }).expect(201);
      const feed = await app.http.get('/api/v1/events').set('X-API-Key', t.key).expect(200);
      expect(feed.body.results.length).toBeGreaterThan(0);
      for (const event of feed.body.results) expect(event.id).toMatch(shape);
    } finally {
      await app.close();
    }
  });

  it('every shell block of README.md is found', () => {
    expect(shellBlocks('README.md').length).toBeGreaterThan(5);
  });
});
