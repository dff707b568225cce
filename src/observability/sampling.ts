import { createContextKey, ROOT_CONTEXT, type Attributes, type Context, type Link, type SpanKind } from '@opentelemetry/api';
import type { Sampler, SamplingResult } from '@opentelemetry/sdk-trace';

/**
 * A request's sampling decided before any OpenTelemetry call (src/observability/http.ts): with
 * `OTEL_TRACES_SAMPLER=parentbased_traceidratio` at a ratio under 1, a request that brings no
 * trace context of its caller is drawn at that ratio first. One left out makes no span at all
 * (no propagation read, no ids, no sampler call); one drawn starts its server span under
 * PRESAMPLED, which the SDK's sampler (`requestSampling().sampler`) records. Everything else
 * (a caller's `traceparent`, a job's root span, any other sampler) goes through the SDK as
 * configured. The ratio is the same; which requests it keeps is drawn with Math.random
 * instead of read from the trace id, which nothing downstream can tell from the outside: the
 * caller sent no trace, and the services this one calls follow its sampled flag.
 */
const PRESAMPLED = createContextKey('community-api.presampled');

/** The context a drawn request's server span starts under. */
export const PRESAMPLED_ROOT = ROOT_CONTEXT.setValue(PRESAMPLED, true);

/** The root sampler: a drawn request is recorded, any other root span is the ratio's to decide. */
class RequestRootSampler implements Sampler {
  constructor(
    private readonly ratio: Sampler,
    private readonly recorded: SamplingResult,
  ) {}

  shouldSample(context: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (context.getValue(PRESAMPLED) === true) return this.recorded;
    return this.ratio.shouldSample(context, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `RequestRootSampler{${this.ratio.toString()}}`;
  }
}

export interface RequestSampling {
  /** The ratio a request without a caller's trace context is drawn at; undefined: no draw, the SDK decides. */
  rootRatio?: number;
  /** The sampler for the SDK (undefined: the SDK's own from OTEL_TRACES_SAMPLER). */
  sampler?: Sampler;
}

/**
 * From `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`, read as the SDK reads them: only
 * `parentbased_traceidratio` is drawn early (the sampler this service documents); a blank or
 * out-of-range ratio is 1 for the SDK, where a draw would keep every request anyway.
 */
export function requestSampling(env: NodeJS.ProcessEnv): RequestSampling {
  if (env.OTEL_TRACES_SAMPLER?.trim() !== 'parentbased_traceidratio') return {};
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = arg ? Number(arg) : NaN;
  if (!(ratio >= 0 && ratio < 1)) return {};
  // Loaded here, with the SDK (src/observability/tracing.ts): without tracing nothing of it is.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler } = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const root = new RequestRootSampler(new TraceIdRatioBasedSampler(ratio), { decision: SamplingDecision.RECORD_AND_SAMPLED });
  return { rootRatio: ratio, sampler: new ParentBasedSampler({ root }) };
}
