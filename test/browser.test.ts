import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from './helpers/app';

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

  it('without the key the same page shows the service\'s UNAUTHENTICATED answer', async () => {
    const context = await browser.newContext();
    await context.route('**/*', (route) =>
      new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort('internetdisconnected'),
    );
    await context.addInitScript((query) => localStorage.setItem('graphiql:query', query), '{ groups { size } }');
    const page = await context.newPage();
    await page.goto(`${base}/graphql`);
    await page.waitForSelector('.graphiql-execute-button', { timeout: 20_000 });
    await page.click('.graphiql-execute-button');
    const result = page.locator('.result-window');
    await expect.poll(async () => (await result.textContent()) ?? '', { timeout: 20_000 }).toMatch(/UNAUTHENTICATED/);
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
    await page.waitForFunction(() => (window as any).ui?.preauthorizeApiKey);
    await page.evaluate((key) => (window as any).ui.preauthorizeApiKey('ApiKeyHeader', key), t.key);
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
