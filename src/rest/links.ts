import type { Request } from 'express';

export function baseUrl(req: Request, publicBaseUrl: string | undefined): string {
  return publicBaseUrl ?? `${req.protocol}://${req.get('host')}`;
}

/** The request's query without api_key, which never appears in any link. */
function cleanQuery(req: Request): URLSearchParams {
  const url = new URL(req.originalUrl, 'http://x');
  url.searchParams.delete('api_key');
  return url.searchParams;
}

export function listLinks(req: Request, publicBaseUrl: string | undefined, page: { limit: number; skip: number; hasNextPage: boolean }) {
  const base = baseUrl(req, publicBaseUrl);
  const path = req.originalUrl.split('?')[0];
  const query = cleanQuery(req);
  const self = `${base}${path}${query.size ? `?${query}` : ''}`;
  const at = (skip: number) => {
    const q = new URLSearchParams(query);
    q.set('skip', String(skip));
    q.set('limit', String(page.limit));
    return `${path}?${q}`;
  };
  return {
    base,
    self,
    ...(page.hasNextPage ? { next: at(page.skip + page.limit) } : {}),
    ...(page.skip > 0 ? { prev: at(Math.max(0, page.skip - page.limit)) } : {}),
  };
}

/** A cursor list (the event feed): `next` continues after the last record of this page. */
export function cursorLinks(req: Request, publicBaseUrl: string | undefined, next: string | null) {
  const base = baseUrl(req, publicBaseUrl);
  const path = req.originalUrl.split('?')[0];
  const query = cleanQuery(req);
  const self = `${base}${path}${query.size ? `?${query}` : ''}`;
  if (next === null) return { base, self };
  const q = new URLSearchParams(query);
  q.set('after', next);
  return { base, self, next: `${path}?${q}` };
}
