import type { IncomingMessage, ServerResponse } from 'node:http';
import type express from 'express';
import type { Pool } from 'pg';
import { problem, sendProblem, writeProblem } from '../errors/problem';
import { requestIdOf } from './http';

/** How long readiness waits for `select 1` before it calls the database unreachable. */
const READY_TIMEOUT_MS = 2000;

/**
 * Kubernetes probes. Liveness (`/livez`, alias `/health`) says the process serves HTTP and
 * never touches the database: an outage of PostgreSQL must not restart every pod. Readiness
 * (`/readyz`, alias `/ready`) says "send me traffic": 503 while the database is unreachable
 * and from SIGTERM on (draining), and, before the app exists, while migrations run
 * (`bootResponder`).
 */
export class Health {
  draining = false;

  constructor(private readonly pool: Pool) {}

  /**
   * Registers the probes on the app itself, not on a router of their own: a router mounted at
   * `/` is entered, and its layers walked, by every request the app serves.
   */
  mount(app: Pick<express.Express, 'get'>): void {
    const live = (_req: express.Request, res: express.Response) => {
      res.json({ status: 'ok' });
    };
    const ready = async (_req: express.Request, res: express.Response) => {
      if (this.draining) return sendProblem(res, problem(503, 'The service is shutting down'));
      if (await this.databaseReachable()) return res.json({ status: 'ok' });
      sendProblem(res, problem(503, 'The database is not reachable'));
    };
    app.get(['/livez', '/health'], live);
    app.get(['/readyz', '/ready'], ready);
  }

  private async databaseReachable(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.pool.query('select 1').then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS))),
      ]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * What the port answers while the service boots (migrations run, the app is being built):
 * `/livez` 200, everything else 503 problem+json with Retry-After, so a slow migration
 * neither restarts the pod nor receives traffic.
 */
export function bootResponder(req: IncomingMessage, res: ServerResponse): void {
  const requestId = requestIdOf(req.headers['x-request-id']);
  res.setHeader('X-Request-Id', requestId);
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/livez') {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ status: 'ok' }));
    return;
  }
  writeProblem(res, problem(503, 'The service is starting (database migrations); try again shortly'), path, requestId, { 'Retry-After': '5' });
}
