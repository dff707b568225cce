import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';

/** Debian's chromium (`apt-get install -y chromium`); CI installs it. */
function chromiumPath(): string | undefined {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      // not this name
    }
  }
  return undefined;
}

/**
 * The page's globals that the page.evaluate / waitForFunction callbacks read (they run in the
 * browser; the tests are type-checked without the DOM library): the GraphQL IDE page's Sandbox
 * options and Swagger UI's instance.
 */
declare const window: {
  sandboxOptions?: unknown;
  ui?: { preauthorizeApiKey(scheme: string, key: string): unknown };
};

const executablePath = chromiumPath();
if (!executablePath) console.warn('SKIPPED browser: chromium is not installed (apt-get install -y chromium)');

describe.skipIf(!executablePath)('GraphQL IDE and Swagger UI in a real browser with no network beyond this host', () => {
  let app: TestApp;
  let t: Tenant;
  let server: Server;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp();
    t = await app.tenant();
    server = app.runtime.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await app?.close();
  });

  it('falls back to the self-hosted GraphiQL and runs a query with an API key', async () => {
    const context = await browser.newContext();
    const blocked: string[] = [];
    // Offline: every request to another host fails as it would without a network.
    await context.route('**/*', (route) => {
      const { hostname } = new URL(route.request().url());
      if (hostname === '127.0.0.1') return route.continue();
      blocked.push(route.request().url());
      return route.abort('internetdisconnected');
    });
    // What a user who pasted the key into the Headers tab has stored in this browser.
    await context.addInitScript(
      ([key, query]) => {
        localStorage.setItem('graphiql:headers', JSON.stringify({ 'X-API-Key': key }));
        localStorage.setItem('graphiql:query', query);
      },
      [t.key, '{ groups { size } }'],
    );
    const page = await context.newPage();
    await app.http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name: 'Seen from the IDE' }).expect(201);

    await page.goto(`${base}/graphql`);
    await page.waitForSelector('body[data-ide="graphiql"]', { timeout: 20_000 });
    await page.waitForSelector('.graphiql-execute-button', { timeout: 20_000 });
    await page.click('.graphiql-execute-button');
    const result = page.locator('.result-window');
    await expect.poll(async () => (await result.textContent()) ?? '', { timeout: 20_000 }).toMatch(/"size":\s*1/);
    expect(blocked.some((url) => url.includes('apollographql.com'))).toBe(true); // Sandbox was tried first
    await context.close();
  }, 60_000);

  it('asks for the key first: nothing is sent to /graphql and no 401 comes back until it is entered; then a query runs', async () => {
    const context = await browser.newContext();
    await context.route('**/*', (route) =>
      new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort('internetdisconnected'),
    );
    await context.addInitScript((query) => localStorage.setItem('graphiql:query', query), '{ groups { size } }');
    const page = await context.newPage();
    const graphqlRequests: { method: string; key: string | undefined }[] = [];
    const statuses: number[] = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/graphql' && req.method() === 'POST') {
        graphqlRequests.push({ method: req.method(), key: req.headers()['x-api-key'] });
      }
    });
    page.on('response', (res) => statuses.push(res.status()));

    await page.goto(`${base}/graphql`);
    const hint = page.locator('#api-key-hint');
    await hint.waitFor({ timeout: 20_000 });
    expect(await hint.textContent()).toMatch(/X-API-Key/);
    // The IDE would have introspected by now if it had started: give it the time it would need.
    await page.waitForTimeout(1500);
    expect(graphqlRequests).toEqual([]);
    expect(statuses.filter((s) => s === 401)).toEqual([]);

    await page.fill('#api-key', t.key);
    await page.click('#api-key-form button[type="submit"]');
    await page.waitForSelector('body[data-ide="graphiql"]', { timeout: 20_000 });
    await page.waitForSelector('.graphiql-execute-button', { timeout: 20_000 });
    await page.click('.graphiql-execute-button');
    const result = page.locator('.result-window');
    await expect.poll(async () => (await result.textContent()) ?? '', { timeout: 20_000 }).toMatch(/"size":\s*\d+/);
    // Introspection and the query both went out with the key entered, and nothing was refused.
    expect(graphqlRequests.length).toBeGreaterThanOrEqual(2);
    expect(graphqlRequests.every((r) => r.key === t.key)).toBe(true);
    expect(statuses.filter((s) => s === 401)).toEqual([]);
    // GraphiQL keeps the key in this browser: the next visit starts at once, without asking.
    const again = await context.newPage();
    await again.goto(`${base}/graphql`);
    await again.waitForSelector('.graphiql-execute-button', { timeout: 20_000 });
    expect(await again.locator('#api-key-form').count()).toBe(0);
    await context.close();
  }, 90_000);

  it('Apollo Sandbox gets the same treatment: asked for the key first, then started with it as a shared header', async () => {
    const context = await browser.newContext();
    // Apollo's CDN script is the one thing from outside this host: a stand-in records what the page hands it.
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1') return route.continue();
      if (url.hostname === 'embeddable-sandbox.cdn.apollographql.com') {
        return route.fulfill({ contentType: 'text/javascript', body: 'window.EmbeddedSandbox = function (options) { window.sandboxOptions = options; };' });
      }
      return route.abort('internetdisconnected');
    });
    const page = await context.newPage();
    const graphqlRequests: string[] = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/graphql' && req.method() === 'POST') graphqlRequests.push(req.url());
    });
    await page.goto(`${base}/graphql`);
    await page.locator('#api-key-hint').waitFor({ timeout: 20_000 });
    await page.waitForTimeout(500);
    expect(await page.evaluate(() => window.sandboxOptions)).toBeUndefined(); // not started without a key
    await page.fill('#api-key', t.key);
    await page.click('#api-key-form button[type="submit"]');
    await page.waitForSelector('body[data-ide="sandbox"]', { timeout: 20_000 });
    const options = await page.evaluate(() => window.sandboxOptions);
    expect(options).toMatchObject({
      target: '#ide',
      initialEndpoint: `${base}/graphql`,
      includeCookies: false,
      initialState: { sharedHeaders: { 'X-API-Key': t.key } }, // Sandbox sends shared headers with its introspection too
    });
    expect(graphqlRequests).toEqual([]);
    await context.close();
  }, 60_000);

  it('Swagger UI at /docs: "Try it out" with the default body of POST /groups creates the group', async () => {
    const context = await browser.newContext();
    await context.route('**/*', (route) =>
      new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort('internetdisconnected'),
    );
    const page = await context.newPage();
    await page.goto(`${base}/docs/`);
    await page.waitForSelector('#operations-groups-addGroup', { timeout: 20_000 });
    await page.waitForFunction(() => window.ui?.preauthorizeApiKey);
    await page.evaluate((key) => window.ui!.preauthorizeApiKey('ApiKeyHeader', key), t.key);
    await page.click('#operations-groups-addGroup .opblock-summary');
    await page.click('#operations-groups-addGroup .try-out__btn');
    await page.click('#operations-groups-addGroup .execute');
    const status = page.locator('#operations-groups-addGroup .live-responses-table .response .response-col_status').first();
    await expect.poll(async () => (await status.textContent())?.trim(), { timeout: 20_000 }).toBe('201');
    const created = await app.http.get('/api/v1/groups/team-berlin?key=externalId').set('X-API-Key', t.key).expect(200);
    expect(created.body).toMatchObject({ name: 'Team Berlin', color: '#1E90FF' });
    await context.close();
  }, 60_000);
});
