import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export interface Sample {
  labels?: Record<string, string>;
  value: string;
}
export interface Family {
  name: string;
  type: string;
  metrics: Sample[];
}

/**
 * The Prometheus text format, parsed by parse-prometheus-text-format (a real parser, prom2json's
 * output). That parser merges the samples of a histogram into one and drops their labels when
 * the histogram has labels, so histograms and summaries are read as what they are on the wire:
 * families `<name>_bucket` (with `le`), `<name>_sum` and `<name>_count`, one sample per series.
 */
export function parseMetrics(text: string): Map<string, Family> {
  const flat = text.replace(/^# TYPE (\S+) (histogram|summary)$/gm, '# TYPE $1 untyped');
  const families = new Map<string, Family>();
  // The series of one histogram interleave (buckets, sum, count per label set): one family per name.
  for (const f of parsePrometheusTextFormat(flat) as Family[]) {
    const seen = families.get(f.name);
    if (seen) seen.metrics.push(...f.metrics);
    else families.set(f.name, f);
  }
  return families;
}

/** Series as Prometheus stores them: one per sample. */
export function seriesCount(families: Map<string, Family>): number {
  let n = 0;
  for (const f of families.values()) n += f.metrics.length;
  return n;
}

const matches = (labels: Record<string, string> | undefined, want: Record<string, string>) =>
  Object.entries(want).every(([k, v]) => labels?.[k] === v);

/** Sum of the values of the samples of `name` whose labels include `want`. */
export function total(families: Map<string, Family>, name: string, want: Record<string, string> = {}): number {
  const f = families.get(name);
  if (!f) return 0;
  return f.metrics.filter((m) => matches(m.labels, want)).reduce((s, m) => s + Number(m.value), 0);
}
