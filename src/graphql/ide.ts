import path from 'node:path';
import type express from 'express';

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
// Nothing is sent to the service before there is an API key: the page asks for it first
// (GraphiQL users who saved one in its Headers tab are not asked again), then the IDE
// starts with it and introspects. So no request with a placeholder key, no 401.
(function () {
  var SANDBOX = 'https://embeddable-sandbox.cdn.apollographql.com/_latest/embeddable-sandbox.umd.production.min.js';
  var base = document.currentScript.src.replace(/loader\\.js(\\?.*)?$/, '');
  var endpoint = location.href.split('#')[0].split('?')[0];
  var target = document.getElementById('ide');

  function load(tag, attrs) {
    return new Promise(function (resolve, reject) {
      var el = document.createElement(tag);
      Object.keys(attrs).forEach(function (k) { el[k] = attrs[k]; });
      el.onload = resolve;
      el.onerror = reject;
      document.head.appendChild(el);
    });
  }

  // Which IDE: Sandbox if Apollo's script loads; offline it fails at once, a network that
  // drops it silently gets 8 seconds.
  var kind = new Promise(function (resolve) {
    setTimeout(function () { resolve('graphiql'); }, 8000);
    load('script', { src: SANDBOX }).then(function () { resolve('sandbox'); }, function () { resolve('graphiql'); });
  });

  // A key GraphiQL already keeps in this browser: its persisted headers (the active tab's).
  function keyIn(text) {
    try {
      var headers = JSON.parse(text);
      if (typeof headers === 'string') headers = JSON.parse(headers);
      var key = headers && (headers['X-API-Key'] || headers['x-api-key'] || headers.Authorization);
      return typeof key === 'string' && key.trim() ? key : null;
    } catch (e) {
      return null;
    }
  }
  function savedKey() {
    var key = keyIn(localStorage.getItem('graphiql:headers') || '');
    try {
      var state = JSON.parse(localStorage.getItem('graphiql:tabState') || 'null');
      var tab = state && state.tabs && state.tabs[state.activeTabIndex || 0];
      if (tab && tab.headers) key = keyIn(tab.headers) || key;
    } catch (e) {
      // nothing saved
    }
    return key;
  }

  function askKey() {
    return new Promise(function (resolve) {
      target.innerHTML =
        '<form id="api-key-form" style="font: 15px/1.5 system-ui, sans-serif; max-width: 36em; margin: 4em auto; padding: 0 1em">' +
        '<h1 style="font-size: 1.4em">GraphQL IDE</h1>' +
        '<p id="api-key-hint">Enter your community API key (<code>cm_...</code>; <code>npm run admin -- create-key</code> makes one). ' +
        'The IDE sends it as the <code>X-API-Key</code> header of every request and shows it in its Headers tab, ' +
        'where you can change it later. Nothing is sent before you enter it.</p>' +
        '<label>API key <input id="api-key" name="api-key" type="password" autocomplete="off" required style="width: 100%; font: inherit"></label>' +
        '<p><button type="submit" style="font: inherit">Open the IDE</button></p></form>';
      var form = document.getElementById('api-key-form');
      var input = document.getElementById('api-key');
      input.focus();
      form.addEventListener('submit', function (event) {
        event.preventDefault();
        var key = input.value.trim();
        if (key) resolve(key);
      });
    });
  }

  function graphiql(key) {
    document.body.setAttribute('data-ide', 'graphiql');
    target.textContent = 'Loading GraphiQL...';
    load('link', { rel: 'stylesheet', href: base + 'graphiql.min.css' })
      .then(function () { return load('script', { src: base + 'react.production.min.js' }); })
      .then(function () { return load('script', { src: base + 'react-dom.production.min.js' }); })
      .then(function () { return load('script', { src: base + 'graphiql.min.js' }); })
      .then(function () {
        target.textContent = '';
        var props = {
          fetcher: GraphiQL.createFetcher({ url: endpoint }),
          // GraphiQL keeps the headers (the key) in this browser only.
          shouldPersistHeaders: true,
          defaultEditorToolsVisibility: 'headers',
        };
        // A key just entered replaces what was saved; else GraphiQL's saved headers hold one.
        if (key) props.headers = JSON.stringify({ 'X-API-Key': key }, null, 2);
        ReactDOM.createRoot(target).render(React.createElement(GraphiQL, props));
      })
      .catch(function () { target.textContent = 'The GraphQL IDE could not be loaded.'; });
  }

  function sandbox(key) {
    document.body.setAttribute('data-ide', 'sandbox');
    target.textContent = '';
    new window.EmbeddedSandbox({
      target: '#ide',
      initialEndpoint: endpoint,
      includeCookies: false,
      initialState: { sharedHeaders: { 'X-API-Key': key } },
    });
  }

  var saved = savedKey();
  var started = saved
    ? kind.then(function (k) {
        return k === 'graphiql' ? [k, null] : askKey().then(function (key) { return [k, key]; });
      })
    : askKey().then(function (key) { return kind.then(function (k) { return [k, key]; }); });
  started.then(function (choice) {
    if (choice[0] === 'sandbox') sandbox(choice[1]);
    else graphiql(choice[1]);
  });
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
 * otherwise the page falls back to GraphiQL served from these assets. Either starts only
 * once the page has an API key (asked for first, or GraphiQL's saved one). Registered on the
 * app itself, like the probes (src/observability/health.ts says why).
 */
export function mountIde(app: Pick<express.Express, 'get'>): void {
  app.get('/graphql', (req, res, next) => {
    if (req.query.query !== undefined || req.accepts(['application/json', 'text/html']) !== 'text/html') {
      next();
      return;
    }
    res.type('html').send(PAGE);
  });
  app.get(`${IDE_ASSETS_PATH}loader.js`, (_req, res) => {
    res.type('text/javascript').send(LOADER);
  });
  for (const [name, file] of Object.entries(ASSETS)) {
    app.get(`${IDE_ASSETS_PATH}${name}`, (_req, res) => {
      res.sendFile(file, { maxAge: '1h' });
    });
  }
}
