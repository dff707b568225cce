// First: OpenTelemetry must patch http, pg and graphql before anything loads them (no-op unless configured).
import { shutdownTracing } from './observability/tracing';
import 'reflect-metadata';
import type { Server } from 'node:http';
import { ConfigError, loadConfig } from './config';
import { createLogger } from './logger';
import { bootResponder } from './observability/health';
import { listen, resolveDatabase, startRuntime, type Runtime } from './runtime';

async function main() {
  const config = loadConfig();
  const bootLogger = createLogger(config.logLevel);
  const { url, embedded } = await resolveDatabase(config, bootLogger);
  let server: Server | undefined;
  let runtime: Runtime | undefined;
  let metricsServer: Server | undefined;
  try {
    // The port answers before the migrations run: /livez 200, the rest 503 until the app is ready.
    server = await listen(bootResponder, config.port);
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.requestTimeout = 30_000;
    runtime = await startRuntime(config, url, {
      worker: { concurrency: config.jobConcurrency, staleSeconds: config.jobStaleSeconds, statisticsSeconds: config.statisticsRefreshSeconds },
    });
    const metrics = runtime.metrics;
    if (metrics && config.metricsPort !== undefined) {
      // A port of its own, so the scrape need not be public.
      metricsServer = await listen((req, res) => {
        if (req.method === 'GET' && (req.url ?? '').split('?')[0] === '/metrics') {
          metrics.text().then(
            (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
            () => res.writeHead(500).end(),
          );
        } else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      }, config.metricsPort);
    }
  } catch (err) {
    // A service that cannot boot stops what it started and exits non-zero (main's catch).
    server?.close();
    await runtime?.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw err;
  }
  const ready = runtime;
  const http = server;
  http.off('request', bootResponder);
  http.on('request', ready.app);
  ready.attach(http);
  let inFlight = 0;
  http.on('request', (_req, res) => {
    inFlight++;
    res.once('close', () => inFlight--);
  });
  ready.logger.info({ port: config.port, metricsPort: config.metricsPort, embeddedDatabase: Boolean(embedded) }, 'listening');

  let stopping = false;
  // Drain: readiness 503 at once; keep serving SHUTDOWN_DELAY_SECONDS (load balancers take the
  // instance out); stop accepting; let in-flight requests finish (their answers close their
  // connections); stop the job worker (running jobs finish or stop at a checkpoint); exit.
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ready.health.draining = true;
    ready.logger.info({ signal, inFlight }, 'shutting down');
    const force = setTimeout(() => process.exit(1), config.shutdownDelayMs + 25_000).unref();
    try {
      await new Promise((r) => setTimeout(r, config.shutdownDelayMs));
      http.close();
      metricsServer?.close();
      http.closeIdleConnections();
      while (inFlight > 0) await new Promise((r) => setTimeout(r, 20));
      await ready.close();
      await embedded?.stop();
      await shutdownTracing();
    } finally {
      clearTimeout(force);
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  if (err instanceof ConfigError) console.error(`configuration error: ${err.message}`);
  else console.error(err);
  process.exit(1);
});
