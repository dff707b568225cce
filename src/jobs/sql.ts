/**
 * SQL for "column is one of these values", bound to ONE parameter: a PostgreSQL array
 * literal (see arrayOf). The planner sees a constant array, so it probes the index or
 * hashes the list. `col in (select jsonb_array_elements_text(?))` or `any(array(select ...))`
 * instead compared every row with every value (or re-ran the function per row) on fresh or
 * stale table statistics: seconds for a 10,000-row import.
 */
export const anyOf = (cast: 'text' | 'uuid' = 'text'): string => `any(?::${cast}[])`;

/** The array literal for an anyOf parameter: `{"a","b \\"c\\""}`. */
export function arrayOf(values: Iterable<string>): string {
  return `{${[...values].map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}
