import http from 'node:http';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The parsed JSON body, or undefined. */
  body: any;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/**
 * One HTTP request sent byte for byte: `path` goes on the request line as given (fetch() and
 * `new URL()` would resolve `%2e%2e` and normalise the encoding, testing another route).
 * `headers` may repeat a name (an array of values).
 */
export function rawRequest(
  port: number,
  opts: { method: string; path: string; headers?: Record<string, string | string[]>; body?: string | Buffer },
): Promise<RawAnswer> {
  // A body always goes with its length: without one, Node's client would send a GET's body
  // unframed and the server would read it as the next request.
  const headers = { ...opts.headers };
  if (opts.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) headers['content-length'] = String(Buffer.byteLength(opts.body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: opts.method, path: opts.path, headers, agent, insecureHTTPParser: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}
