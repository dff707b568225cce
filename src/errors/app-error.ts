import { GraphQLError } from 'graphql';

/**
 * The closed set of outcomes a client can meet; each has one HTTP status, title and
 * problem type in `classify.ts` (an exhaustive table the compiler checks).
 */
export type ErrorCode =
  | 'VALIDATION'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'NOT_ACCEPTABLE'
  | 'REQUEST_TIMEOUT'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'UNPROCESSABLE'
  | 'GONE'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'EXPECTATION_FAILED'
  | 'HEADERS_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'UNAVAILABLE'
  | 'INTERNAL';

/**
 * One problem with one input value. `path` starts with the argument name
 * (`['input', 'name']`, `['limit']`); the REST facade turns it into a JSON pointer.
 */
export interface FieldIssue {
  path: (string | number)[];
  detail: string;
}

export class AppError extends GraphQLError {
  readonly code: ErrorCode;
  readonly issues: FieldIssue[];

  constructor(code: ErrorCode, message: string, issues: FieldIssue[] = []) {
    super(message, { extensions: { code, ...(issues.length ? { errors: issues } : {}) } });
    this.code = code;
    this.issues = issues;
  }
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`);

/**
 * The record a lookup found, or NOT_FOUND naming `what`. Services look records up in three
 * ways, named alike everywhere: `read` (a plain row for output), `find` (the entity, to
 * change it; no lock) and `lock` (the entity locked `for update` in the caller's transaction).
 */
export function orNotFound<T>(found: T | null | undefined | false | '', what: string): T {
  if (!found) throw notFound(what);
  return found;
}

export const invalid = (issues: FieldIssue[]): AppError =>
  new AppError('VALIDATION', issues.length === 1 ? issues[0].detail : 'The request has invalid values', issues);

export const conflict = (path: (string | number)[], detail: string): AppError =>
  new AppError('CONFLICT', detail, [{ path, detail }]);

/** Finds the AppError behind a GraphQL error, however deeply graphql-js wrapped it. */
export function appErrorOf(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    if (current instanceof AppError) return current;
    current = (current as { originalError?: unknown }).originalError;
  }
  return undefined;
}
