import path from 'node:path';
import express, { type Router } from 'express';

/** Where each IDE asset comes from: files of npm packages in node_modules, never a CDN. */
const dir = (pkg: string) => path.dirname(require.resolve(`${pkg}/package.json`)); // the UMD files are not in "exports"
const ASSETS: Record<string, string> = {
  'graphiql.min.js': path.join(dir('graphiql'), 'graphiql.min.js'),
  'graphiql.min.css': path.join(dir('graphiql'), 'graphiql.min.css'),
  'react.production.min.js': path.join(dir('react'), 'umd/react.production.min.js'),
  'react-dom.production.min.js': path.join(dir('react-dom'), 'umd/react-dom.production.min.js'),
};

export const IDE_ASSETS_PATH = '/graphql/ide/';

/** The page's script: kept here (not a file) so the compiled service carries it too. */
const LOADER = `// The GraphQL IDE at /graphql: Apollo Sandbox when its script loads from Apollo's CDN,
// otherwise GraphiQL, whose assets this service serves itself (works offline).
(function () {
  var SANDBOX = 'https://embeddable-sandbox.cdn.apollographql.com/_latest/embeddable-sandbox.umd.production.min.js';
  var base = document.currentScript.src.replace(/loader\\.js(\\?.*)?$/, '');
  var endpoint = location.href.split('#')[0].split('?')[0];
  var target = document.getElementById('ide');
  var started = false;

  function load(tag, attrs) {
    return new Promise(function (resolve, reject) {
      var el = document.createElement(tag);
      Object.keys(attrs).forEach(function (k) { el[k] = attrs[k]; });
      el.onload = resolve;
      el.onerror = reject;
      document.head.appendChild(el);
    });
  }

  function start(kind) {
    if (started) return false;
    started = true;
    document.body.setAttribute('data-ide', kind);
    return true;
  }

  function graphiql() {
    if (!start('graphiql')) return;
    target.textContent = '';
    load('link', { rel: 'stylesheet', href: base + 'graphiql.min.css' })
      .then(function () { return load('script', { src: base + 'react.production.min.js' }); })
      .then(function () { return load('script', { src: base + 'react-dom.production.min.js' }); })
      .then(function () { return load('script', { src: base + 'graphiql.min.js' }); })
      .then(function () {
        var fetcher = GraphiQL.createFetcher({ url: endpoint });
        ReactDOM.createRoot(target).render(
          React.createElement(GraphiQL, {
            fetcher: fetcher,
            // The community API key goes in the Headers tab; GraphiQL keeps it in this browser only.
            defaultHeaders: '{\\n  "X-API-Key": "paste your API key here"\\n}',
            shouldPersistHeaders: true,
            defaultEditorToolsVisibility: 'headers',
          }),
        );
      })
      .catch(function () { target.textContent = 'The GraphQL IDE could not be loaded.'; });
  }

  // Offline, the CDN script fails at once; a network that drops it silently gets 8 seconds.
  var timer = setTimeout(graphiql, 8000);
  load('script', { src: SANDBOX }).then(
    function () {
      clearTimeout(timer);
      if (!start('sandbox')) return;
      new window.EmbeddedSandbox({ target: '#ide', initialEndpoint: endpoint, includeCookies: false });
    },
    function () {
      clearTimeout(timer);
      graphiql();
    },
  );
})();
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphQL IDE - Community management API</title>
<style>html, body, #ide { height: 100%; margin: 0; }</style>
</head>
<body>
<div id="ide">Loading the GraphQL IDE...</div>
<script src="${IDE_ASSETS_PATH}loader.js"></script>
</body>
</html>`;

/**
 * A browser opening /graphql (GET, accepts HTML, no query) gets the IDE page; everything
 * else goes on to Apollo Server. Apollo Sandbox loads from Apollo's CDN when it can, and
 * otherwise the page falls back to GraphiQL served from these assets.
 */
export function ideRouter(): Router {
  const router = express.Router();
  router.get('/graphql', (req, res, next) => {
    if (req.query.query !== undefined || req.accepts(['application/json', 'text/html']) !== 'text/html') {
      next();
      return;
    }
    res.type('html').send(PAGE);
  });
  router.get(`${IDE_ASSETS_PATH}loader.js`, (_req, res) => {
    res.type('text/javascript').send(LOADER);
  });
  for (const [name, file] of Object.entries(ASSETS)) {
    router.get(`${IDE_ASSETS_PATH}${name}`, (_req, res) => {
      res.sendFile(file, { maxAge: '1h' });
    });
  }
  return router;
}
