import { DeadlockException, DriverException, LockWaitTimeoutException } from '@mikro-orm/core';
import { AppError, type ErrorCode, type FieldIssue } from './app-error';
import { NOT_UTF8, NOT_UTF8_DETAIL } from '../http/utf8-body';

/**
 * The one place that decides what an error means to a client. REST (`rest/facade.ts`),
 * GraphQL (`graphql/server.ts`) and the HTTP layer (`app.ts`) all call `classify` and
 * present its answer in their own shape; nothing else maps errors to statuses.
 */
export interface Kind {
  status: number;
  title: string;
  /** Last segment of the problem `type` URI. */
  slug: string;
  /** `extensions.code` in GraphQL answers. */
  graphql: string;
}

/** Exhaustive: adding an ErrorCode without its row does not compile. */
export const KINDS = {
  VALIDATION: { status: 400, title: 'Bad Request', slug: 'validation-error', graphql: 'VALIDATION' },
  UNAUTHENTICATED: { status: 401, title: 'Unauthorized', slug: 'unauthenticated', graphql: 'UNAUTHENTICATED' },
  FORBIDDEN: { status: 403, title: 'Forbidden', slug: 'forbidden', graphql: 'FORBIDDEN' },
  NOT_FOUND: { status: 404, title: 'Not Found', slug: 'not-found', graphql: 'NOT_FOUND' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method Not Allowed', slug: 'method-not-allowed', graphql: 'METHOD_NOT_ALLOWED' },
  NOT_ACCEPTABLE: { status: 406, title: 'Not Acceptable', slug: 'not-acceptable', graphql: 'NOT_ACCEPTABLE' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request Timeout', slug: 'request-timeout', graphql: 'REQUEST_TIMEOUT' },
  CONFLICT: { status: 409, title: 'Conflict', slug: 'conflict', graphql: 'CONFLICT' },
  GONE: { status: 410, title: 'Gone', slug: 'gone', graphql: 'GONE' },
  PRECONDITION_FAILED: { status: 412, title: 'Precondition Failed', slug: 'precondition-failed', graphql: 'PRECONDITION_FAILED' },
  UNPROCESSABLE: { status: 422, title: 'Unprocessable Content', slug: 'unprocessable-content', graphql: 'UNPROCESSABLE' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Content Too Large', slug: 'payload-too-large', graphql: 'PAYLOAD_TOO_LARGE' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported Media Type', slug: 'unsupported-media-type', graphql: 'UNSUPPORTED_MEDIA_TYPE' },
  EXPECTATION_FAILED: { status: 417, title: 'Expectation Failed', slug: 'expectation-failed', graphql: 'EXPECTATION_FAILED' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request Header Fields Too Large', slug: 'headers-too-large', graphql: 'HEADERS_TOO_LARGE' },
  RATE_LIMITED: { status: 429, title: 'Too Many Requests', slug: 'rate-limited', graphql: 'RATE_LIMITED' },
  UNAVAILABLE: { status: 503, title: 'Service Unavailable', slug: 'unavailable', graphql: 'UNAVAILABLE' },
  INTERNAL: { status: 500, title: 'Internal Server Error', slug: 'internal-error', graphql: 'INTERNAL_SERVER_ERROR' },
} as const satisfies Record<ErrorCode, Kind>;

/** Seconds a client is asked to wait after a 503 (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 1;

export interface Classified {
  code: ErrorCode;
  status: number;
  detail: string;
  issues: FieldIssue[];
  /** Set for 503: the `Retry-After` header. */
  retryAfter?: number;
}

const BUSY = 'CALLER_BUSY';

/** Raised when a caller waited too long for one of its connection slots (db/caller-budget.ts). */
export class BusyError extends Error {
  /** Kept when MikroORM wraps the error in a DriverException (it copies own properties). */
  readonly code = BUSY;
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'BusyError';
  }
}

const UNAVAILABLE_DETAIL = 'The service is temporarily unavailable; try again shortly.';

/** PostgreSQL SQLSTATEs and socket codes that mean "not now", not "wrong". */
const UNAVAILABLE_CODES: Record<string, string> = {
  '40P01': UNAVAILABLE_DETAIL, // deadlock that outlived its retries
  '40001': UNAVAILABLE_DETAIL, // serialization failure
  '57014': 'The request took longer than the database allows for one statement; try again or ask for less.',
  '55P03': 'A record the request needs is locked by another request; try again shortly.',
  '53300': UNAVAILABLE_DETAIL, // too many connections
  '57P01': UNAVAILABLE_DETAIL,
  '57P02': UNAVAILABLE_DETAIL,
  '57P03': UNAVAILABLE_DETAIL,
  '08006': UNAVAILABLE_DETAIL,
  '08001': UNAVAILABLE_DETAIL,
  '08003': UNAVAILABLE_DETAIL,
  ECONNREFUSED: UNAVAILABLE_DETAIL,
  ECONNRESET: UNAVAILABLE_DETAIL,
  ETIMEDOUT: UNAVAILABLE_DETAIL,
  EPIPE: UNAVAILABLE_DETAIL,
};

/** Refusals of a value by the database: the client sent something the schema cannot hold. */
const REFUSED_CODES: Record<string, { code: ErrorCode; detail: (column: string | undefined) => string }> = {
  '23503': { code: 'CONFLICT', detail: () => 'A record this request refers to was deleted or does not exist' },
  '23505': { code: 'CONFLICT', detail: () => 'The value is already used by another record' },
  '23514': { code: 'VALIDATION', detail: () => 'A value is outside its allowed range' },
  '23502': { code: 'VALIDATION', detail: (c) => `${c ?? 'A value'} is required` },
  '22P02': { code: 'VALIDATION', detail: () => 'A value has the wrong format' },
  '22P05': { code: 'VALIDATION', detail: () => 'A text value contains a character that cannot be stored (U+0000)' },
  '22021': { code: 'VALIDATION', detail: () => 'A text value contains a character that cannot be stored (U+0000)' },
  '22001': { code: 'VALIDATION', detail: () => 'A text value is too long' },
  '22003': { code: 'VALIDATION', detail: () => 'A number is out of range' },
  '22007': { code: 'VALIDATION', detail: () => 'A date or time has the wrong format' },
  '22008': { code: 'VALIDATION', detail: () => 'A date or time is out of range' },
};

const isErrorCode = (code: unknown): code is ErrorCode => typeof code === 'string' && Object.hasOwn(KINDS, code);

const NOT_AN_OBJECT = 'The body must be a JSON object';

/**
 * body-parser's strict mode refuses a body by its first character before parsing it: JSON that
 * is no object or array (`null`, `"x"`, `1`) is one it refused so, and parses. A body starting
 * with `{` or `[` failed to parse and is not parsed again.
 */
function isJsonScalar(text: unknown): boolean {
  if (typeof text !== 'string' || /^\s*[{[]/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Express body-parser error types. */
const BODY_ERRORS: Record<string, Omit<Classified, 'status'>> = {
  'entity.too.large': { code: 'PAYLOAD_TOO_LARGE', detail: 'The request body exceeds 1mb', issues: [] },
  'entity.parse.failed': { code: 'VALIDATION', detail: 'The request body is not valid JSON', issues: [{ path: [], detail: 'Malformed JSON' }] },
  'encoding.unsupported': { code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'The request body encoding is not supported', issues: [] },
  'charset.unsupported': { code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'The request body encoding is not supported', issues: [] },
  [NOT_UTF8]: { code: 'VALIDATION', detail: NOT_UTF8_DETAIL, issues: [{ path: [], detail: NOT_UTF8_DETAIL }] },
};

const camel = (column: string) => column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The column a constraint error names (`column`, or `Key (member_id)=(...)` in its detail). */
function columnOf(err: { column?: string; detail?: string }): string | undefined {
  if (err.column) return camel(err.column);
  const m = /^Key \(([a-z_]+)\)/.exec(err.detail ?? '');
  return m ? camel(m[1]) : undefined;
}

function make(code: ErrorCode, detail: string, issues: FieldIssue[] = []): Classified {
  const status = KINDS[code].status;
  return { code, status, detail, issues, ...(status === 503 ? { retryAfter: RETRY_AFTER_SECONDS } : {}) };
}

/**
 * What `error` means to a client: its code, HTTP status, a detail safe to show and the
 * fields it concerns. Follows `originalError` / `cause` chains (graphql-js and MikroORM
 * wrap). Anything not recognised is INTERNAL: the caller logs it, the client learns nothing.
 */
export function classify(error: unknown): Classified {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    if (current instanceof AppError) return make(current.code, current.message, current.issues);
    // An AppError a statement failed with (an Idempotency-Key's lookup vetoing the operation's first
    // statement: src/http/idempotency.ts), converted by MikroORM: its DriverException copies the
    // error's own properties, so the code is one of ours, never a 5-character SQLSTATE.
    const copied = current as { code?: unknown; issues?: unknown };
    if (current instanceof DriverException && isErrorCode(copied.code)) {
      return make(copied.code, current.message, Array.isArray(copied.issues) ? (copied.issues as FieldIssue[]) : []);
    }
    if (current instanceof BusyError) return make('UNAVAILABLE', current.reason);
    const e = current as { code?: string; name?: string; message?: string; type?: string; status?: number; column?: string; detail?: string };
    if (e.code === BUSY) return make('UNAVAILABLE', e.message ?? UNAVAILABLE_DETAIL);
    if (e.code && UNAVAILABLE_CODES[e.code]) return make('UNAVAILABLE', UNAVAILABLE_CODES[e.code]);
    if (e.code && REFUSED_CODES[e.code]) {
      const refused = REFUSED_CODES[e.code];
      const column = columnOf(e);
      const detail = refused.detail(column);
      return make(refused.code, detail, column ? [{ path: [column], detail }] : []);
    }
    if (current instanceof DeadlockException || current instanceof LockWaitTimeoutException) return make('UNAVAILABLE', UNAVAILABLE_DETAIL);
    // knex's pool (`KnexTimeoutError`) and pg's connect timeout: the pool is exhausted or the database is away.
    if (e.name === 'KnexTimeoutError' || /Timeout acquiring a connection|Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED/i.test(e.message ?? '')) {
      return make('UNAVAILABLE', UNAVAILABLE_DETAIL);
    }
    if (e.type === 'entity.parse.failed' && isJsonScalar((e as { body?: unknown }).body)) {
      return make('VALIDATION', NOT_AN_OBJECT, [{ path: [], detail: NOT_AN_OBJECT }]);
    }
    if (e.type && BODY_ERRORS[e.type]) {
      const b = BODY_ERRORS[e.type];
      return make(b.code, b.detail, b.issues);
    }
    // Other refusals of the body by body-parser (`type`), or by zlib while it inflates a
    // `Content-Encoding: gzip|deflate|br|zstd` body that is not compressed data (`expose`, status 400).
    const exposed = (e as { expose?: unknown }).expose === true;
    if ((typeof e.type === 'string' || exposed) && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
      if (e.status === 413) return make('PAYLOAD_TOO_LARGE', 'The request could not be read');
      const detail = /^(Z_|ZSTD_|ERR__ERROR_|ERR_BROTLI)/.test(e.code ?? '') ? 'The request body could not be decompressed as its Content-Encoding says' : 'The request body could not be read';
      return make('VALIDATION', detail, [{ path: [], detail }]);
    }
    const next = (current as { originalError?: unknown }).originalError ?? (current as { cause?: unknown }).cause;
    if (!next && current instanceof DriverException) break;
    current = next;
  }
  return make('INTERNAL', 'An unexpected error occurred');
}

/** True when `error` means "try again": the database or another store is unavailable. */
export const isUnavailable = (error: unknown): boolean => classify(error).code === 'UNAVAILABLE';
