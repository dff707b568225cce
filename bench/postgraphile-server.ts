/**
 * A peer: PostGraphile over the service's own database and tables, in production mode
 * (no GraphiQL, no watch, no query log), with the service's pool size. PEER=postgraphile4
 * serves PostGraphile 4, PEER=postgraphile5 PostGraphile 5 (which needs Node 22 or later:
 * bench/run.ts starts it on the bench's Node 24); each resolves from its own prefix (bench/peers.ts).
 * POST /graphql answers GraphQL; GET /health answers the bench's readiness probe.
 * Not a product: a yardstick, like raw-server.ts.
 */
import http from 'node:http';
import { Pool } from 'pg';

const POOL_MAX = Number(process.env.DB_POOL_MAX || 10); // the service's default (src/config.ts)
const SCHEMA = 'public';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => void;

async function postgraphile4(): Promise<{ handler: Handler; close: () => Promise<void> }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { postgraphile } = require('postgraphile'); // 4.x in .data/peers/postgraphile4
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: POOL_MAX });
  const handler = postgraphile(pool, SCHEMA, {
    graphiql: false,
    watchPg: false,
    disableQueryLog: true,
    enableQueryBatching: false,
    extendedErrors: [],
    retryOnInitFail: false,
  });
  return { handler, close: () => pool.end() };
}

async function postgraphile5(): Promise<{ handler: Handler; close: () => Promise<void> }> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { postgraphile } = require('postgraphile');
  const { PostGraphileAmberPreset } = require('postgraphile/presets/amber');
  const { makePgService } = require('postgraphile/adaptors/pg');
  const { grafserv } = require('postgraphile/grafserv/node');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: POOL_MAX });
  const pgl = postgraphile({
    extends: [PostGraphileAmberPreset],
    // As PostGraphile 4's default (ignoreIndexes): every column may order and filter a connection.
    disablePlugins: ['PgIndexBehaviorsPlugin'],
    pgServices: [makePgService({ pool, schemas: [SCHEMA] })],
    grafserv: { graphqlPath: '/graphql', graphiql: false, watch: false, websockets: false },
    grafast: { explain: false },
  });
  const serv = pgl.createServ(grafserv);
  await pgl.getSchema(); // build before the first request, as PostGraphile 4 does
  return { handler: serv.createHandler(), close: () => pgl.release().then(() => pool.end()) };
}

async function main() {
  const peer = process.env.PEER;
  const { handler, close } = peer === 'postgraphile4' ? await postgraphile4() : peer === 'postgraphile5' ? await postgraphile5() : (() => {
    throw new Error(`PEER must be postgraphile4 or postgraphile5, not ${peer}`);
  })();
  const server = http.createServer((req, res) => {
    if (req.url === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"status":"ok"}');
    }
    handler(req, res, () => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"status":404}');
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env.PORT), () => console.log(`${peer} listening on ${process.env.PORT} (Node ${process.version})`));
  process.on('SIGTERM', () => {
    server.close(() => void close().then(() => process.exit(0)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 5000).unref();
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
