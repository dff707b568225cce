import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors/app-error';

/** The default of `JSON_MAX_DEPTH`: how deep arrays and objects of a client's JSON may nest. */
export const JSON_MAX_DEPTH = 64;

/**
 * The path of the first value nested deeper than `max` levels (the root object or array is
 * level 1), or undefined. One iterative walk with its own stack, never recursion: a body of
 * 500,000 nested brackets costs a loop, not the call stack.
 */
export function tooDeep(value: unknown, max: number): (string | number)[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  // Each entry links to its parent: a path is built only for the value refused.
  type Entry = { value: object; depth: number; parent: Entry | undefined; key: string | number };
  const stack: Entry[] = [{ value, depth: 1, parent: undefined, key: '' }];
  while (stack.length) {
    const top = stack.pop()!;
    if (top.depth > max) {
      const path: (string | number)[] = [];
      for (let e: Entry | undefined = top; e?.parent; e = e.parent) path.unshift(e.key);
      return path;
    }
    const depth = top.depth + 1;
    if (Array.isArray(top.value)) {
      const list = top.value as unknown[];
      for (let i = 0; i < list.length; i++) {
        const child = list[i];
        if (child !== null && typeof child === 'object') stack.push({ value: child, depth, parent: top, key: i });
      }
    } else {
      const record = top.value as Record<string, unknown>;
      for (const key in record) {
        if (!Object.hasOwn(record, key)) continue;
        const child = record[key];
        if (child !== null && typeof child === 'object') stack.push({ value: child, depth, parent: top, key });
      }
    }
  }
  return undefined;
}

/** The refusal of a value nested deeper than `max`: a 400 naming the limit and where it was passed. */
export function depthError(path: (string | number)[], max: number): AppError {
  const detail = `JSON nesting exceeds the limit of ${max} levels (JSON_MAX_DEPTH)`;
  return new AppError('VALIDATION', detail, [{ path, detail }]);
}

/**
 * After a JSON body parser: a body nested deeper than `max` is refused before anything reads
 * it (REST bodies, the /graphql request with its variables and extensions). The error goes
 * to Express's error handler, which answers 400 problem+json with the pointer of the value.
 */
export function limitJsonDepth(max: number) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const path = tooDeep(req.body, max);
    next(path ? depthError(path, max) : undefined);
  };
}
