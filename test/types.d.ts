/*
 * Types for the two untyped packages the tests use, only the members they call
 * (`npm run typecheck` reads this file). Neither package ships types; parse-prometheus-text-format
 * has no @types package, and @types/madge describes madge 5 (an extra dependency for two methods).
 */

declare module 'madge' {
  namespace madge {
    interface Config {
      fileExtensions?: string[];
      tsConfig?: string | object;
    }
    interface Result {
      /** Each file (relative to the base directory) and the files it imports. */
      obj(): Record<string, string[]>;
      /** The import cycles, each as its files in order. */
      circular(): string[][];
    }
  }
  function madge(path: string | string[], config?: madge.Config): Promise<madge.Result>;
  export = madge;
}

declare module 'parse-prometheus-text-format' {
  namespace parsePrometheusTextFormat {
    /** One sample, prom2json's shape: `value` for counters, gauges and untyped metrics. */
    interface Metric {
      value?: string;
      labels?: Record<string, string>;
      timestamp_ms?: string;
      buckets?: Record<string, string>;
      quantiles?: Record<string, string>;
      count?: string;
      sum?: string;
    }
    interface MetricFamily {
      name: string;
      help: string;
      /** The `# TYPE` line's type, upper-cased (COUNTER, GAUGE, ...); UNTYPED without one. */
      type: string;
      metrics: Metric[];
    }
  }
  function parsePrometheusTextFormat(text: string): parsePrometheusTextFormat.MetricFamily[];
  export = parsePrometheusTextFormat;
}
