import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    // Belt and braces: keys never reach a log line even if someone logs headers.
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.apiKey', '*.key'], censor: '[redacted]' },
  });
}

/** The URL as it may appear in logs and links: never with an api_key. */
export function scrubUrl(url: string): string {
  return url.replace(/([?&])api_key=[^&]*/gi, '$1api_key=[redacted]');
}
