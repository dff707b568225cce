import { Router, type Express } from 'express';
import swaggerUi from 'swagger-ui-express';
import { problem, sendProblem } from '../errors/problem';
import { DOCUMENT_PATH } from './document';

const UI_OPTIONS = {
  customSiteTitle: 'Community management API',
  swaggerOptions: {
    // Relative to /docs/, so the page also works behind a path prefix; the document needs no key.
    url: `../api/v1${DOCUMENT_PATH}`,
    // Swagger UI would otherwise ask validator.swagger.io for a badge: the page must work offline.
    validatorUrl: null,
  },
};

/**
 * `GET /api/v1/openapi.json` (`json` is called once, on the first request) and the
 * Swagger UI page at `/docs`. Mounted before the `/api/v1` key gate: reading the contract
 * needs no key. Every asset comes from swagger-ui-dist in node_modules, none from a CDN.
 * Registered on the app itself (a router of their own mounted at `/` would be entered by
 * every request); the UI's middleware is mounted at `/docs`, so other paths skip it.
 */
export function mountOpenApi(app: Pick<Express, 'get' | 'use'>, json: () => string): void {
  // Built on the first request, not at boot: a process nobody asks for its contract never
  // holds it, and the boot's peak memory does not include building it.
  let body: string | undefined;
  app.get(`/api/v1${DOCUMENT_PATH}`, (req, res) => {
    if (!req.accepts('application/json')) {
      sendProblem(res, problem(406, 'This document is only available as application/json'));
      return;
    }
    res.type('application/json').send((body ??= json()));
  });
  // serveFiles (not the shared `serve`) keeps the init script per app instance; `/docs` redirects to `/docs/`.
  const ui = Router().use(...swaggerUi.serveFiles(undefined, UI_OPTIONS), swaggerUi.setup(undefined, UI_OPTIONS));
  app.use('/docs', (req, res, next) => ((req.method === 'GET' || req.method === 'HEAD') && PAGE_FILES.has(req.path) ? ui(req, res, next) : next()));
}

/**
 * What `/docs/` serves: the page and the files it loads (and their source maps), read off
 * the page swagger-ui-express generates. Anything else under `/docs/` is the API's 404
 * problem: swagger-ui-express would answer the page with a 200 at any path, swagger-ui-dist's
 * stock `index.html` (the Petstore demo) and a plain-text 404 for `package.json`.
 */
const PAGE_FILES = new Set(['/', '/swagger-ui-init.js']);
for (const [, file] of swaggerUi.generateHTML(undefined, UI_OPTIONS).matchAll(/(?:src|href)=["']\.\/([^"']+)["']/g)) {
  PAGE_FILES.add(`/${file}`);
  if (file.endsWith('.js') || file.endsWith('.css')) PAGE_FILES.add(`/${file}.map`);
}

