import 'reflect-metadata';
import { ConfigError, loadConfig } from './config';
import { createLogger } from './logger';
import type { Server } from 'node:http';
import { listen, resolveDatabase, startRuntime, type Runtime } from './runtime';

async function main() {
  const config = loadConfig();
  const bootLogger = createLogger(config.logLevel);
  const { url, embedded } = await resolveDatabase(config, bootLogger);
  let runtime: Runtime | undefined;
  let server: Server;
  try {
    runtime = await startRuntime(config, url, {
      worker: { concurrency: config.jobConcurrency, staleSeconds: config.jobStaleSeconds },
    });
    server = await listen(runtime.app, config.port);
    runtime.attach(server);
  } catch (err) {
    // A service that cannot boot stops what it started and exits non-zero (main's catch).
    await runtime?.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw err;
  }
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 30_000;
  runtime.logger.info({ port: config.port, embeddedDatabase: Boolean(embedded) }, 'listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    runtime.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000).unref();
    server.close();
    server.closeIdleConnections();
    try {
      await runtime.close();
      await embedded?.stop();
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
