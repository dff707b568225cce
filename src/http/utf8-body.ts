import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** body-parser's error `type` for a body that is not the UTF-8 it says it is (src/errors/classify.ts). */
export const NOT_UTF8 = 'entity.not.utf8';
/** What the client is told (the problem's detail and its one error). */
export const NOT_UTF8_DETAIL = 'The request body is not valid UTF-8';

/**
 * body-parser's `verify` for the JSON and CSV bodies: a body read as UTF-8 (JSON always is,
 * RFC 8259; CSV unless its `charset` names another encoding) must be valid UTF-8. Without it,
 * invalid bytes were decoded as U+FFFD and stored in place of what the client sent, with a
 * 201. The check is node:buffer's `isUtf8` over the bytes as received (after any
 * Content-Encoding), before they are decoded.
 */
export function utf8Only(_req: IncomingMessage, _res: ServerResponse, body: Buffer, encoding: string): void {
  if (/^utf-?8$/i.test(encoding) && !isUtf8(body)) {
    throw Object.assign(new Error(NOT_UTF8_DETAIL), { status: 400, type: NOT_UTF8 });
  }
}
