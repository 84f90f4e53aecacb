import { deserialize, serialize } from 'node:v8';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeMetricsRequest, decodeTraceRequest } from '../../../collector/otlp/codec.js';
import { DecodePool } from '../../../collector/receiver/otlp/decode-pool.js';
import { PART_WEIGHT, fromParts, toParts } from '../../../collector/receiver/otlp/decoded-parts.js';
import { TraceRequest } from '../../../collector/otlp/proto-root.js';
import { wideExport } from '../../faults/big-export.js';
import { type Json, MINUTE_NS, attribute, decodeMetrics, encodeMetrics, metricsRequest, msToNs, requestPoint } from '../helpers/otlp.js';

/** Objects and strings, as the parts count them. */
function weight(value: unknown): number {
  if (typeof value === 'string') return 1;
  if (typeof value !== 'object' || value === null) return 0;
  if (ArrayBuffer.isView(value)) return 1;
  let sum = 1;
  for (const child of Array.isArray(value) ? value : Object.values(value)) sum += weight(child);
  return sum;
}

/** What one structured clone of the decoded request gave the main thread before. */
const asPlainData = (request: unknown): unknown => deserialize(serialize(request));

function inParts(request: object): { parts: Uint8Array[]; plain: unknown } {
  const plain = asPlainData(request);
  return { parts: toParts(request), plain };
}

const now = msToNs(Date.now());

describe('a decoded request in parts', () => {
  it('20,000 counted points: comes back exactly, in parts of at most PART_WEIGHT values each', async () => {
    const { parts, plain } = inParts(decodeMetricsRequest(wideExport(20_000).body, 'protobuf'));
    expect(parts.length).toBeGreaterThan(20);
    for (const part of parts) {
      const steps = deserialize(part) as { items: unknown[] }[];
      expect(steps.reduce((sum, step) => sum + step.items.reduce<number>((items, item) => items + weight(item), 0), 0)).toBeLessThanOrEqual(PART_WEIGHT);
    }
    expect(await fromParts(parts)).toStrictEqual(plain);
  });

  it('30,000 resources of one point each, and one point with 50,000 attributes: come back exactly, each in many parts', async () => {
    const resources = Array.from({ length: 30_000 }, (_, index) => ({
      resource: { instance: `i-${index}` },
      requests: [requestPoint({ client: `c-${index}`, count: 1, startNs: now - MINUTE_NS, timeNs: now })],
    }));
    const many = inParts(decodeMetricsRequest(encodeMetrics(metricsRequest(...resources)), 'protobuf'));
    expect(many.parts.length).toBeGreaterThan(20);
    expect(await fromParts(many.parts)).toStrictEqual(many.plain);

    const extra: Json[] = Array.from({ length: 50_000 }, (_, index) => attribute(`x.${index}`, index % 2 === 0 ? `v-${index}` : index));
    const fat = inParts(
      decodeMetricsRequest(encodeMetrics(metricsRequest({ requests: [requestPoint({ count: 1, startNs: now - MINUTE_NS, timeNs: now, extra })] })), 'protobuf'),
    );
    expect(fat.parts.length).toBeGreaterThan(10);
    expect(await fromParts(fat.parts)).toStrictEqual(fat.plain);
  });

  it('spans with their byte ids, and a small request in one part: come back exactly', async () => {
    const spans = Array.from({ length: 5_000 }, (_, index) => ({
      traceId: Buffer.alloc(16, index % 256).toString('base64'),
      spanId: Buffer.alloc(8, (index + 1) % 256).toString('base64'),
      name: `tools/call t-${index}`,
      startTimeUnixNano: String(now),
      endTimeUnixNano: String(now + 1_000_000n),
      attributes: [attribute('mcp.method.name', 'tools/call'), attribute('n', index)],
    }));
    const body = Buffer.from(
      TraceRequest.encode(
        TraceRequest.fromObject({ resourceSpans: [{ resource: { attributes: [attribute('service.name', 's')] }, scopeSpans: [{ spans }] }] }),
      ).finish(),
    );
    const traces = inParts(decodeTraceRequest(body, 'protobuf'));
    expect(traces.parts.length).toBeGreaterThan(1);
    expect(await fromParts(traces.parts)).toStrictEqual(traces.plain);

    const small = inParts(
      decodeMetricsRequest(encodeMetrics(metricsRequest({ requests: [requestPoint({ count: 1, startNs: now - MINUTE_NS, timeNs: now })] })), 'protobuf'),
    );
    expect(small.parts).toHaveLength(1);
    expect(await fromParts(small.parts)).toStrictEqual(small.plain);
  });
});

describe('the decode pool', () => {
  const pool = new DecodePool(1);
  afterAll(() => pool.close());

  it('gives a large protobuf or JSON body back as the same plain data the body decodes to in place', async () => {
    const big = wideExport(5_000);
    const expected = asPlainData(decodeMetricsRequest(big.body, 'protobuf'));
    expect(await pool.decodeMetrics(big.body, 'protobuf')).toStrictEqual(expected);
    const json = Buffer.from(JSON.stringify(decodeMetrics(big.body)));
    expect(json.length).toBeGreaterThan(64 * 1024);
    expect(await pool.decodeMetrics(json, 'json')).toStrictEqual(asPlainData(decodeMetricsRequest(json, 'json')));
  });
});
