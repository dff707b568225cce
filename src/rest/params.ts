import type { Request } from 'express';
import type { FieldIssue } from '../errors/app-error';

export type QueryIssue = { pointer: string; detail: string };

/** A query parameter given once, as text; repeated parameters are an error. */
export function single(req: Request, name: string, issues: QueryIssue[]): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    issues.push({ pointer: `#/query/${name}`, detail: `${name} must be given once, as a plain value` });
    return undefined;
  }
  return value;
}

/** The largest integer a query parameter may be: GraphQL's Int, which the operations take (the OpenAPI document's `maximum`). */
export const MAX_INT = 2 ** 31 - 1;

export function intParam(req: Request, name: string, issues: QueryIssue[]): number | undefined {
  const raw = single(req, name, issues);
  if (raw === undefined) return undefined;
  if (/^\d+$/.test(raw) && Number(raw) > MAX_INT) {
    // An integer still, only too large: say so (it was "must be an integer").
    issues.push({ pointer: `#/query/${name}`, detail: `${name} must be at most ${MAX_INT}` });
    return undefined;
  }
  if (!/^-?\d{1,10}$/.test(raw) || Math.abs(Number(raw)) > MAX_INT) {
    issues.push({ pointer: `#/query/${name}`, detail: `${name} must be an integer` });
    return undefined;
  }
  return Number(raw);
}

/** `name:desc,createdAt` -> [{ field: 'name', direction: 'DESC' }, { field: 'createdAt', direction: 'ASC' }] */
export function sortParam(req: Request, allowed: string[], issues: QueryIssue[]) {
  const raw = single(req, 'sort', issues);
  if (raw === undefined) return undefined;
  const specs: { field: string; direction: 'ASC' | 'DESC' }[] = [];
  for (const part of raw.split(',')) {
    const [field, direction = 'asc', ...rest] = part.trim().split(':');
    if (!allowed.includes(field)) {
      issues.push({ pointer: '#/query/sort', detail: `sort field "${field}" is not sortable; use one of ${allowed.join(', ')}` });
    } else if (rest.length || !['asc', 'desc'].includes(direction.toLowerCase())) {
      issues.push({ pointer: '#/query/sort', detail: `sort direction of "${field}" must be asc or desc` });
    } else {
      specs.push({ field, direction: direction.toLowerCase() === 'desc' ? 'DESC' : 'ASC' });
    }
  }
  return specs;
}

const escape = (s: string | number) => String(s).replace(/~/g, '~0').replace(/\//g, '~1');

export const bodyPointer = (path: (string | number)[]): string => (path.length ? '/' + path.map(escape).join('/') : '');

/** Maps a core issue (path starting with the GraphQL argument) to where the REST client put the value. */
export function pointerFor(issue: FieldIssue, sources: Map<string, string>): string {
  // A value bound from one query parameter inside an argument (`filter.q` -> #/query/q): the longest known prefix.
  for (let n = issue.path.length; n > 1; n--) {
    const source = sources.get(issue.path.slice(0, n).join('.'));
    if (source) return source;
  }
  const [arg, ...rest] = issue.path;
  const source = sources.get(String(arg));
  if (source === 'body') return bodyPointer(rest) || '/';
  if (source) return source;
  return bodyPointer(issue.path);
}
