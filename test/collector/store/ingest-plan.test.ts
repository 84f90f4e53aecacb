import { describe, expect, it } from 'vitest';
import { type CounterPoint, type ResourceBatch, type SeriesDims, SeriesKind, Temporality } from '../../../collector/model/batches.js';
import { MAX_COUNT_PER_STREAM_MINUTE } from '../../../collector/model/records.js';
import { NANOS_PER_MINUTE } from '../../../collector/model/time.js';
import { planAdvertisements } from '../../../collector/store/common/advertisement-plan.js';
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
    attributes: [],
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
});
