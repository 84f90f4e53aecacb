import { describe, expect, it } from 'vitest';
import { METRICS } from '../../../contract/index.js';
import type { MetricsBatch } from '../../../collector/model/batches.js';
import type { MetricsConsumer, MetricsOutcome } from '../../../collector/model/consumer.js';
import { PermanentError } from '../../../collector/model/errors.js';
import { MS_PER_HOUR, MS_PER_MINUTE } from '../../../collector/model/time.js';
import type { ExportMetricsServiceRequest } from '../../../collector/otlp/messages.js';
import { NormaliseMetrics } from '../../../collector/processor/normalise-metrics/index.js';
import { schema1StreamAttributes } from '../../../collector/processor/normalise-metrics/stream-key-v1.js';
import { CUMULATIVE, type Json, attribute, extensionPoint, metricsRequest, msToNs, processEnded } from '../helpers/otlp.js';

const NOW = Date.UTC(2026, 4, 1, 12, 0);
const t = msToNs(NOW);

function normaliser(): { processor: NormaliseMetrics; batches: MetricsBatch[] } {
  const batches: MetricsBatch[] = [];
  const next: MetricsConsumer<MetricsBatch> = {
    async consumeMetrics(batch): Promise<MetricsOutcome> {
      batches.push(batch);
      return { applied: 0, duplicates: 0, ignored: new Map(), rejections: [], rejectedReason: undefined, counts: [] };
    },
  };
  return {
    processor: new NormaliseMetrics({ maxAttributeLength: 256, maxFutureSkewMs: MS_PER_MINUTE, dedupWindowMs: MS_PER_HOUR, clock: () => NOW }, next),
    batches,
  };
}

const base = {
  client: 'alpha',
  version: '1.0',
  count: 1,
  startNs: t - 60_000_000_000n,
  timeNs: t,
  id: 'com.example/a',
  clientDeclared: true,
  serverDeclared: true,
};
/** An extension point with one attribute replaced (or removed, with `undefined`). */
function pointWith(name: string, value: Json | undefined, extra: Json[] = []): ExportMetricsServiceRequest {
  const point = extensionPoint({ ...base, extra });
  const attributes = (point['attributes'] as Json[]).filter((a) => a['key'] !== name);
  if (value !== undefined) attributes.push({ key: name, value });
  return metricsRequest({ resource: { instance: 'i-1' }, temporality: CUMULATIVE, extensions: [{ ...point, attributes }] }) as ExportMetricsServiceRequest;
}

