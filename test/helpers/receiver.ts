import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A real webhook receiver on 127.0.0.1: records every request and answers `status()`.
 * `stop()` closes the port (connection refused), `start()` opens the same port again.
 */
export async function startReceiver(port = 0, status: (r: Received) => number = () => 200) {
  const received: Received[] = [];
  let answer = status;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers as Record<string, string>, body };
      received.push(r);
      const code = answer(r);
      if (code >= 300 && code < 400) res.setHeader('location', '/redirected');
      res.statusCode = code;
      res.end();
    });
  });
  const listen = (p: number) => new Promise<number>((resolve) => server.listen(p, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  let bound = await listen(port);
  return {
    received,
    get port() {
      return bound;
    },
    url: (path = '/hook') => `http://127.0.0.1:${bound}${path}`,
    answer(fn: (r: Received) => number) {
      answer = fn;
    },
    stop: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
    async start() {
      bound = await listen(bound);
    },
  };
}
