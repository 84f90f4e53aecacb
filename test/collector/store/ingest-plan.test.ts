import { describe, expect, it } from 'vitest';
import { type CounterPoint, type ResourceBatch, type SeriesDims, SeriesKind, Temporality } from '../../../collector/model/batches.js';
import { MAX_COUNT_PER_STREAM_MINUTE } from '../../../collector/model/records.js';
import { NANOS_PER_MINUTE } from '../../../collector/model/time.js';
import { mergeAdvertisements, planAdvertisements } from '../../../collector/store/common/advertisement-plan.js';
import type { CumulativeState } from '../../../collector/store/common/cumulative-rule.js';
import { IngestPlan, type PlannedPoint, type StreamRef, StreamStarts, cellValues, needsStream } from '../../../collector/store/common/ingest-plan.js';

const dims = (kind: SeriesKind = SeriesKind.Requests): SeriesDims => ({
  kind,
  serverName: 's',
  serverVersion: '1',
  method: 'tools/call',
  era: 'modern',
  protocolVersion: 'p',
  clientName: 'c',
  clientVersion: '1',
  clientDeclaration: 'declared',
  serverDeclaration: 'declared',
  outcome: 'complete',
  statusCode: null,
  extensionId: kind === SeriesKind.Extension ? 'x/y' : null,
  clientDeclared: kind === SeriesKind.Extension ? true : null,
  serverDeclared: kind === SeriesKind.Extension ? true : null,
  negotiated: kind === SeriesKind.Extension ? true : null,
  required: kind === SeriesKind.Extension ? false : null,
});

const stream = (streamId: number): StreamRef => ({ streamId, seriesId: 100 + streamId, cellId: 200 + streamId, allCellId: 300 + streamId, dims: dims() });

function point(temporality: Temporality, minute: number, value: number, startMinute = 0): CounterPoint {
  return {
    dims: dims(),
    streamScope: 's',
    streamAttributes: 'a',
    schema1Attributes: '',
    temporality,
    startNs: BigInt(startMinute) * NANOS_PER_MINUTE,
    timeNs: BigInt(minute) * NANOS_PER_MINUTE,
    value,
  };
}

const planned = (streamId: number, p: CounterPoint): PlannedPoint => ({ point: p, stream: stream(streamId), service: 'svc' });