describe('normalise-metrics, as the contract tables say', () => {
  const attributes = METRICS.extensionRequests.attributes;

  it('refuses a value outside a closed set, and a missing mandatory value, for every such attribute', async () => {
    for (const spec of attributes.filter((a) => 'closed' in a && a.closed)) {
      const { processor } = normaliser();
      await expect(processor.consumeMetrics(pointWith(spec.name, { stringValue: 'maybe' })), spec.name).rejects.toThrow(
        new RegExp(`attribute ${spec.name} must be one of .* \\(got "maybe"\\)`),
      );
    }
    for (const spec of attributes.filter((a) => 'mandatory' in a && a.mandatory)) {
      const { processor } = normaliser();
      await expect(processor.consumeMetrics(pointWith(spec.name, undefined)), spec.name).rejects.toBeInstanceOf(PermanentError);
    }
  });

  it('refuses a mistyped value and an over-long string, for every attribute', async () => {
    for (const spec of attributes) {
      const { processor } = normaliser();
      const wrong = spec.type === 'boolean' ? { intValue: '1' } : { arrayValue: { values: [] } };
      await expect(processor.consumeMetrics(pointWith(spec.name, wrong)), spec.name).rejects.toThrow(`attribute ${spec.name} must be a ${spec.type}`);
      if (spec.type === 'string') {
        await expect(processor.consumeMetrics(pointWith(spec.name, { stringValue: 'x'.repeat(257) })), spec.name).rejects.toThrow(
          `attribute ${spec.name} is 257 characters long`,
        );
      }
    }
  });

  it('keeps every value in the field the table names', async () => {
    const { processor, batches } = normaliser();
    await processor.consumeMetrics(pointWith('mcp.protocol.version', { stringValue: '2026-07-28' }));
    const dims = batches[0]?.resources[0]?.counters[0]?.dims as unknown as Record<string, unknown>;
    expect(dims).toMatchObject({
      kind: 1,
      clientName: 'alpha',
      clientVersion: '1.0',
      protocolVersion: '2026-07-28',
      extensionId: 'com.example/a',
      clientDeclared: true,
      serverDeclared: true,
      negotiated: true,
      required: false,
    });
    for (const spec of attributes) expect(dims, spec.key).toHaveProperty(spec.key);
  });

  it('identifies a stream by its attributes by name: order does not matter, an added attribute makes another stream', async () => {
    const { processor, batches } = normaliser();
    const request = pointWith('extscope.outcome', { stringValue: 'complete' });
    const reversed = structuredClone(request) as unknown as {
      resourceMetrics: { scopeMetrics: { metrics: { sum: { dataPoints: { attributes: Json[] }[] } }[] }[] }[];
    };
    reversed.resourceMetrics[0]?.scopeMetrics[0]?.metrics[0]?.sum.dataPoints[0]?.attributes.reverse();
    await processor.consumeMetrics(request);
    await processor.consumeMetrics(reversed as unknown as ExportMetricsServiceRequest);
    await processor.consumeMetrics(pointWith('extscope.outcome', { stringValue: 'complete' }, [attribute('deployment.environment', 'prod')]));
    const keys = batches.map((batch) => batch.resources[0]?.counters[0]?.streamAttributes);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it("keeps the time of extscope.process.ended on the sender's clock (the store orders a process's exports by it); an export without it is not a last one", async () => {
    const { processor, batches } = normaliser();
    const endedNs = t - 5_000_000_000n;
    await processor.consumeMetrics(metricsRequest({ resource: { instance: 'i-1' }, other: [processEnded(endedNs)] }) as ExportMetricsServiceRequest);
    await processor.consumeMetrics(pointWith('extscope.outcome', { stringValue: 'complete' }));
    expect(batches.map((batch) => batch.resources[0]?.endedMs)).toEqual([NOW - 5_000, undefined]);
    await expect(
      processor.consumeMetrics(
        metricsRequest({ resource: { instance: 'i-1' }, other: [processEnded(t + msToNs(2 * MS_PER_MINUTE))] }) as ExportMetricsServiceRequest,
      ),
    ).rejects.toThrow(/extscope.process.ended: a data point is dated .* ahead of the collector's clock/);
  });

  it("hands on a batch that reaches none of the decoded request's objects, its points carrying their schema-1 key part instead", async () => {
    const { processor, batches } = normaliser();
    const objects = (root: unknown): Set<object> => {
      const seen = new Set<object>();
      const walk = (value: unknown): void => {
        if (typeof value !== 'object' || value === null || seen.has(value)) return;
        seen.add(value);
        for (const item of value instanceof Map ? [...value.keys(), ...value.values()] : Object.values(value)) walk(item);
      };
      walk(root);
      return seen;
    };
    const requests = [pointWith('extscope.outcome', { stringValue: 'complete' }), pointWith('extscope.outcome', { stringValue: 'complete' })];
    for (const request of requests) await processor.consumeMetrics(request);
    for (const [index, request] of requests.entries()) {
      const decoded = objects(request);
      const reached = [...objects(batches[index])].filter((object) => decoded.has(object));
      expect(reached, `export ${index + 1}`).toEqual([]);
      const attributes = (request.resourceMetrics?.[0]?.scopeMetrics?.[0]?.metrics?.[0]?.sum?.dataPoints?.[0]?.attributes ?? []) as Parameters<
        typeof schema1StreamAttributes
      >[0];
      // The second export's stream is known already: its key part comes from what the first one's attributes made.
      expect(batches[index]?.resources[0]?.counters[0]?.schema1Attributes, `export ${index + 1}`).toBe(schema1StreamAttributes(attributes));
    }
  });
});
