import { SEARCH } from './rules';
import type { Checks } from './validate';

/**
 * `q` of a list filter, trimmed and checked (1-100 characters after trimming); the issue is
 * placed at `q` of the checked filter. undefined: no text filter (absent or null).
 */
export function searchText(checks: Checks, q: string | null | undefined): string | undefined {
  if (q == null) return undefined;
  const text = q.trim();
  const before = checks.issues.length;
  checks.string('q', text, SEARCH.q);
  return checks.issues.length === before ? text : undefined;
}

/**
 * The LIKE/ILIKE pattern "contains `text`" that treats every character of the text literally:
 * `%`, `_` and the escape character `\` (PostgreSQL's default LIKE escape) are escaped.
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}
