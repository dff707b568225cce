import pino from 'pino';

export type Logger = pino.Logger;

/** `destination`: where the lines go (stdout when not given). */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({
    level,
    base: undefined,
    // Belt and braces: keys never reach a log line even if someone logs headers.
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.apiKey', '*.key'], censor: '[redacted]' },
    serializers: { err: (err: unknown) => withoutLiterals(err instanceof Error ? pino.stdSerializers.err(err) : err) },
  }, destination);
}

/**
 * A logged error's message and stack without the values of SQL literals: knex puts the failed
 * statement in front of the driver's message, with its values inlined (`... where email =
 * any('{"ada@example.com"}') - <message>`), and PostgreSQL's own detail quotes the key
 * (`Key (email)=(ada@example.com)`). The statement's shape stays, for the operator; what
 * members wrote does not reach the log (docs/security.md).
 */
function withoutLiterals(err: unknown): unknown {
  // Some lines log only an error's message (`{ err: err.message }`).
  if (typeof err === 'string') return scrub(err);
  if (!err || typeof err !== 'object') return err;
  const { message, stack, detail } = err as { message?: unknown; stack?: unknown; detail?: unknown };
  return {
    ...err,
    ...(typeof message === 'string' ? { message: scrub(message) } : {}),
    ...(typeof stack === 'string' ? { stack: scrub(stack) } : {}),
    ...(typeof detail === 'string' ? { detail: scrub(detail) } : {}),
  };
}

const scrub = (text: string) => text.replace(/'(?:[^']|'')*'/g, "'…'").replace(/=\((?:[^()]|\([^()]*\))*\)/g, '=(…)');

/** The URL as it may appear in logs and links: never with an api_key. */
export function scrubUrl(url: string): string {
  return url.replace(/([?&])api_key=[^&]*/gi, '$1api_key=[redacted]');
}
