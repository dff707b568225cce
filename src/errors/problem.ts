import type { Response } from 'express';
import type { ErrorCode } from './app-error';

export const STATUS: Record<ErrorCode, number> = {
  VALIDATION: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
};

const TITLE: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

const SLUG: Record<number, string> = {
  400: 'validation-error',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  409: 'conflict',
  410: 'gone',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  429: 'rate-limited',
  500: 'internal-error',
  503: 'unavailable',
};

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
    type: `/problems/${SLUG[status] ?? 'error'}`,
    title: TITLE[status] ?? 'Error',
    status,
    detail,
    ...(errors?.length ? { errors } : {}),
  };
}

/** RFC 9457 problem details. */
export function sendProblem(res: Response, p: Problem): void {
  const requestId = res.locals.requestId as string | undefined;
  res
    .status(p.status)
    .type('application/problem+json')
    .json({ ...p, instance: res.req.originalUrl.split('?')[0], ...(requestId ? { requestId } : {}) });
}

/** 5xx bodies say only that the error was logged, with the id under which it was. */
export function internalProblem(requestId: string): Problem {
  return problem(500, `An unexpected error occurred and was logged with request id ${requestId}.`);
}
