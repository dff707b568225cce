import http from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ABOUT_MS, CALLER_LINE, CallerQueue } from '../../src/http/caller-queue';
import { listen } from '../../src/runtime';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { rawRequest } from '../helpers/raw-request';

describe('CallerQueue', () => {
  it('admits perCaller at once, lines up the rest first come first served, passes each freed place to the next', () => {
    const q = new CallerQueue({ perCaller: 2, waitMs: 60_000 });
    const started: string[] = [];
    const releases = new Map<string, () => void>();
    const enter = (caller: string, name: string) =>
      q.enter(
        caller,
        (release) => {
          started.push(name);
          releases.set(name, release);
        },
        () => started.push(`${name} refused`),
      );
    enter('a', 'a1');
    enter('a', 'a2');
    enter('a', 'a3');
    const a4 = enter('a', 'a4');
    enter('b', 'b1');
    expect(started).toEqual(['a1', 'a2', 'b1']);
    expect([q.running('a'), q.waiting('a')]).toEqual([2, 2]);
    releases.get('a2')!();
    releases.get('a2')!(); // a second release of the same request changes nothing
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
    a4.leave(); // its client went away
    releases.get('a1')!();
    releases.get('a3')!();
    expect([q.running('a'), q.waiting('a')]).toEqual([0, 0]);
    expect(started).not.toContain('a4');
  });

  it('a caller alone may have `alone` in progress; while another caller is about (a request within ABOUT_MS), `perCaller`', () => {
    let now = 0;
    const q = new CallerQueue({ perCaller: 2, waitMs: 60_000, alone: 5, now: () => now });
    const releases: (() => void)[] = [];
    const enter = (caller: string) => q.enter(caller, (release) => releases.push(release), () => undefined);
    for (let i = 0; i < 6; i++) enter('a');
    expect([q.running('a'), q.waiting('a')]).toEqual([5, 1]);
    now = 10;
    enter('b'); // b is about: a's cap is 2 now
    releases[0]();
    expect([q.running('a'), q.waiting('a')]).toEqual([4, 1]); // over its cap: the freed place is not passed on
    releases[1]();
    releases[2]();
    releases[3]();
    expect([q.running('a'), q.waiting('a')]).toEqual([2, 0]); // under the cap again: the one waiting started
    now = 10 + ABOUT_MS; // b has been quiet for ABOUT_MS
    for (let i = 0; i < 3; i++) enter('a');
    expect([q.running('a'), q.waiting('a')]).toEqual([5, 0]);
  });

  it('a heavy caller (its requests average heavyMs or more in progress) has one in progress while another is about; a light one keeps perCaller', () => {
    let now = 0;
    const q = new CallerQueue({ perCaller: 3, waitMs: 60_000, alone: 8, heavyMs: 10, now: () => now });
    const releases = new Map<string, (() => void)[]>();
    const enter = (caller: string) => q.enter(caller, (release) => releases.set(caller, [...(releases.get(caller) ?? []), release]), () => undefined);
    const releaseNext = (caller: string) => releases.get(caller)!.shift()!();
    for (let i = 0; i < 4; i++) enter('a');
    enter('b'); // b is about from now on
    enter('b');
    expect([q.running('a'), q.running('b')]).toEqual([4, 2]);
    expect(q.heavy('a')).toBe(false); // none of its requests has ended yet
    now = 40;
    releaseNext('a'); // 40 ms in progress: a is heavy now, and over its cap of one
    expect(q.heavy('a')).toBe(true);
    for (let i = 0; i < 3; i++) enter('a');
    expect([q.running('a'), q.waiting('a')]).toEqual([3, 3]);
    releaseNext('a');
    releaseNext('a');
    expect([q.running('a'), q.waiting('a')]).toEqual([1, 3]);
    releaseNext('a'); // the freed place goes to the next in line, one at a time
    expect([q.running('a'), q.waiting('a')]).toEqual([1, 2]);
    // b's requests were quick: it stays light and keeps three in progress.
    now = 41;
    releaseNext('b');
    releaseNext('b');
    expect(q.heavy('b')).toBe(false);
    for (let i = 0; i < 4; i++) enter('b');
    expect([q.running('b'), q.waiting('b')]).toEqual([3, 1]);
    // Quick requests bring the average down again (each weighs a quarter).
    for (let i = 0; i < 8; i++) {
      now += 1;
      releaseNext('a');
      enter('a');
    }
    expect(q.heavy('a')).toBe(false);
    // Alone again, a heavy caller has `alone` in progress: nobody waits behind it.
    const c = new CallerQueue({ perCaller: 2, waitMs: 60_000, alone: 4, heavyMs: 10, now: () => now });
    const cReleases: (() => void)[] = [];
    c.enter('c', (r) => cReleases.push(r), () => undefined);
    now += 50;
    c.enter('c', (r) => cReleases.push(r), () => undefined);
    cReleases.shift()!();
    expect(c.heavy('c')).toBe(true);
    for (let i = 0; i < 3; i++) c.enter('c', (r) => cReleases.push(r), () => undefined);
    expect([c.running('c'), c.waiting('c')]).toEqual([4, 0]);
  });

  it('refuses a request that waited waitMs, and forgets an idle caller', async () => {
    const q = new CallerQueue({ perCaller: 1, waitMs: 50 });
    let release: (() => void) | undefined;
    const outcome: string[] = [];
    q.enter('a', (r) => (release = r), () => outcome.push('first refused'));
    await new Promise<void>((resolve) => q.enter('a', () => outcome.push('second started'), () => (outcome.push('second refused'), resolve())));
    expect(outcome).toEqual(['second refused']);
    release!();
    expect([q.running('a'), q.waiting('a')]).toEqual([0, 0]);
  });
});

