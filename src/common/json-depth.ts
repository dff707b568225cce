import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors/app-error';

/** The default of `JSON_MAX_DEPTH`: how deep arrays and objects of a client's JSON may nest. */
export const JSON_MAX_DEPTH = 64;

/**
 * The path of the first value nested deeper than `max` levels (the root object or array is
 * level 1), or undefined. One iterative walk with its own stack, never recursion: a body of
 * 500,000 nested brackets costs a loop, not the call stack. The walk keeps no paths (a bulk
 * body has thousands of objects, each of which cost an array for its path and one per
 * entry); only a body that is too deep is walked again, with paths, to name the value.
 */
export function tooDeep(value: unknown, max: number): (string | number)[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length) {
    const top = values.pop()!;
    const depth = depths.pop()!;
    if (depth > max) return pathTooDeep(value, max);
    if (Array.isArray(top)) {
      for (let i = 0; i < top.length; i++) {
        const child: unknown = top[i];
        if (child !== null && typeof child === 'object') {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in top) {
        if (!Object.prototype.hasOwnProperty.call(top, key)) continue;
        const child: unknown = (top as Record<string, unknown>)[key];
        if (child !== null && typeof child === 'object') {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return undefined;
}

/** tooDeep's walk with the path of every value: the same order, so it names the same value. */
function pathTooDeep(value: object, max: number): (string | number)[] | undefined {
  const stack: { value: object; depth: number; path: (string | number)[] }[] = [{ value, depth: 1, path: [] }];
  while (stack.length) {
    const top = stack.pop()!;
    if (top.depth > max) return top.path;
    const entries: [string | number, unknown][] = Array.isArray(top.value) ? top.value.map((v, i) => [i, v]) : Object.entries(top.value);
    for (const [key, child] of entries) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: top.depth + 1, path: [...top.path, key] });
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
