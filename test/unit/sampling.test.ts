import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { PRESAMPLED_ROOT, requestSampling } from '../../src/observability/sampling';

describe('sampling drawn before any span (src/observability/sampling.ts)', () => {
  it('draws only for parentbased_traceidratio below 1, read as the SDK reads the variables', () => {
    expect(requestSampling({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }).rootRatio).toBe(0.1);
    expect(requestSampling({ OTEL_TRACES_SAMPLER: ' parentbased_traceidratio ', OTEL_TRACES_SAMPLER_ARG: ' 0 ' }).rootRatio).toBe(0);
    for (const arg of [undefined, '', '1', '2', '-0.5', 'half', '0x1']) {
      expect(requestSampling({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: arg }), String(arg)).toEqual({});
    }
    for (const name of [undefined, 'traceidratio', 'always_on', 'parentbased_always_off', 'jaeger_remote']) {
      expect(requestSampling({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: '0.1' }), String(name)).toEqual({});
    }
  });

  it('the SDK\'s sampler records a drawn root whatever the trace id, and leaves any other root to the ratio', () => {
    const { sampler } = requestSampling({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
    const traceId = 'f'.repeat(32);
    expect(sampler!.shouldSample(PRESAMPLED_ROOT, traceId, 'GET', SpanKind.SERVER, {}, []).decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(sampler!.shouldSample(ROOT_CONTEXT, traceId, 'job x', SpanKind.CONSUMER, {}, []).decision).toBe(SamplingDecision.NOT_RECORD);
    expect(String(sampler)).toContain('RequestRootSampler');
  });
});
