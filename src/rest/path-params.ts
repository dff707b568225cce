import { unescape } from 'node:querystring';
import type { NextFunction, Request, Response } from 'express';
import { problem, sendProblem } from '../errors/problem';
import { bodyPointer } from './params';

/** A segment Express would fail to decode (`%zz`, a lone `%`, truncated or overlong UTF-8, an encoded surrogate). */
function malformed(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return false;
  } catch {
    return true;
  }
}

/**
 * The one decoding check of path parameters, for every route of the table and every method:
 * a path that has the shape of a route (`/groups/:identifier`) but whose parameter is not
 * valid percent-encoded UTF-8 is a 400 problem+json naming the parameter
 * (`#/path/identifier`), before Express's router tries to decode it (which throws). A
 * malformed segment where a route has a fixed word matches no route: 404 as any unknown path.
 * `paths` are Express paths relative to where the middleware is mounted.
 */
export function checkPathParams(paths: string[]) {
  const shapes = [...new Set(paths)].map((p) => p.split('/').slice(1));
  return (req: Request, res: Response, next: NextFunction) => {
    const raw = req.path.replace(/(.)\/$/, '$1');
    if (!raw.includes('%')) return next();
    const segments = raw.split('/').slice(1);
    const bad = new Set<string>();
    for (const shape of shapes) {
      if (shape.length !== segments.length) continue;
      const fits = shape.every((part, i) => (part.startsWith(':') ? segments[i] !== '' : part.toLowerCase() === segments[i].toLowerCase()));
      if (!fits) continue;
      shape.forEach((part, i) => {
        if (part.startsWith(':') && malformed(segments[i])) bad.add(part.slice(1));
      });
    }
    if (!bad.size) return next();
    const errors = [...bad].map((name) => ({
      pointer: `#/path/${name}`,
      detail: `${name} is not valid percent-encoded UTF-8`,
    }));
    sendProblem(res, problem(400, errors.length === 1 ? errors[0].detail : 'The path has malformed parameters', errors));
  };
}

/**
 * The same check for the query string: a parameter whose name or value is not valid
 * percent-encoded UTF-8 (`?q=%FF`, `?limit=%zz`) is a 400 problem+json naming it
 * (`#/query/q`). Express's parser (node:querystring) decodes such bytes to U+FFFD, so
 * `?q=%FF` searched for U+FFFD and answered a 200. Costs nothing on a query without `%`.
 */
export function checkQueryEncoding(req: Request, res: Response, next: NextFunction): void {
  const url = req.url;
  const start = url.indexOf('?');
  if (start < 0 || url.indexOf('%', start) < 0) return next();
  const bad = new Set<string>();
  for (const pair of url.slice(start + 1).split('&')) {
    if (!pair.includes('%')) continue;
    const eq = pair.indexOf('=');
    const name = (eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' ');
    if (malformed(name) || (eq >= 0 && malformed(pair.slice(eq + 1).replace(/\+/g, ' ')))) bad.add(unescape(name));
  }
  if (!bad.size) return next();
  const errors = [...bad].map((name) => ({ pointer: `#/query${bodyPointer([name])}`, detail: `${name} is not valid percent-encoded UTF-8` }));
  sendProblem(res, problem(400, errors.length === 1 ? errors[0].detail : 'The query string has malformed parameters', errors));
}