describe('the ingest plan (pure: what an export writes, from the state loaded for its keys)', () => {
  it('a zero delta needs no stream; a zero cumulative total does (it sets the baseline)', () => {
    expect(needsStream(point(Temporality.Delta, 1, 0))).toBe(false);
    expect(needsStream(point(Temporality.Delta, 1, 3))).toBe(true);
    expect(needsStream(point(Temporality.Cumulative, 1, 0))).toBe(true);
  });

  it('deltas are applied when the log takes them and duplicates when it already had them; each new row counts for its series', () => {
    const plan = new IngestPlan();
    const step = plan.points([planned(1, point(Temporality.Delta, 1, 2)), planned(2, point(Temporality.Delta, 1, 5))], new StreamStarts<CumulativeState>());
    expect(step.log.map((row) => [row.streamId, row.minute, row.value])).toEqual([
      [1, 1, 2],
      [2, 1, 5],
    ]);
    // The log took the second row only: the first was a retry's.
    plan.added(102, 5);
    plan.logged(step, 1);
    const result = plan.result();
    expect([result.applied, result.duplicates]).toEqual([1, 1]);
    expect(result.counts.map((count) => [count.service, count.count])).toEqual([['svc', 5]]);
  });

  it('cumulative totals: no state counts whole, then differences; a point not newer adds nothing; two of one key in one group chain', () => {
    const plan = new IngestPlan();
    const states = new StreamStarts<CumulativeState>();
    states.add(2, 0n, { endNs: 1n * NANOS_PER_MINUTE, value: 10 });
    const step = plan.points(
      [
        planned(1, point(Temporality.Cumulative, 1, 4)),
        planned(1, point(Temporality.Cumulative, 2, 9)),
        planned(2, point(Temporality.Cumulative, 1, 10)),
        planned(2, point(Temporality.Cumulative, 3, 12)),
      ],
      states,
    );
    expect(step.log.map((row) => [row.streamId, row.minute, row.value])).toEqual([
      [1, 1, 4],
      [1, 2, 5],
      [2, 3, 2],
    ]);
    expect(step.states.map((write) => [write.streamId, write.state.value, write.created])).toEqual([
      [1, 9, true],
      [2, 12, false],
    ]);
    plan.logged(step, 3);
    expect([plan.result().applied, plan.result().duplicates]).toEqual([3, 1]);
  });

  it('an increment beyond the per-stream bound becomes the baseline: state written, nothing logged, count_too_large', () => {
    const plan = new IngestPlan();
    const step = plan.points([planned(1, point(Temporality.Cumulative, 1, MAX_COUNT_PER_STREAM_MINUTE + 1))], new StreamStarts<CumulativeState>());
    expect(step.log).toEqual([]);
    expect(step.states.map((write) => write.state.value)).toEqual([MAX_COUNT_PER_STREAM_MINUTE + 1]);
    plan.logged(step, 0);
    const result = plan.result();
    expect([result.applied, result.duplicates]).toEqual([0, 0]);
    expect(result.rejections).toEqual([{ reason: 'count_too_large', service: 'svc', points: 1 }]);
  });

  it('an extension cell keeps no declaration state; a request cell does', () => {
    expect(cellValues(dims(SeriesKind.Extension))).not.toContain('declared');
    expect(cellValues(dims(SeriesKind.Requests))).toContain('declared');
  });

  it('advertisement generations: a newer collection starts one, the same time joins it, an older one only widens first/last seen', () => {
    const resource = {
      service: 'svc',
      instanceId: 'i',
      serviceVersion: null,
      host: null,
      serverName: null,
      serverVersion: null,
      canonical: 'svc/i',
      key: 'svc/i',
      instanceDerived: false,
    } as unknown as ResourceBatch['resource'];
    const gauges = (...times: number[]): ResourceBatch => ({
      resource,
      counters: [],
      advertised: times.map((timeMs, index) => ({ serverName: null, serverVersion: null, extensionId: `e/${index}`, fingerprint: null, timeMs })),
      advertisedCounts: [],
    });
    const first = planAdvertisements(gauges(5, 3), resource, { advertisedMs: null, generation: 0 });
    expect(first?.instance).toEqual({ advertisedMs: 5, generation: 1 });
    expect(first?.advertised.map((row) => [row[2], row[6]])).toEqual([
      ['e/0', 1],
      ['e/1', 0],
    ]);
    expect(planAdvertisements(gauges(5), resource, { advertisedMs: 5, generation: 1 })?.instance).toBeUndefined();
    expect(planAdvertisements(gauges(4), resource, { advertisedMs: 5, generation: 1 })?.advertised.map((row) => row[6])).toEqual([0]);
    // Stored under `_OTHER` (another identity than the one sent): nothing recorded.
    expect(planAdvertisements(gauges(6), { ...resource }, { advertisedMs: 5, generation: 1 })).toBeUndefined();
  });

  it('advertised counts: one row per server, as upserting each point in turn leaves it (the latest generation wins, of one generation the last point)', () => {
    const resource = {
      service: 'svc',
      instanceId: 'i',
      serviceVersion: null,
      host: null,
      serverName: null,
      serverVersion: null,
    } as unknown as ResourceBatch['resource'];
    const counts = (...points: [server: string, count: number, timeMs: number][]): ResourceBatch => ({
      resource,
      counters: [],
      advertised: [],
      advertisedCounts: points.map(([serverName, count, timeMs]) => ({ serverName, serverVersion: '1', count, timeMs })),
    });
    const plan = planAdvertisements(counts(['b', 1, 5], ['a', 7, 5], ['a', 3, 4], ['a', 8, 5]), resource, { advertisedMs: 4, generation: 2 });
    // Time 5 starts generation 3; time 4 is older (generation 0) and only widens first seen.
    expect(plan?.counts).toEqual([
      ['a', '1', 8, 4, 5, 3],
      ['b', '1', 1, 5, 5, 3],
    ]);
    const later = planAdvertisements(counts(['a', 2, 6]), resource, plan?.instance as NonNullable<typeof plan>['instance'] & object);
    const merged = mergeAdvertisements([plan, later].map((entry) => entry as NonNullable<typeof entry>));
    expect(merged.instance).toEqual({ advertisedMs: 6, generation: 4 });
    expect(merged.counts).toEqual([
      ['a', '1', 2, 4, 6, 4],
      ['b', '1', 1, 5, 5, 3],
    ]);
    // An older export merged after a newer one keeps the newer count.
    const older = planAdvertisements(counts(['a', 9, 5]), resource, { advertisedMs: 6, generation: 4 });
    expect(mergeAdvertisements([later, older].map((entry) => entry as NonNullable<typeof entry>)).counts).toEqual([['a', '1', 2, 5, 6, 4]]);
  });
});
