import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger';

/** The service's logger (at info) over a stream that keeps each line it writes, parsed. */
export function capture() {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: createLogger('info', stream), lines };
}
