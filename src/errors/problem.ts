import type { ServerResponse } from 'node:http';
import type { Response } from 'express';
import type { ErrorCode } from './app-error';
import { classify, KINDS, RETRY_AFTER_SECONDS, type Classified, type Kind } from './classify';

/** Title and type of each status, derived from the one table in classify.ts. */
const BY_STATUS = new Map<number, Kind>(Object.values(KINDS).map((k) => [k.status, k]));

/** The HTTP status of each code, from the same table. */
export const STATUS = Object.fromEntries(Object.entries(KINDS).map(([code, k]) => [code, k.status])) as Record<ErrorCode, number>;

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  requestId?: string;
  errors?: { pointer: string; detail: string }[];
}

export function problem(status: number, detail: string, errors?: Problem['errors']): Problem {
  return {
    type: `/problems/${BY_STATUS.get(status)?.slug ?? 'error'}`,
    title: BY_STATUS.get(status)?.title ?? 'Error',
    status,
    detail,
    ...(errors?.length ? { errors } : {}),
  };
}

/** The problem of a code (its status from the table). */
export const problemOf = (code: ErrorCode, detail: string, errors?: Problem['errors']): Problem => problem(KINDS[code].status, detail, errors);

/** The body sendProblem writes: the problem with the request's path and id. */
export function problemBody(res: Response, p: Problem): Problem {
  const requestId = res.locals.requestId as string | undefined;
  return { ...p, instance: res.req.originalUrl.split('?')[0], ...(requestId ? { requestId } : {}) };
}

/** A problem's body outside Express (a raw socket, Node's own answers, boot): with its path and request id, as every problem has them. */
export const problemJson = (p: Problem, instance: string, requestId: string): string => JSON.stringify({ ...p, instance, requestId });

/** Answers a problem on a response Express never saw (Node's `Expect` check, the boot responder), with `X-Request-Id`. */
export function writeProblem(res: ServerResponse, p: Problem, instance: string, requestId: string, headers: Record<string, string> = {}): void {
  const body = problemJson(p, instance, requestId);
  res
    .writeHead(p.status, { 'Content-Type': 'application/problem+json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'X-Request-Id': requestId, ...headers })
    .end(body);
}

/** RFC 9457 problem details; a 503 carries Retry-After. */
export function sendProblem(res: Response, p: Problem, retryAfter?: number): void {
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  else if (p.status === 503 && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
  res.status(p.status).type('application/problem+json').json(problemBody(res, p));
}

/** 5xx bodies say only that the error was logged, with the id under which it was. */
export function internalProblem(requestId: string): Problem {
  return problem(500, `An unexpected error occurred and was logged with request id ${requestId}.`);
}

/**
 * Sends what `classify` made of `error`: its problem with field pointers (`pointer` turns an
 * issue path into one) and, for INTERNAL, logs it via `log` and shows only the request id.
 */
export function sendClassified(
  res: Response,
  error: unknown,
  log: (c: Classified) => void,
  pointer: (issue: Classified['issues'][number]) => string = (i) => '/' + i.path.join('/'),
): void {
  const c = classify(error);
  if (c.code === 'INTERNAL') {
    log(c);
    sendProblem(res, internalProblem(res.locals.requestId));
    return;
  }
  sendProblem(res, problem(c.status, c.detail, c.issues.map((i) => ({ pointer: pointer(i), detail: i.detail }))), c.retryAfter);
}