/** A POST whose body is still on its way: it holds its caller's place until `finish`. */
function slowPost(port: number, key: string, body: string) {
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/api/v1/groups',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': String(body.length) },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
  });
  req.write(body.slice(0, 5));
  return { answer, finish: () => void req.end(body.slice(5)) };
}

/** Polls `condition` every 5 ms for up to 5 s. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}

/** A test app listening on a port of its own, with keys of two communities: started before a describe's tests, closed after. */
function appWithTwoKeys(env: Record<string, string>) {
  const t = {} as { app: TestApp; a: Tenant; b: Tenant; port: number };
  let server: Server;
  beforeAll(async () => {
    t.app = await startTestApp(env);
    t.a = await t.app.tenant();
    t.b = await t.app.tenant();
    server = await listen(t.app.runtime.app, 0);
    t.port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.app.close();
  });
  return t;
}

describe('one caller\'s line over HTTP (REQUESTS_PER_CALLER=1, also alone)', () => {
  const t = appWithTwoKeys({ REQUESTS_PER_CALLER: '1', REQUESTS_PER_CALLER_ALONE: '1', CALLER_QUEUE_WAIT_SECONDS: '1' });

  const admitted = async (key: string) => {
    const line = t.app.runtime.state.get(CALLER_LINE);
    await until(() => line.running(`k:${key}`) !== 0);
    expect(line.running(`k:${key}`)).toBe(1);
  };

  it('a second request of the same key waits for the first; another key is served meanwhile', async () => {
    const first = slowPost(t.port, t.a.key, JSON.stringify({ name: 'first' }));
    // The first holds A's only place while its body is on its way.
    await admitted(t.a.key);
    let secondDone = false;
    const second = rawRequest(t.port, { method: 'GET', path: '/api/v1/groups', headers: { 'x-api-key': t.a.key } }).then((r) => {
      secondDone = true;
      return r;
    });
    const line = t.app.runtime.state.get(CALLER_LINE);
    await until(() => line.waiting(`k:${t.a.key}`) !== 0);
    expect(line.waiting(`k:${t.a.key}`)).toBe(1);
    const other = await rawRequest(t.port, { method: 'GET', path: '/api/v1/groups', headers: { 'x-api-key': t.b.key } });
    expect(other.status).toBe(200);
    expect(secondDone).toBe(false);
    first.finish();
    expect((await first.answer).status).toBe(201);
    expect((await second).status).toBe(200);
  });

  it('a request that waited CALLER_QUEUE_WAIT_SECONDS gets 503 with Retry-After, and nothing of it ran', async () => {
    const first = slowPost(t.port, t.a.key, JSON.stringify({ name: 'holder' }));
    await admitted(t.a.key);
    const refused = await rawRequest(t.port, {
      method: 'POST',
      path: '/api/v1/groups',
      headers: { 'x-api-key': t.a.key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'never written' }),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body.detail).toMatch(/requests in progress/);
    first.finish();
    expect((await first.answer).status).toBe(201);
    const names = await rawRequest(t.port, { method: 'GET', path: '/api/v1/groups?limit=100', headers: { 'x-api-key': t.a.key } });
    expect(names.body.results.map((g: { name: string }) => g.name)).not.toContain('never written');
  });
});

// A threshold far above a warm GET's time and far below the slow request's, so neither side of it depends on the machine's speed.
describe('a heavy caller over HTTP (REQUESTS_PER_CALLER=4, HEAVY_CALLER_MS=200)', () => {
  const t = appWithTwoKeys({ REQUESTS_PER_CALLER: '4', HEAVY_CALLER_MS: '200' });

  it('a caller whose requests took 200 ms or more has one in progress while another is about; a light caller keeps 4', async () => {
    const line = t.app.runtime.state.get(CALLER_LINE);
    const [callerA, callerB] = [`k:${t.a.key}`, `k:${t.b.key}`];
    // B's path warmed first (its line is forgotten once idle, average and all).
    expect((await rawRequest(t.port, { method: 'GET', path: '/api/v1/groups', headers: { 'x-api-key': t.b.key } })).status).toBe(200);
    expect(line.waiting(callerB) + line.running(callerB)).toBe(0);
    // A: two requests in progress; one of them 400 ms or more (its body comes late), which makes A heavy.
    const held = slowPost(t.port, t.a.key, JSON.stringify({ name: 'held' }));
    const slow = slowPost(t.port, t.a.key, JSON.stringify({ name: 'slow' }));
    await until(() => line.running(callerA) === 2);
    await new Promise((r) => setTimeout(r, 400));
    slow.finish();
    expect((await slow.answer).status).toBe(201);
    expect(line.heavy(callerA)).toBe(true);
    // B is light: with a request of its own in progress, and A about, its next one is served at once.
    const bHeld = slowPost(t.port, t.b.key, JSON.stringify({ name: 'b held' }));
    await until(() => line.running(callerB) === 1);
    expect((await rawRequest(t.port, { method: 'GET', path: '/api/v1/groups', headers: { 'x-api-key': t.b.key } })).status).toBe(200);
    expect(line.heavy(callerB)).toBe(false);
    // A, heavy with B about, already has its one request in progress: its next one waits for it.
    let done = false;
    const next = rawRequest(t.port, { method: 'GET', path: '/api/v1/groups', headers: { 'x-api-key': t.a.key } }).then((r) => {
      done = true;
      return r;
    });
    await until(() => line.waiting(callerA) === 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    held.finish();
    expect((await held.answer).status).toBe(201);
    expect((await next).status).toBe(200);
    bHeld.finish();
    expect((await bHeld.answer).status).toBe(201);
  });
});
