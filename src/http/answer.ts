import type { Response } from 'express';

/** A complete answer: what the facade sends, and what is stored for a key. */
export interface Answer {
  status: number;
  /** Empty for 204/304. */
  contentType: string;
  body: string;
  headers?: Record<string, string>;
  /** Status deciding storage when it differs from `status` (GraphQL answers errors with 200). */
  classifyAs?: number;
  /** Set on an answer whose effects were rolled back and that was not stored. */
  discarded?: boolean;
  /** Set on the 503 of an operation that deadlocked: its transaction can be run again as a whole. */
  deadlocked?: boolean;
}

export const jsonAnswer = (status: number, value: unknown, contentType = 'application/json'): Answer => ({
  status,
  contentType,
  body: JSON.stringify(value),
});

/**
 * Writes `answer` (status, headers, body) as Express's `res.type().send()` would, with the same
 * headers (`Content-Type` with `charset=utf-8`, `Content-Length`), but as one string with the
 * head: `send` copied every body of 1,000 characters or more into a Buffer, which then went
 * out as a second chunk of a `writev`, and parsed and formatted the content type again on
 * every answer. Express's ETag and freshness steps did nothing here: the app's ETag is off and
 * the facade answers If-None-Match itself. A HEAD, 204 or 304 has no body (Node drops it).
 */
export function sendAnswer(res: Response, answer: Pick<Answer, 'status' | 'contentType' | 'body' | 'headers'>): void {
  res.statusCode = answer.status;
  if (answer.headers) for (const name in answer.headers) res.setHeader(name, answer.headers[name]);
  if (!answer.contentType) {
    res.end();
    return;
  }
  res.setHeader('Content-Type', /;\s*charset=/i.test(answer.contentType) ? answer.contentType : `${answer.contentType}; charset=utf-8`);
  res.setHeader('Content-Length', Buffer.byteLength(answer.body));
  res.end(answer.body);
}
