/**
 * What every store backend must do, whatever it is built on: one suite, run for each backend by its own test
 * file with a factory (sqlite.test.ts). It talks to the store interfaces only (store/store.ts), with batches
 * as the processors hand them over (model/batches.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type CounterPoint,
  type MetricsBatch,
  type ResourceBatch,
  type SeriesDims,
  SeriesKind,
  type SpanExample,
  Temporality,
} from '../../../collector/model/batches.js';
import type { Alert, AlertTransition } from '../../../collector/model/alerts.js';
import type { CellTotal, InstanceCellTotal } from '../../../collector/model/records.js';
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, msToNanos } from '../../../collector/model/time.js';
import type { RetentionConfig, StoreRoles } from '../../../collector/store/store.js';
import { readInstanceMatrix } from '../../../collector/analysis/read-matrix.js';
import { OVERFLOW_VALUE } from '../../../contract/index.js';
import type { InstanceGrouping } from '../../../collector/analysis/matrix.js';

export interface StoreOpenOptions {
  clock: () => number;
  retention: RetentionConfig;
  examplesPerCell: number;
  /** Distinct values kept per sender-controlled dimension (the rest: `_OTHER`). */
  maxValuesPerDimension?: number;
  /** Instances kept (the rest: the service's instance `_OTHER`). */
  maxInstances?: number;
}

export interface StoreBackend {
  /** A new, empty place for one test's data (a file, a schema…). */
  place(): Promise<string>;
  /** Opens the store kept at `place`; opening it again after `close` gives the same data. */
  open(place: string, options: StoreOpenOptions): Promise<StoreRoles>;
  /** Removes every place made. */
  cleanup(): Promise<void>;
  /** The closed-bucket generation stored at `place` (0 when none), read while no store has it open. */
  closedGeneration(place: string): Promise<number>;
}

const T0 = Date.UTC(2026, 2, 2, 10, 0);
const TASKS = 'io.modelcontextprotocol/tasks';
const UI = 'io.modelcontextprotocol/ui';
const RETENTION: RetentionConfig = { minuteDays: 2, hourDays: 10, dedupHours: 6 };

interface Dims {
  client?: string | null;
  version?: string | null;
  declaration?: string;
  serverDeclaration?: string;
  extension?: { id: string; client: boolean; server: boolean; required?: boolean };
  outcome?: string;
}

function dims(spec: Dims): SeriesDims {
  const extension = spec.extension;
  return {
    kind: extension === undefined ? SeriesKind.Requests : SeriesKind.Extension,
    serverName: 'server',
    serverVersion: '1.0',
    method: 'tools/call',
    era: 'modern',
    protocolVersion: '2026-07-28',
    clientName: spec.client === undefined ? 'alpha' : spec.client,
    clientVersion: spec.version === undefined ? '1.0' : spec.version,
    clientDeclaration: spec.declaration ?? 'declared',
    serverDeclaration: spec.serverDeclaration ?? 'declared',
    outcome: spec.outcome ?? 'complete',
    statusCode: null,
    extensionId: extension?.id ?? null,
    clientDeclared: extension?.client ?? null,
    serverDeclared: extension?.server ?? null,
    negotiated: extension === undefined ? null : extension.client && extension.server,
    required: extension === undefined ? null : (extension.required ?? false),
  };
}

interface PointSpec extends Dims {
  temporality?: Temporality;
  /** Minutes after T0. */
  start: number;
  time: number;
  value: number;
}

const at = (minutes: number): bigint => msToNanos(T0 + minutes * MS_PER_MINUTE);

function counter(spec: PointSpec): CounterPoint {
  const temporality = spec.temporality ?? Temporality.Delta;
  const d = dims(spec);
  return {
    dims: d,
    // Stream identity as the processors form it; any text unique per stream will do for a store.
    streamScope: `resource\u0000scope\u0000${d.kind}\u0000${temporality}`,
    streamAttributes: JSON.stringify(d),
    schema1Attributes: '',
    temporality,
    startNs: at(spec.start),
    timeNs: at(spec.time),
    value: spec.value,
  };
}

function resource(instance: string, service = 'svc'): ResourceBatch['resource'] {
  return {
    service,
    instanceId: instance,
    serviceVersion: '2.0',
    host: 'host-1',
    serverName: 'server',
    serverVersion: '1.0',
    transport: null,
    deploymentEnvironment: null,
    k8sNamespace: null,
    k8sDeployment: null,
    canonical: `${service}/${instance}`,
    key: `${service}/${instance}`,
    instanceDerived: false,
  };
}

function batch(points: PointSpec[], instance = 'i-1', service = 'svc', extra: Partial<ResourceBatch> = {}): MetricsBatch {
  return {
    resources: [{ resource: resource(instance, service), counters: points.map(counter), advertised: [], advertisedCounts: [], ...extra }],
    ignored: new Map(),
    rejections: [],
    rejectedReason: undefined,
  };
}

/** What an apply reports it added, as comparable text (service, client, extension and flags as stored), in a stable order. */
function applied(result: { counts: readonly { service: string | null; dims: Readonly<SeriesDims>; count: number }[] }): string[] {
  return result.counts
    .map(
      ({ service, dims: d, count }) =>
        `${service} ${d.clientName}@${d.clientVersion} ${d.kind === SeriesKind.Requests ? d.clientDeclaration : `${d.extensionId} n=${d.negotiated}`}: ${count}`,
    )
    .sort();
}

/** Cell totals as comparable text, in a stable order. */
function cells(list: readonly CellTotal[]): string[] {
  return list
    .map((cell) =>
      cell.kind === SeriesKind.Requests
        ? `${cell.clientName}@${cell.clientVersion} ${cell.clientDeclaration}: ${cell.count}`
        : `${cell.clientName}@${cell.clientVersion} ${cell.extensionId} c=${cell.clientDeclared} s=${cell.serverDeclared} n=${cell.negotiated}: ${cell.count}`,
    )
    .sort();
}

const day = { fromMs: T0 - MS_PER_DAY, toMs: T0 + MS_PER_DAY };

function alert(fingerprint: string, service: string, activeSinceMs: number, changes: Partial<Alert> = {}): Alert {
  return {
    fingerprint,
    rule: 'skew',
    kind: 'advertisement_skew',
    severity: 'warning',
    state: 'pending',
    labels: { alertname: 'skew', severity: 'warning', service },
    annotations: { summary: `<b>${service}</b> differs` },
    activeSinceMs,
    firingSinceMs: undefined,
    resolvedAtMs: undefined,
    dashboardPath: `/?view=fleet&service=${service}`,
    ...changes,
  };
}

const moved = (to: Alert, from: AlertTransition['from'], atMs: number): AlertTransition => ({
  id: `${to.fingerprint}-${to.activeSinceMs}-${to.state}`,
  from,
  to: to.state,
  atMs,
  alert: to,
});

export function storeConformance(name: string, backend: () => StoreBackend): void {
  describe(`store conformance: ${name}`, () => {
    let factory: StoreBackend;
    let place: string;
    let now: number;
    let store: StoreRoles;
    const open = async (options: Partial<StoreOpenOptions> = {}): Promise<StoreRoles> =>
      (store = await factory.open(place, { clock: () => now, retention: RETENTION, examplesPerCell: 2, ...options }));
    const reopen = async (options: Partial<StoreOpenOptions> = {}): Promise<StoreRoles> => {
      await store.lifecycle.close();
      return open(options);
    };

    beforeEach(async () => {
      factory = backend();
      place = await factory.place();
      now = T0 + 30 * MS_PER_MINUTE;
      await open();
    });
    afterEach(async () => {
      await store.lifecycle.close();
      await factory.cleanup();
    });

    it('reports the increments each apply added, per stored series: a retry adds nothing (also beside new points), cumulative totals as increments, _OTHER past the limits, the same after reopening', async () => {
      await reopen({ maxValuesPerDimension: 2 });
      const tasks = { id: TASKS, client: true, server: true };
      const first = batch([
        { client: 'a', start: 0, time: 1, value: 2 },
        { client: 'a', start: 1, time: 2, value: 3 },
        { client: 'b', start: 0, time: 1, value: 1, extension: tasks },
        { client: 'b', start: 0, time: 1, value: 0 },
      ]);
      expect(applied(await store.ingest.applyMetrics(first))).toEqual(['svc a@1.0 declared: 5', 'svc b@1.0 io.modelcontextprotocol/tasks n=true: 1']);
      // The same export again (a retry): nothing is new, so nothing is reported.
      expect(await store.ingest.applyMetrics(first)).toMatchObject({ applied: 0, duplicates: 3, counts: [] });
      // A retried point beside new ones in one export: only the new ones are reported.
      const mixed = await store.ingest.applyMetrics(
        batch([
          { client: 'a', start: 1, time: 2, value: 3 },
          { client: 'a', start: 2, time: 3, value: 8 },
          { client: 'b', start: 1, time: 2, value: 2, extension: tasks },
        ]),
      );
      expect(mixed).toMatchObject({ applied: 2, duplicates: 1 });
      expect(applied(mixed)).toEqual(['svc a@1.0 declared: 8', 'svc b@1.0 io.modelcontextprotocol/tasks n=true: 2']);
      // Cumulative totals 4 then 10 of one stream: increments 4 and 6; the repeated total adds nothing.
      const cumulative = (time: number, value: number): PointSpec => ({ client: 'b', temporality: Temporality.Cumulative, start: 0, time, value });
      expect(applied(await store.ingest.applyMetrics(batch([cumulative(3, 4)])))).toEqual(['svc b@1.0 declared: 4']);
      await reopen({ maxValuesPerDimension: 2 });
      expect(applied(await store.ingest.applyMetrics(batch([cumulative(4, 10), cumulative(4, 10)])))).toEqual(['svc b@1.0 declared: 6']);
      // A third client name is past the limit of two: counted under _OTHER, as stored; a known one keeps its name.
      expect(
        applied(
          await store.ingest.applyMetrics(
            batch([
              { client: 'c', start: 5, time: 6, value: 7 },
              { client: 'a', start: 5, time: 6, value: 1 },
            ]),
          ),
        ),
      ).toEqual(['svc _OTHER@1.0 declared: 7', 'svc a@1.0 declared: 1']);
      expect(cells((await store.reader.cellTotals(day)).cells)).toEqual([
        '_OTHER@1.0 declared: 7',
        'a@1.0 declared: 14',
        'b@1.0 declared: 10',
        'b@1.0 io.modelcontextprotocol/tasks c=true s=true n=true: 3',
      ]);
    });

    it("says where the history held begins by the points' own timestamps: a backfill of older points moves it back, per service; null when nothing is held", async () => {
      expect(await store.reader.historyStart({})).toBeNull();
      await store.ingest.applyMetrics(batch([{ start: 0, time: 1, value: 1 }]));
      const first = await store.reader.historyStart({});
      expect(first === T0 || first === T0 + MS_PER_MINUTE).toBe(true);
      // Sent now, dated three hours earlier, for another service (another stream: the test streams are named by their dimensions).
      await store.ingest.applyMetrics(batch([{ client: 'restored', start: -180, time: -179, value: 2 }], 'i-2', 'backfilled'));
      expect(await store.reader.historyStart({})).toBe((first ?? 0) - 180 * MS_PER_MINUTE);
      expect(await store.reader.historyStart({ service: 'backfilled' })).toBe((first ?? 0) - 180 * MS_PER_MINUTE);
      expect(await store.reader.historyStart({ service: 'svc' })).toBe(first);
      expect(await store.reader.historyStart({ service: 'none' })).toBeNull();
    });

    it('a sender-controlled dimension past its limit is stored as _OTHER, the same decision after reopening; nothing is lost', async () => {
      await reopen({ maxValuesPerDimension: 2 });
      await store.ingest.applyMetrics(batch(['a', 'b', 'c'].map((client, index) => ({ client, start: index, time: index + 1, value: 1 }))));
      await reopen({ maxValuesPerDimension: 2 });
      await store.ingest.applyMetrics(
        batch([
          { client: 'd', start: 5, time: 6, value: 2 },
          { client: 'a', start: 5, time: 6, value: 3 },
        ]),
      );
      expect(cells((await store.reader.cellTotals(day)).cells)).toEqual(['_OTHER@1.0 declared: 3', 'a@1.0 declared: 4', 'b@1.0 declared: 1']);
      expect((await store.lifecycle.stats()).overflowedValues).toBe(1);
      expect(store.reader.behind()).toBe(false);
    });

    it('service names and instance ids past their limits are stored as _OTHER, the same after reopening; a retry of an overflowed instance counts once', async () => {
      const limits = { maxValuesPerDimension: 2, maxInstances: 3 };
      // Each instance's streams are its own (the resource is part of the stream identity).
      const from = (instance: string, service: string, points: PointSpec[]): MetricsBatch => {
        const out = batch(points, instance, service);
        for (const point of out.resources[0]?.counters ?? []) point.streamScope = `${service}/${instance}\u0000${point.streamScope}`;
        return out;
      };
      await reopen(limits);
      await store.ingest.applyMetrics(from('i-1', 'svc-a', [{ start: 0, time: 1, value: 1 }]));
      await store.ingest.applyMetrics(from('i-2', 'svc-b', [{ start: 0, time: 1, value: 1 }]));
      await store.ingest.applyMetrics(from('i-3', 'svc-c', [{ start: 0, time: 1, value: 1 }]));
      await reopen(limits);
      expect(await store.ingest.applyMetrics(from('i-4', 'svc-a', [{ start: 0, time: 1, value: 2 }]))).toMatchObject({ applied: 1, duplicates: 0 });
      expect(await store.ingest.applyMetrics(from('i-4', 'svc-a', [{ start: 0, time: 1, value: 2 }]))).toMatchObject({ applied: 0, duplicates: 1 });
      await store.ingest.applyMetrics(from('i-5', 'svc-a', [{ start: 0, time: 1, value: 4 }]));
      await store.ingest.applyMetrics(from('i-1', 'svc-a', [{ start: 1, time: 2, value: 8 }]));
      expect((await store.reader.instances({})).map((instance) => `${instance.service}/${instance.instanceId}`).sort()).toEqual([
        '_OTHER/i-3',
        'svc-a/_OTHER',
        'svc-a/i-1',
        'svc-b/i-2',
      ]);
      const total = (await store.reader.cellTotals(day)).cells.reduce((sum, cell) => sum + cell.count, 0);
      expect(total).toBe(1 + 1 + 1 + 2 + 4 + 8);
      expect(cells((await store.reader.cellTotals({ ...day, service: '_OTHER' })).cells)).toEqual(['alpha@1.0 declared: 1']);
      expect(cells((await store.reader.cellTotals({ ...day, service: 'svc-a' })).cells)).toEqual(['alpha@1.0 declared: 15']);
      expect((await store.lifecycle.stats()).overflowedInstances).toBe(2);
    });

    it('keeps the extension ids admitted per instance and hour across reopening, each once, until their hour leaves the dedup window', async () => {
      const hour = Math.floor(now / MS_PER_HOUR);
      await store.idLimits.admitIds([
        { instance: '["svc","i-1"]', hour, ids: ['a', 'b'] },
        { instance: '["svc","i-2"]', hour, ids: ['c'] },
      ]);
      await store.idLimits.admitIds([{ instance: '["svc","i-1"]', hour, ids: ['b', 'd'] }]);
      await reopen();
      const read = await store.idLimits.admittedIds([
        { instance: '["svc","i-1"]', hour },
        { instance: '["svc","i-1"]', hour: hour + 1 },
        { instance: '["svc","i-2"]', hour },
      ]);
      expect(read.map(({ instance, hour: at, ids }) => ({ instance, at: at - hour, ids: [...ids].sort() }))).toEqual([
        { instance: '["svc","i-1"]', at: 0, ids: ['a', 'b', 'd'] },
        { instance: '["svc","i-2"]', at: 0, ids: ['c'] },
      ]);
      now += (RETENTION.dedupHours + 2) * MS_PER_HOUR;
      await store.lifecycle.maintain();
      expect(await store.idLimits.admittedIds([{ instance: '["svc","i-1"]', hour }])).toEqual([]);
    });

    it('a value whose series retention dropped frees its place under the dimension limit', async () => {
      await reopen({ maxValuesPerDimension: 1 });
      await store.ingest.applyMetrics(batch([{ client: 'old', start: 0, time: 1, value: 1 }], 'i-old'));
      now = T0 + (RETENTION.hourDays + 1) * MS_PER_DAY;
      await store.lifecycle.maintain();
      const t = (now - T0) / MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch([{ client: 'new', start: t - 2, time: t - 1, value: 2 }], 'i-new'));
      expect(cells((await store.reader.cellTotals({ fromMs: now - MS_PER_HOUR, toMs: now })).cells)).toEqual(['new@1.0 declared: 2']);
    });

    it('every bounded dimension frees its values with its series: an outcome no series keeps any more is admitted again, not _OTHER', async () => {
      await reopen({ maxValuesPerDimension: 1 });
      const first = await store.ingest.applyMetrics(batch([{ client: 'old', outcome: 'complete', start: 0, time: 1, value: 1 }], 'i-old'));
      expect(first.counts.map((count) => count.dims.outcome)).toEqual(['complete']);
      now = T0 + (RETENTION.hourDays + 1) * MS_PER_DAY;
      await store.lifecycle.maintain();
      const t = (now - T0) / MS_PER_MINUTE;
      const later = await store.ingest.applyMetrics(batch([{ client: 'new', outcome: 'tool_error', start: t - 2, time: t - 1, value: 2 }], 'i-new'));
      expect(later.counts.map((count) => `${count.dims.clientName} ${count.dims.outcome}: ${count.count}`)).toEqual(['new tool_error: 2']);
      expect((await store.lifecycle.stats()).overflowedValues).toBe(0);
    });

    it('applies delta points: totals per matrix cell, per service, per instance', async () => {
      const result = await store.ingest.applyMetrics(
        batch([
          { start: 0, time: 1, value: 3 },
          { start: 1, time: 2, value: 4 },
          { start: 0, time: 1, value: 2, declaration: 'none', client: 'beta', version: null },
          { start: 0, time: 1, value: 3, extension: { id: TASKS, client: true, server: true } },
          { start: 0, time: 1, value: 3, extension: { id: UI, client: true, server: false } },
        ]),
      );
      expect(result).toMatchObject({ applied: 5, duplicates: 0 });
      await store.ingest.applyMetrics(batch([{ start: 0, time: 1, value: 10, client: 'gamma' }], 'j-1', 'other'));
      const all = await store.reader.cellTotals(day);
      expect(cells(all.cells)).toEqual([
        'alpha@1.0 declared: 7',
        `alpha@1.0 ${TASKS} c=true s=true n=true: 3`,
        `alpha@1.0 ${UI} c=true s=false n=false: 3`,
        'beta@null none: 2',
        'gamma@1.0 declared: 10',
      ]);
      expect(cells((await store.reader.cellTotals({ ...day, service: 'other' })).cells)).toEqual(['gamma@1.0 declared: 10']);
      expect(cells((await store.reader.cellTotals({ ...day, instance: 'i-1' })).cells)).toEqual([
        'alpha@1.0 declared: 7',
        `alpha@1.0 ${TASKS} c=true s=true n=true: 3`,
        `alpha@1.0 ${UI} c=true s=false n=false: 3`,
        'beta@null none: 2',
      ]);
      expect(cells((await store.reader.cellTotals({ fromMs: T0 + 2 * MS_PER_MINUTE, toMs: T0 + 3 * MS_PER_MINUTE })).cells)).toEqual(['alpha@1.0 declared: 4']);
    });

    it('a range ending now counts the minutes so far from the hour under way, and a point dated ahead of the clock only once its minute has come', async () => {
      // The clock half-way through minute 30: a point of minute 29, then one dated minute 40 (the sender's clock is ahead).
      now = T0 + 30.5 * MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch([{ start: 28, time: 29, value: 2 }]));
      await store.ingest.applyMetrics(batch([{ start: 39, time: 40, value: 5 }]));
      const requests = (list: readonly { kind: number; count: number }[]): number =>
        list.filter((cell) => cell.kind === SeriesKind.Requests).reduce((sum, cell) => sum + cell.count, 0);
      // Ranges ending now, under two days (minutes at the edges) and longer (whole hours), read each way there is.
      const reads = async (): Promise<number[]> => {
        const counts: number[] = [];
        for (const fromMs of [now - 6 * MS_PER_HOUR, now - 3 * MS_PER_DAY]) {
          const range = { fromMs, toMs: now };
          counts.push(
            requests((await store.reader.cellTotals(range)).cells),
            requests((await store.reader.cellTotals({ ...range, service: 'svc' })).cells),
            requests((await store.reader.cellTotals({ ...range, instance: 'i-1' })).cells),
            requests((await store.reader.instanceCellTotals(range)).cells),
            requests((await store.reader.instanceCellTotals({ ...range, requestsOnly: true })).cells),
            requests((await store.reader.instanceCellTotals({ ...range, clients: true })).cells),
          );
        }
        return counts;
      };
      // Under two days the range is minutes up to now: the point ahead is not in it. Longer ranges are whole hours.
      expect(await reads()).toEqual([2, 2, 2, 2, 2, 2, 7, 7, 7, 7, 7, 7]);
      now = T0 + 41.5 * MS_PER_MINUTE;
      expect(await reads()).toEqual([7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]);
    });

    it('a long range read again shows a late point into a closed hour, a point of the hour under way and a new cell; a retried late point adds nothing; an hour later the range ending now moves on exactly', async () => {
      // Three days of points, then two hours of today (the second one under way). Minutes after T0.
      const today = 3 * 1440;
      const apply = async (minute: number, value: number, spec: Dims = {}, instance = 'i-1') => {
        await store.ingest.applyMetrics(batch([{ ...spec, start: minute - 1, time: minute, value }], instance));
      };
      for (let dayIndex = 0; dayIndex < 3; dayIndex++) {
        now = T0 + (dayIndex * 1440 + 12) * MS_PER_MINUTE;
        await apply(dayIndex * 1440 + 10, 1 + dayIndex);
      }
      now = T0 + (today + 75) * MS_PER_MINUTE;
      await apply(today + 10, 10);
      // Another outcome: this suite's stream identities leave the resource out.
      await apply(today + 70, 20, { outcome: 'tool_error' }, 'i-2');
      const week = { fromMs: T0, toMs: now };
      const requests = (list: readonly { kind: number; count: number }[]) =>
        list.filter((cell) => cell.kind === SeriesKind.Requests).reduce((sum, cell) => sum + cell.count, 0);
      const reads = async () => ({
        cells: requests((await store.reader.cellTotals(week)).cells),
        service: requests((await store.reader.cellTotals({ ...week, service: 'svc' })).cells),
        instance: requests((await store.reader.cellTotals({ ...week, instance: 'i-1' })).cells),
        instanceCells: requests((await store.reader.instanceCellTotals(week)).cells),
        bySeries: requests((await store.reader.instanceCellTotals({ ...week, clients: true })).cells),
      });
      const all = (cells: number, instance: number) => ({ cells, service: cells, instance, instanceCells: cells, bySeries: cells });
      expect(await reads()).toEqual(all(36, 16));
      expect(await reads()).toEqual(all(36, 16));
      const first = await store.reader.cellTotals(week);
      expect(first).toMatchObject({ resolution: 'hour', fromMs: T0, toMs: T0 + (today + 120) * MS_PER_MINUTE });

      // Late: into the hour before the one under way (closed since a point of the next hour was folded), once retried.
      await apply(today + 20, 100);
      expect(await reads()).toEqual(all(136, 116));
      await apply(today + 20, 100);
      expect(await reads()).toEqual(all(136, 116));
      // The hour under way, and a client never seen before in a closed hour: a new cell.
      await apply(today + 72, 1000);
      await apply(today + 30, 5, { client: 'newcomer' });
      expect(await reads()).toEqual(all(1141, 1121));
      expect(cells((await store.reader.cellTotals(week)).cells)).toEqual(['alpha@1.0 declared: 1136', 'newcomer@1.0 declared: 5']);
      // The same counts read as two ranges of two days or less each (minutes and hours, never a kept part).
      const split = T0 + (today - 1440) * MS_PER_MINUTE;
      const parts = [await store.reader.cellTotals({ ...week, toMs: split }), await store.reader.cellTotals({ ...week, fromMs: split })];
      expect(requests(parts.flatMap((part) => part.cells))).toBe(1141);
      // An hour later, the same length ending now: its first hour left (the first day's point with it); a point of the new hour.
      now += MS_PER_HOUR;
      week.fromMs += MS_PER_HOUR;
      week.toMs = now;
      await apply(today + 130, 10_000);
      expect(await reads()).toEqual(all(11_140, 11_120));
    });

    it('retention that drops only minutes leaves the closed-bucket generation as it was (long ranges keep whole hours); dropping hours or a silent instance moves it on', async () => {
      const generation = async (): Promise<number> => {
        await store.lifecycle.close();
        const value = await factory.closedGeneration(place);
        await open();
        return value;
      };
      await store.ingest.applyMetrics(batch([{ start: 9, time: 10, value: 3 }]));
      now = T0 + (RETENTION.minuteDays + 1) * MS_PER_DAY;
      await store.ingest.applyMetrics(batch([], 'i-2'));
      const range = { fromMs: T0 - MS_PER_DAY, toMs: now };
      const requests = async (): Promise<number> =>
        (await store.reader.cellTotals(range)).cells.filter((cell) => cell.kind === SeriesKind.Requests).reduce((sum, cell) => sum + cell.count, 0);
      expect(await requests()).toBe(3);
      const before = await generation();
      // The first pass: every level is due; only minutes are past their window.
      await store.lifecycle.maintain();
      expect(await generation()).toBe(before);
      expect(await requests()).toBe(3);
      // Past the hourly window: i-1's hours go, and i-1 with them (silent since).
      now = T0 + (RETENTION.hourDays + 1) * MS_PER_DAY;
      await store.ingest.applyMetrics(batch([], 'i-2'));
      await store.lifecycle.maintain();
      expect(await generation()).toBeGreaterThan(before);
      expect(await requests()).toBe(0);
    });

    it('instance cell totals with their clients: per service and instance, with the server declaration, narrowed by service, instance and client', async () => {
      await store.ingest.applyMetrics(
        batch([
          { start: 0, time: 1, value: 3 },
          { start: 0, time: 1, value: 2, serverDeclaration: 'unknown' },
          { start: 0, time: 1, value: 3, extension: { id: TASKS, client: true, server: true } },
          { start: 0, time: 1, value: 1, client: 'beta', version: null },
        ]),
      );
      // Another outcome: this suite's stream identities leave the resource out (the processors' do not).
      await store.ingest.applyMetrics(batch([{ start: 1, time: 2, value: 4, outcome: 'tool_error' }], 'i-2'));
      await store.ingest.applyMetrics(batch([{ start: 0, time: 1, value: 10, client: 'gamma' }], 'j-1', 'other'));
      const text = (list: Awaited<ReturnType<StoreRoles['reader']['instanceCellTotals']>>['cells']): string[] =>
        list.map((cell) => `${cell.service}/${cell.instanceId} sd=${cell.serverDeclaration} ${cells([cell])[0]}`).sort();
      const all = await store.reader.instanceCellTotals({ ...day, clients: true });
      expect(all.resolution).toBe((await store.reader.cellTotals(day)).resolution);
      expect(text(all.cells)).toEqual([
        'other/j-1 sd=declared gamma@1.0 declared: 10',
        'svc/i-1 sd=declared alpha@1.0 declared: 3',
        `svc/i-1 sd=declared alpha@1.0 ${TASKS} c=true s=true n=true: 3`,
        'svc/i-1 sd=declared beta@null declared: 1',
        'svc/i-1 sd=unknown alpha@1.0 declared: 2',
        'svc/i-2 sd=declared alpha@1.0 declared: 4',
      ]);
      expect(all.cells.find((cell) => cell.extensionId === TASKS)?.required).toBe(false);
      expect(text((await store.reader.instanceCellTotals({ ...day, service: 'other', clients: true })).cells)).toEqual([
        'other/j-1 sd=declared gamma@1.0 declared: 10',
      ]);
      expect(text((await store.reader.instanceCellTotals({ ...day, instance: 'i-2', clients: true })).cells)).toEqual([
        'svc/i-2 sd=declared alpha@1.0 declared: 4',
      ]);
      expect(text((await store.reader.instanceCellTotals({ ...day, clientName: 'beta' })).cells)).toEqual(['svc/i-1 sd=declared beta@null declared: 1']);
      // Minute resolution over a short range, and only what lies in it.
      const recent = await store.reader.instanceCellTotals({ fromMs: T0 + 2 * MS_PER_MINUTE, toMs: T0 + 3 * MS_PER_MINUTE, clients: true });
      expect([recent.resolution, text(recent.cells)]).toEqual(['minute', ['svc/i-2 sd=declared alpha@1.0 declared: 4']]);
      // Without the clients: the instance cells, one per instance and state whatever the client (names and versions null).
      const summed = await store.reader.instanceCellTotals(day);
      expect([summed.fromMs, summed.toMs, summed.resolution]).toEqual([all.fromMs, all.toMs, all.resolution]);
      expect(text(summed.cells)).toEqual([
        'other/j-1 sd=declared null@null declared: 10',
        'svc/i-1 sd=declared null@null declared: 4',
        `svc/i-1 sd=declared null@null ${TASKS} c=true s=true n=true: 3`,
        'svc/i-1 sd=unknown null@null declared: 2',
        'svc/i-2 sd=declared null@null declared: 4',
      ]);
      expect(summed.cells.find((cell) => cell.extensionId === TASKS)?.required).toBe(false);
      expect(text((await store.reader.instanceCellTotals({ ...day, service: 'other' })).cells)).toEqual(['other/j-1 sd=declared null@null declared: 10']);
      expect(text((await store.reader.instanceCellTotals({ ...day, instance: 'i-2' })).cells)).toEqual(['svc/i-2 sd=declared null@null declared: 4']);
      const recentSummed = await store.reader.instanceCellTotals({ fromMs: T0 + 2 * MS_PER_MINUTE, toMs: T0 + 3 * MS_PER_MINUTE });
      expect([recentSummed.resolution, text(recentSummed.cells)]).toEqual(['minute', ['svc/i-2 sd=declared null@null declared: 4']]);
      // Each cell carries its instance's build (the rows by build group by it), from the series and the instance cells alike.
      const builds = new Map((await store.reader.instances({})).map((instance) => [instance.instanceId, instance.buildKey]));
      for (const cell of [...all.cells, ...summed.cells]) expect(cell.build).toBe(builds.get(cell.instanceId));
      expect(new Set(summed.cells.map((cell) => cell.build))).toEqual(
        new Set([JSON.stringify(['svc', 'server', '1.0', 'host-1', null, null, null]), JSON.stringify(['other', 'server', '1.0', 'host-1', null, null, null])]),
      );
    });

    it("instance cells hold exactly what their clients' series hold: over days (the daily level), hours and minutes, with late points, after reopening, through retention", async () => {
      const clientsOf = ['a', 'b', 'c'];
      const extension = (client: string) => ({ id: TASKS, client: client !== 'c', server: true });
      // Three clients of two instances over three days, each export minutes after the last (inside the dedup window).
      const exports: { instance: string; minute: number; client: string; value: number }[] = [];
      for (let dayIndex = 0; dayIndex < 3; dayIndex++)
        for (const [index, client] of clientsOf.entries())
          for (const instance of ['i-1', 'i-2']) exports.push({ instance, minute: dayIndex * 1440 + 30 + index * 7, client, value: 1 + index + dayIndex * 3 });
      const apply = async (spec: (typeof exports)[number]) => {
        now = T0 + (spec.minute + 2) * MS_PER_MINUTE;
        // An outcome per instance: this suite's stream identities leave the resource out. The instance cells sum outcomes too.
        const outcome = spec.instance === 'i-1' ? 'complete' : 'tool_error';
        const points = [
          { client: spec.client, outcome, start: spec.minute - 1, time: spec.minute, value: spec.value },
          { client: spec.client, outcome, start: spec.minute - 1, time: spec.minute, value: spec.value, extension: extension(spec.client) },
        ];
        await store.ingest.applyMetrics(batch(points, spec.instance));
      };
      for (const spec of exports.slice(0, 10)) await apply(spec);
      await reopen();
      for (const spec of exports.slice(10)) await apply(spec);
      // A new client after reopening: new series, of instance cells stored before.
      const newClient = { instance: 'i-1', minute: 2 * 1440 + 40, client: 'd', value: 2 };
      await apply(newClient);
      // A late point: an earlier minute of the hour under way, after later ones were folded.
      const late = { instance: 'i-1', minute: 2 * 1440 + 31, client: 'b', value: 5 };
      await store.reader.instanceCellTotals(day);
      await apply({ ...late });
      now = T0 + 3 * MS_PER_DAY;
      const summedOver = (
        cellsRead: readonly {
          service: string | null;
          instanceId: string | null;
          kind: number;
          extensionId: string | null;
          clientDeclared: boolean | null;
          count: number;
        }[],
      ) => {
        const sums = new Map<string, number>();
        for (const cell of cellsRead) {
          const key = `${cell.service}/${cell.instanceId} ${cell.kind} ${cell.extensionId} c=${cell.clientDeclared}`;
          sums.set(key, (sums.get(key) ?? 0) + cell.count);
        }
        return [...sums.entries()].map(([key, count]) => `${key}: ${count}`).sort();
      };
      const total = exports.reduce((sum, spec) => sum + spec.value, 0) + late.value + newClient.value;
      // Ranges read from days (a week), hours (a day, whole hours), minutes (a short one), each against the series.
      const ranges = [
        { fromMs: T0 - 2 * MS_PER_DAY, toMs: T0 + 5 * MS_PER_DAY },
        { fromMs: T0 + MS_PER_DAY, toMs: T0 + 2 * MS_PER_DAY + 12 * MS_PER_HOUR },
        { fromMs: T0 + 2 * MS_PER_DAY + 20 * MS_PER_MINUTE, toMs: T0 + 2 * MS_PER_DAY + 50 * MS_PER_MINUTE },
      ];
      for (const range of ranges) {
        const summed = await store.reader.instanceCellTotals(range);
        const bySeries = await store.reader.instanceCellTotals({ ...range, clients: true });
        expect(summedOver(summed.cells)).toEqual(summedOver(bySeries.cells));
        expect(summed.cells.length).toBeLessThan(bySeries.cells.length);
      }
      const week = await store.reader.instanceCellTotals(ranges[0] as (typeof ranges)[number]);
      expect(week.cells.filter((cell) => cell.kind === SeriesKind.Requests).reduce((sum, cell) => sum + cell.count, 0)).toBe(total);
      // Per instance 45 requests (6 + 15 + 24 over the days), 18 of them from the client that does not declare the id; i-1 also the late 5 and the new client's 2.
      expect(summedOver(week.cells)).toEqual([
        'svc/i-1 0 null c=null: 52',
        `svc/i-1 1 ${TASKS} c=false: 18`,
        `svc/i-1 1 ${TASKS} c=true: 34`,
        'svc/i-2 0 null c=null: 45',
        `svc/i-2 1 ${TASKS} c=false: 18`,
        `svc/i-2 1 ${TASKS} c=true: 27`,
      ]);
      // The client rows say the same over all services.
      const clientRows = await store.reader.cellTotals(ranges[0] as (typeof ranges)[number]);
      expect(clientRows.cells.filter((cell) => cell.kind === SeriesKind.Requests).reduce((sum, cell) => sum + cell.count, 0)).toBe(total);

      // Minutes go after their window (read in whole hours from then on), hours and days stay.
      now = T0 + (RETENTION.minuteDays + 3) * MS_PER_DAY;
      await store.ingest.applyMetrics(batch([], 'i-2'));
      await store.lifecycle.maintain();
      const afterMinutes = await store.reader.instanceCellTotals(ranges[2] as (typeof ranges)[number]);
      expect(afterMinutes.resolution).toBe('hour');
      expect(summedOver(afterMinutes.cells)).toEqual(
        summedOver((await store.reader.instanceCellTotals({ ...(ranges[2] as (typeof ranges)[number]), clients: true })).cells),
      );
      expect(summedOver((await store.reader.instanceCellTotals(ranges[0] as (typeof ranges)[number])).cells)).toEqual(summedOver(week.cells));
      // A silent instance goes with its instance cells; the other keeps its history until its window passes too.
      now = T0 + (RETENTION.hourDays + 4) * MS_PER_DAY;
      await store.ingest.applyMetrics(batch([], 'i-2'));
      await store.lifecycle.maintain();
      expect(summedOver((await store.reader.instanceCellTotals({ fromMs: T0 - MS_PER_DAY, toMs: now })).cells)).toEqual([]);
      expect((await store.reader.instances({})).map((instance) => instance.instanceId)).toEqual(['i-2']);
      // An instance created anew after its cells went gets new ones: counted from zero.
      await store.ingest.applyMetrics(batch([{ client: 'a', start: (now - T0) / MS_PER_MINUTE - 2, time: (now - T0) / MS_PER_MINUTE - 1, value: 4 }], 'i-1'));
      expect(summedOver((await store.reader.instanceCellTotals({ fromMs: now - MS_PER_HOUR, toMs: now })).cells)).toEqual(['svc/i-1 0 null c=null: 4']);
    });

    it('rows by instance, service and build past the row limit: the busiest rows, read alone, and _OTHER are those of the full read (requests, declaration states, answered before any server, -32021, per id), over a day and a week', async () => {
      // Seven instances of three services over three days, each less busy than the one before; one with requests no
      // server saw, one with `-32021` answers. An outcome per instance: this suite's stream identities leave the
      // resource out.
      const fleet = [
        ['svc', 'i-1'],
        ['svc', 'i-2'],
        ['svc', 'i-3'],
        ['other', 'j-1'],
        ['other', 'j-2'],
        ['third', 'k-1'],
        ['third', 'k-2'],
      ] as const;
      for (let dayIndex = 0; dayIndex < 3; dayIndex++)
        for (const [index, [service, instance]] of fleet.entries()) {
          const minute = dayIndex * 1440 + 10 + index;
          now = T0 + (minute + 2) * MS_PER_MINUTE;
          const window = { start: minute - 1, time: minute, outcome: `outcome-${index}` };
          const busy = (fleet.length - index) * 10 + dayIndex;
          const points: PointSpec[] = [
            { ...window, value: busy },
            { ...window, value: 2, declaration: 'none' },
            { ...window, value: busy, extension: { id: TASKS, client: true, server: index % 2 === 0 } },
            { ...window, value: 1, extension: { id: UI, client: true, server: false, required: index === 3 } },
          ];
          if (index === 5)
            points.push(
              { ...window, value: 3, serverDeclaration: 'unknown' },
              { ...window, value: 3, serverDeclaration: 'unknown', extension: { id: UI, client: true, server: false } },
            );
          await store.ingest.applyMetrics(batch(points, instance, service));
        }
      now = T0 + (2 * 1440 + 90) * MS_PER_MINUTE;
      // What the reads were narrowed to: the listed instances of each read of some.
      const listed: number[] = [];
      const reader = {
        cellTotals: store.reader.cellTotals.bind(store.reader),
        requiredTrend: store.reader.requiredTrend.bind(store.reader),
        instanceCellTotals: (query: Parameters<StoreRoles['reader']['instanceCellTotals']>[0]) => {
          if (query.instanceRefs !== undefined) listed.push(query.instanceRefs.length);
          return store.reader.instanceCellTotals(query);
        },
      };
      const ranges = { day: { fromMs: now - MS_PER_DAY, toMs: now }, week: { fromMs: now - 7 * MS_PER_DAY, toMs: now } };
      const rowsOf: Record<InstanceGrouping, number> = { instance: 7, service: 3, build: 3 };
      for (const [name, range] of Object.entries(ranges))
        for (const group of ['instance', 'service', 'build'] as const)
          for (const limits of [
            { rows: 2, extensions: 1 },
            { rows: 3, extensions: 5 },
          ]) {
            listed.length = 0;
            // Twice: the second read answers a long range's closed part from what the first kept.
            for (const read of [1, 2]) {
              const busiest = await readInstanceMatrix(reader, range, group, limits);
              // The full read: every instance's series, with their clients (another rollup than the instance cells').
              const full = await readInstanceMatrix(store.reader, { ...range, clients: true }, group, limits);
              const what = `${name}, by ${group}, ${limits.rows} rows, read ${read}`;
              expect(busiest.view, what).toEqual(full.view);
              expect([busiest.fromMs, busiest.toMs, busiest.resolution], what).toEqual([full.fromMs, full.toMs, full.resolution]);
              expect(busiest.view.rowsTotal, what).toBe(rowsOf[group]);
              // Past the limit, the last row sums the rest; otherwise every row is shown.
              const summed = busiest.view.rows.map((row) => row.summedRows);
              if (rowsOf[group] <= limits.rows) expect(summed, what).toEqual(Array.from({ length: rowsOf[group] }, () => undefined));
              else expect(summed, what).toEqual([...Array.from({ length: limits.rows - 1 }, () => undefined), rowsOf[group] - limits.rows + 1]);
            }
            // By instance, only the rows shown apart were read instance cell by instance cell.
            if (group === 'instance') expect(listed, `${name}, ${limits.rows} rows`).toEqual([limits.rows - 1, limits.rows - 1]);
          }
      // Summed per service by the store (rows by service): each service's totals per cell, whatever the instances, over
      // a day and a week (twice: the week's closed part kept, summed).
      const perService = (cellsRead: readonly InstanceCellTotal[]): string[] => {
        const sums = new Map<string, number>();
        for (const cell of cellsRead) {
          const key = JSON.stringify([
            cell.service,
            cell.kind,
            cell.clientDeclaration,
            cell.extensionId,
            cell.clientDeclared,
            cell.serverDeclared,
            cell.negotiated,
            cell.serverDeclaration,
            cell.required,
          ]);
          sums.set(key, (sums.get(key) ?? 0) + cell.count);
        }
        return [...sums].map(([key, count]) => `${key}: ${count}`).sort();
      };
      for (const [name, range] of Object.entries(ranges))
        for (const read of [1, 2]) {
          const summed = await store.reader.instanceCellTotals({ ...range, perService: true });
          const each = await store.reader.instanceCellTotals(range);
          expect(perService(summed.cells), `${name}, read ${read}`).toEqual(perService(each.cells));
          expect(summed.cells.length, `${name}, read ${read}`).toBe(perService(each.cells).length);
          expect(new Set(summed.cells.map((cell) => `${cell.instanceId} ${cell.build} ${cell.instanceRef}`)), `${name}, read ${read}`).toEqual(
            new Set(['null null 0']),
          );
        }
      // Every request (3 days × (280 + 7 × the day's index, 14 without a declaration, 3 no server saw)), every one no
      // server saw and every `-32021` answer is in the week's rows.
      const week = await readInstanceMatrix(reader, ranges.week, 'instance', { rows: 2, extensions: 5 });
      expect(week.view.rows.reduce((sum, row) => sum + row.requests, 0)).toBe(3 * 280 + 7 * (0 + 1 + 2) + 3 * 14 + 3 * 3);
      expect(week.view.rows.reduce((sum, row) => sum + row.serverUnknown, 0)).toBe(9);
      expect(week.view.rows.flatMap((row) => row.extensions).reduce((sum, cell) => sum + cell.required, 0)).toBe(3);
    });

    it('rows by instance past the row limit when few instances are active in the open hour: the busiest rows and _OTHER are those of the full read, the open hour ranking them; whole hours read per instance cell as per series', async () => {
      // Twenty instances over two days, each less busy than the one before; in the last hours only i-05 (in two of
      // them), i-12, which becomes the busiest, then i-03.
      const fleet = Array.from({ length: 20 }, (_, index) => `i-${String(index + 1).padStart(2, '0')}`);
      const send = async (instance: string, minute: number, busy: number): Promise<void> => {
        now = T0 + (minute + 2) * MS_PER_MINUTE;
        // An outcome per instance: this suite's stream identities leave the resource out.
        const window = { start: minute - 1, time: minute, outcome: `outcome-${instance}` };
        await store.ingest.applyMetrics(
          batch(
            [
              { ...window, value: busy },
              { ...window, value: 2, declaration: 'none' },
              { ...window, value: busy, extension: { id: TASKS, client: true, server: minute % 2 === 0 } },
              { ...window, value: 1, extension: { id: UI, client: true, server: false } },
            ],
            instance,
          ),
        );
      };
      for (let dayIndex = 0; dayIndex < 2; dayIndex++)
        for (const [index, instance] of fleet.entries()) await send(instance, dayIndex * 1440 + 10 + index, (fleet.length - index) * 10 + dayIndex);
      const lastHour = 2 * 1440;
      await send('i-05', lastHour - 30, 7);
      await send('i-05', lastHour + 20, 4);
      await send('i-12', lastHour + 30, 500);
      now = T0 + (lastHour + 50) * MS_PER_MINUTE;
      const week = { fromMs: now - 7 * MS_PER_DAY, toMs: now };
      const limits = { rows: 4, extensions: 5 };
      const compare = async (what: string): Promise<void> => {
        const busiest = await readInstanceMatrix(store.reader, week, 'instance', limits);
        const full = await readInstanceMatrix(store.reader, { ...week, clients: true }, 'instance', limits);
        expect(busiest.view, what).toEqual(full.view);
        expect(
          busiest.view.rows.map((row) => row.instance),
          what,
        ).toEqual(['i-12', 'i-01', 'i-02', OVERFLOW_VALUE]);
        expect(busiest.view.rows.at(-1)?.summedRows, what).toBe(17);
      };
      // Twice: the second read answers the closed part from what the first kept, and reads the open hour again.
      await compare('first read');
      await compare('second read');
      // The open hour moves on: i-03 in the next one.
      await send('i-03', lastHour + 70, 1000);
      now = T0 + (lastHour + 80) * MS_PER_MINUTE;
      const moved = await readInstanceMatrix(store.reader, { fromMs: now - 7 * MS_PER_DAY, toMs: now }, 'instance', limits);
      expect(moved.view).toEqual((await readInstanceMatrix(store.reader, { fromMs: now - 7 * MS_PER_DAY, toMs: now, clients: true }, 'instance', limits)).view);
      expect(moved.view.rows.map((row) => row.instance)).toEqual(['i-03', 'i-12', 'i-01', OVERFLOW_VALUE]);

      // Whole hours (the last three, i-05 in two of them): the request cells, and every cell of listed instances, as
      // the series hold them per instance.
      const hours = { fromMs: T0 + (lastHour - 60) * MS_PER_MINUTE, toMs: T0 + (lastHour + 120) * MS_PER_MINUTE };
      const perInstance = (cellsRead: readonly InstanceCellTotal[]): string[] => {
        const sums = new Map<string, number>();
        for (const cell of cellsRead) {
          const key = `${cell.instanceId} ${cell.kind} ${cell.clientDeclaration} ${cell.extensionId} ${cell.clientDeclared} ${cell.serverDeclared}`;
          sums.set(key, (sums.get(key) ?? 0) + cell.count);
        }
        return [...sums].map(([key, count]) => `${key}: ${count}`).sort();
      };
      const requests = await store.reader.instanceCellTotals({ ...hours, requestsOnly: true });
      const series = (await store.reader.instanceCellTotals({ ...hours, clients: true })).cells;
      expect(perInstance(requests.cells)).toEqual(perInstance(series.filter((cell) => cell.kind === SeriesKind.Requests)));
      expect(perInstance(requests.cells)).toEqual([
        'i-03 0 declared null null null: 1000',
        'i-03 0 none null null null: 2',
        'i-05 0 declared null null null: 11',
        'i-05 0 none null null null: 4',
        'i-12 0 declared null null null: 500',
        'i-12 0 none null null null: 2',
      ]);
      expect(requests.cells.length).toBe(6);
      const refs = (await store.reader.instanceCellTotals({ ...week, requestsOnly: true })).cells.map((cell) => cell.instanceRef);
      const listed = await store.reader.instanceCellTotals({ ...hours, instanceRefs: [...new Set(refs)] });
      expect(perInstance(listed.cells)).toEqual(perInstance(series));
      expect(perInstance(listed.cells)).toContain(`i-05 1 null ${TASKS} true true: 11`);
    });

    it('a retried delta point adds nothing, in one batch, in another, and after reopening', async () => {
      const points = [{ start: 0, time: 1, value: 5 }];
      expect(await store.ingest.applyMetrics(batch([...points, ...points]))).toMatchObject({ applied: 1, duplicates: 1 });
      expect(await store.ingest.applyMetrics(batch(points))).toMatchObject({ applied: 0, duplicates: 1 });
      await reopen();
      expect(await store.ingest.applyMetrics(batch([...points, { start: 1, time: 2, value: 1 }]))).toMatchObject({ applied: 1, duplicates: 1 });
      expect(cells((await store.reader.cellTotals(day)).cells)).toEqual(['alpha@1.0 declared: 6']);
    });

    it('cumulative points become increments: resets, a new start time, out of order and repeated points, across reopening', async () => {
      const cumulative = (start: number, time: number, value: number): PointSpec => ({ temporality: Temporality.Cumulative, start, time, value });
      const apply = async (...points: PointSpec[]) => store.ingest.applyMetrics(batch(points));
      expect(await apply(cumulative(0, 1, 5))).toMatchObject({ applied: 1, duplicates: 0 }); // +5
      expect(await apply(cumulative(0, 3, 9))).toMatchObject({ applied: 1, duplicates: 0 }); // +4
      expect(await apply(cumulative(0, 2, 7))).toMatchObject({ applied: 0, duplicates: 1 }); // older than the state: nothing
      expect(await apply(cumulative(0, 3, 9))).toMatchObject({ applied: 0, duplicates: 1 }); // the same again: nothing
      expect((await store.lifecycle.stats()).cumulativeStreams).toBe(1);
      await reopen();
      expect(await apply(cumulative(0, 4, 12))).toMatchObject({ applied: 1, duplicates: 0 }); // +3 against the kept state
      expect(await apply(cumulative(0, 5, 2))).toMatchObject({ applied: 1, duplicates: 0 }); // lower: a reset, +2
      expect(await apply(cumulative(6, 7, 4))).toMatchObject({ applied: 1, duplicates: 0 }); // new start: a restart, +4
      expect(await apply(cumulative(0, 6, 3))).toMatchObject({ applied: 1, duplicates: 0 }); // the old incarnation, late: +1 against its own 2
      expect((await store.lifecycle.stats()).cumulativeStreams).toBe(2);
      expect(cells((await store.reader.cellTotals(day)).cells)).toEqual([`alpha@1.0 declared: ${5 + 4 + 3 + 2 + 4 + 1}`]);
      const steps = await store.reader.stepTotals({ fromMs: T0, toMs: T0 + 10 * MS_PER_MINUTE, stepMinutes: 5, extensionId: TASKS });
      expect(steps.map((step) => [step.tMs - T0, step.kind, step.count]).sort()).toEqual([
        [0, SeriesKind.Requests, 5 + 4 + 3],
        [5 * MS_PER_MINUTE, SeriesKind.Requests, 2 + 4 + 1],
      ]);
    });

    it('retention: minute totals go after their window, hour totals stay; silent instances go after the hourly window', async () => {
      await store.ingest.applyMetrics(batch([{ start: 0, time: 1, value: 6 }]));
      await store.ingest.applyMetrics(batch([{ start: 0, time: 1, value: 2, client: 'late' }], 'i-2'));
      now = T0 + (RETENTION.minuteDays + 1) * MS_PER_DAY;
      await store.ingest.applyMetrics(batch([], 'i-2'));
      await store.lifecycle.maintain();
      const range = { fromMs: T0, toMs: T0 + 10 * MS_PER_MINUTE };
      const afterMinutes = await store.reader.cellTotals(range);
      expect(afterMinutes.resolution).toBe('hour');
      expect(afterMinutes.fromMs).toBe(T0);
      expect(afterMinutes.toMs).toBe(T0 + MS_PER_HOUR);
      expect(cells(afterMinutes.cells)).toEqual(['alpha@1.0 declared: 6', 'late@1.0 declared: 2']);
      expect((await store.reader.instances({})).map((instance) => instance.instanceId)).toEqual(['i-1', 'i-2']);

      now = T0 + (RETENTION.hourDays + 1) * MS_PER_DAY;
      await store.ingest.applyMetrics(batch([], 'i-2'));
      await store.lifecycle.maintain();
      expect((await store.reader.cellTotals({ fromMs: T0 - MS_PER_DAY, toMs: now })).cells).toEqual([]);
      // i-1 was silent for the whole hourly window; i-2 reported (an export without points) and stays.
      expect((await store.reader.instances({})).map((instance) => instance.instanceId)).toEqual(['i-2']);
    });

    it('answers given before any server instance existed are summed apart too: per cell, per service, per instance, per step', async () => {
      const unknown = 'unknown';
      await store.ingest.applyMetrics(
        batch([
          { client: 'a', start: 0, time: 1, value: 3 },
          { client: 'a', serverDeclaration: unknown, start: 0, time: 1, value: 2 },
          { client: 'a', serverDeclaration: unknown, extension: { id: TASKS, client: true, server: false }, start: 0, time: 1, value: 2 },
        ]),
      );
      await store.ingest.applyMetrics(batch([{ client: 'b', serverDeclaration: unknown, start: 0, time: 2, value: 4 }], 'i-2', 'other'));
      const all = await store.reader.cellTotals(day);
      expect(cells(all.cells)).toEqual(['a@1.0 declared: 5', `a@1.0 ${TASKS} c=true s=false n=false: 2`, 'b@1.0 declared: 4']);
      expect(cells(all.serverUnknown ?? [])).toEqual(['a@1.0 declared: 2', `a@1.0 ${TASKS} c=true s=false n=false: 2`, 'b@1.0 declared: 4']);
      expect(cells((await store.reader.cellTotals({ ...day, service: 'other' })).serverUnknown ?? [])).toEqual(['b@1.0 declared: 4']);
      expect(cells((await store.reader.cellTotals({ ...day, instance: 'i-1' })).serverUnknown ?? [])).toEqual([
        'a@1.0 declared: 2',
        `a@1.0 ${TASKS} c=true s=false n=false: 2`,
      ]);
      const steps = await store.reader.serverUnknownStepTotals({ fromMs: T0, toMs: T0 + 60 * MS_PER_MINUTE, stepMinutes: 60, extensionId: TASKS });
      expect(steps.map((row) => `${row.kind} ${row.count}`).sort()).toEqual(['0 6', '1 2']);
      // The trend's shares leave them out too: it carries their count per step.
      const trend = await store.reader.extensionTrend({ fromMs: T0, toMs: T0 + 60 * MS_PER_MINUTE, stepMinutes: 60 });
      expect(trend.rows.reduce((sum, row) => sum + (row.serverUnknown ?? 0), 0)).toBe(6);
    });

    it('trends and step totals over more cells than one read chunk add up to the matrix, over all services and per service', async () => {
      // 700 clients in each of two services: 2,800 request cells, the two scopes' ids interleaved.
      const clients = Array.from({ length: 700 }, (_, index) => `client-${index}`);
      // Another version per service: the test's streams are named by their dimensions.
      const points = (value: number, version: string): PointSpec[] => clients.map((client) => ({ client, version, start: 0, time: 1, value }));
      await store.ingest.applyMetrics(batch(points(1, '1.0'), 'i-1', 'svc'));
      await store.ingest.applyMetrics(
        batch([...points(2, '2.0'), { client: 'client-0', start: 0, time: 1, value: 1, extension: { id: TASKS, client: true, server: true } }], 'i-2', 'other'),
      );
      const hour = { fromMs: T0, toMs: T0 + 60 * MS_PER_MINUTE, stepMinutes: 60 };
      const requests = (rows: readonly { requests: number }[]): number => rows.reduce((sum, row) => sum + row.requests, 0);
      for (const [service, expected] of [
        [undefined, 2100],
        ['svc', 700],
        ['other', 1400],
      ] as const) {
        const matrix = await store.reader.cellTotals({ ...day, service });
        expect(matrix.cells.filter((cell) => cell.kind === SeriesKind.Requests).reduce((sum, cell) => sum + cell.count, 0)).toBe(expected);
        expect(requests((await store.reader.clientTrend({ ...hour, service })).rows)).toBe(expected);
        expect(requests((await store.reader.declarationTrend({ ...hour, service })).rows)).toBe(expected);
        expect(new Set((await store.reader.clientTrend({ ...hour, service })).rows.map((row) => row.name)).size).toBe(700);
        const negotiated = (await store.reader.extensionTrend({ ...hour, service })).rows
          .filter((row) => row.id === TASKS)
          .reduce((sum, row) => sum + row.negotiated, 0);
        expect(negotiated).toBe(service === 'svc' ? 0 : 1);
        const steps = await store.reader.stepTotals({ ...hour, service, extensionId: TASKS });
        expect(steps.filter((step) => step.kind === SeriesKind.Requests).reduce((sum, step) => sum + step.count, 0)).toBe(expected);
        expect(steps.filter((step) => step.kind === SeriesKind.Extension && step.negotiated === true).reduce((sum, step) => sum + step.count, 0)).toBe(
          service === 'svc' ? 0 : 1,
        );
      }
    });

    it('a read whose asker has gone rejects with the reason its signal was aborted with, over more cells than one read chunk', async () => {
      const clients = Array.from({ length: 1100 }, (_, index) => `client-${index}`);
      await store.ingest.applyMetrics(batch(clients.map((client) => ({ client, start: 0, time: 1, value: 1 }))));
      const gone = new AbortController();
      const reason = new Error('the connection closed');
      gone.abort(reason);
      const signal = gone.signal;
      const hour = { fromMs: T0, toMs: T0 + 60 * MS_PER_MINUTE, stepMinutes: 60 };
      await expect(store.reader.cellTotals({ ...day, signal })).rejects.toBe(reason);
      await expect(store.reader.cellTotals({ ...day, instance: 'i-1', signal })).rejects.toBe(reason);
      await expect(store.reader.instanceCellTotals({ ...day, signal })).rejects.toBe(reason);
      await expect(store.reader.stepTotals({ ...hour, extensionId: TASKS, signal })).rejects.toBe(reason);
      await expect(store.reader.clientTrend({ ...hour, signal })).rejects.toBe(reason);
      await expect(store.reader.extensionTrend({ ...hour, signal })).rejects.toBe(reason);
      // Without a signal (or with one not aborted) the same reads answer in full.
      expect((await store.reader.cellTotals({ ...day, signal: new AbortController().signal })).cells).toHaveLength(1100);
      expect((await store.reader.clientTrend(hour)).rows.reduce((sum, row) => sum + row.requests, 0)).toBe(1100);
    });

    it('step totals: requests and one extension by flags, per step, within the filters', async () => {
      await store.ingest.applyMetrics(
        batch([
          { start: 0, time: 1, value: 4 },
          { start: 0, time: 1, value: 3, extension: { id: TASKS, client: true, server: true } },
          { start: 0, time: 1, value: 1, extension: { id: TASKS, client: false, server: true } },
          { start: 0, time: 1, value: 9, extension: { id: UI, client: true, server: true } },
          { start: 60, time: 61, value: 2 },
        ]),
      );
      await store.ingest.applyMetrics(batch([{ start: 0, time: 1, value: 7, client: 'beta' }], 'j-1', 'other'));
      const steps = await store.reader.stepTotals({ fromMs: T0, toMs: T0 + 2 * MS_PER_HOUR, stepMinutes: 60, extensionId: TASKS, service: 'svc' });
      const text = steps
        .map((step) => `${(step.tMs - T0) / MS_PER_MINUTE} ${step.kind} ${step.clientDeclared} ${step.serverDeclared} ${step.negotiated}: ${step.count}`)
        .sort();
      expect(text).toEqual(['0 0 null null null: 4', '0 1 false true false: 1', '0 1 true true true: 3', '60 0 null null null: 2']);
      const byClient = await store.reader.stepTotals({ fromMs: T0, toMs: T0 + MS_PER_HOUR, stepMinutes: 1, extensionId: TASKS, clientName: 'beta' });
      expect(byClient.map((step) => [(step.tMs - T0) / MS_PER_MINUTE, step.count])).toEqual([[1, 7]]);
    });

    it('instances: identity, first and last seen, what each advertises now and before, with counts per server', async () => {
      const advertise = (ids: [string, string][], minutes: number, count: number): Partial<ResourceBatch> => ({
        advertised: ids.map(([extensionId, fingerprint]) => ({
          serverName: 'server',
          serverVersion: '1.0',
          extensionId,
          fingerprint,
          timeMs: T0 + minutes * MS_PER_MINUTE,
        })),
        advertisedCounts: [{ serverName: 'server', serverVersion: '1.0', count, timeMs: T0 + minutes * MS_PER_MINUTE }],
      });
      await store.ingest.applyMetrics(
        batch(
          [],
          'i-1',
          'svc',
          advertise(
            [
              [TASKS, 'f1'],
              [UI, 'f2'],
            ],
            1,
            2,
          ),
        ),
      );
      now += MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch([], 'i-1', 'svc', advertise([[TASKS, 'f1']], 5, 1)));
      // An older collection arriving late only widens first/last seen.
      await store.ingest.applyMetrics(batch([], 'i-1', 'svc', advertise([[UI, 'f2']], 3, 1)));
      await store.ingest.applyMetrics(batch([], 'k-1', 'billing'));
      const instances = await store.reader.instances({});
      expect(instances.map((instance) => [instance.service, instance.instanceId])).toEqual([
        ['billing', 'k-1'],
        ['svc', 'i-1'],
      ]);
      const i1 = instances[1];
      expect(i1).toMatchObject({
        serviceVersion: '2.0',
        host: 'host-1',
        serverName: 'server',
        serverVersion: '1.0',
        firstSeenMs: T0 + 30 * MS_PER_MINUTE,
        lastSeenMs: now,
        advertisedMs: T0 + 5 * MS_PER_MINUTE,
      });
      expect(i1?.advertised).toEqual([
        {
          serverName: 'server',
          serverVersion: '1.0',
          extensionId: TASKS,
          fingerprint: 'f1',
          firstSeenMs: T0 + MS_PER_MINUTE,
          lastSeenMs: T0 + 5 * MS_PER_MINUTE,
          current: true,
        },
        {
          serverName: 'server',
          serverVersion: '1.0',
          extensionId: UI,
          fingerprint: 'f2',
          firstSeenMs: T0 + MS_PER_MINUTE,
          lastSeenMs: T0 + 3 * MS_PER_MINUTE,
          current: false,
        },
      ]);
      expect(i1?.counts).toEqual([{ serverName: 'server', serverVersion: '1.0', count: 1, current: true }]);
      expect(instances[0]).toMatchObject({ advertisedMs: null, advertised: [], counts: [] });
      expect((await store.reader.instances({ service: 'billing' })).map((instance) => instance.instanceId)).toEqual(['k-1']);
    });

    it('instances keep their build: one key for the processes of one server version on one host and deployment; the transport and deployment attributes as sent', async () => {
      const sent = (instance: string, changes: Partial<ResourceBatch['resource']>): MetricsBatch => {
        const one = batch([], instance);
        const [first] = one.resources;
        return { ...one, resources: [{ ...first!, resource: { ...first!.resource, ...changes } }] };
      };
      await store.ingest.applyMetrics(sent('s-1', { transport: 'stdio' }));
      await store.ingest.applyMetrics(sent('s-2', { transport: 'stdio' }));
      await store.ingest.applyMetrics(sent('s-3', { transport: 'stdio', serverVersion: '1.1' }));
      await store.ingest.applyMetrics(sent('h-1', { transport: 'http', deploymentEnvironment: 'prod', k8sNamespace: 'mcp', k8sDeployment: 'shop' }));
      const byId = new Map((await store.reader.instances({})).map((instance) => [instance.instanceId, instance]));
      expect(byId.get('s-1')?.buildKey).toBe(JSON.stringify(['svc', 'server', '1.0', 'host-1', null, null, null]));
      expect(byId.get('s-2')?.buildKey).toBe(byId.get('s-1')?.buildKey);
      expect(byId.get('s-3')?.buildKey).toBe(JSON.stringify(['svc', 'server', '1.1', 'host-1', null, null, null]));
      expect(byId.get('h-1')).toMatchObject({
        transport: 'http',
        deploymentEnvironment: 'prod',
        k8sNamespace: 'mcp',
        k8sDeployment: 'shop',
        buildKey: JSON.stringify(['svc', 'server', '1.0', 'host-1', 'prod', 'mcp', 'shop']),
        endedMs: null,
      });
      expect(byId.get('s-1')).toMatchObject({ transport: 'stdio', endedMs: null });
    });

    it("an instance's last export (extscope.process.ended) records when it ended; a process started again under the same id (newer points) clears it; its last export records it again", async () => {
      const start = now;
      // Each process counts from its own start time (cumulative); its last export repeats its totals.
      const life = (from: number, time: number, value: number): PointSpec[] => [{ temporality: Temporality.Cumulative, start: from, time, value }];
      await store.ingest.applyMetrics(batch(life(0, 1, 2), 'e-1'));
      await store.ingest.applyMetrics(batch([{ client: 'beta', temporality: Temporality.Cumulative, start: 0, time: 1, value: 1 }], 'e-2'));
      const ended = async (): Promise<(number | null)[]> => (await store.reader.instances({})).map((instance) => instance.endedMs);
      expect(await ended()).toEqual([null, null]);
      now = start + MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch(life(0, 2, 3), 'e-1', 'svc', { endedMs: T0 + 2 * MS_PER_MINUTE }));
      expect(await ended()).toEqual([start + MS_PER_MINUTE, null]);
      now = start + 2 * MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch(life(5, 6, 4), 'e-1'));
      expect(await ended()).toEqual([null, null]);
      now = start + 3 * MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch(life(5, 7, 4), 'e-1', 'svc', { endedMs: T0 + 7 * MS_PER_MINUTE }));
      await reopen();
      expect(await ended()).toEqual([start + 3 * MS_PER_MINUTE, null]);
      expect((await store.reader.instances({}))[0]?.lastSeenMs).toBe(start + 3 * MS_PER_MINUTE);
      expect(cells((await store.reader.cellTotals(day)).cells)).toEqual(['alpha@1.0 declared: 7', 'beta@1.0 declared: 1']);
    });

    it("a periodic export sent before a process's last one but arriving after it (a retry, a slow network) leaves the instance ended and counts nothing twice; so does the last export retried", async () => {
      const start = now;
      const point = (time: number, value: number): PointSpec[] => [{ temporality: Temporality.Cumulative, start: 0, time, value }];
      await store.ingest.applyMetrics(batch(point(1, 2), 's-1'));
      now = start + MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch(point(3, 5), 's-1', 'svc', { endedMs: T0 + 3 * MS_PER_MINUTE }));
      now = start + 2 * MS_PER_MINUTE;
      // Sent at minute 2, before the last export (minute 3), with points and the advertisement its collection read.
      const late = await store.ingest.applyMetrics(
        batch(point(2, 4), 's-1', 'svc', { advertisedCounts: [{ serverName: 'server', serverVersion: '1.0', count: 0, timeMs: T0 + 2 * MS_PER_MINUTE }] }),
      );
      expect(late).toMatchObject({ applied: 0, duplicates: 1 });
      now = start + 3 * MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch(point(3, 5), 's-1', 'svc', { endedMs: T0 + 3 * MS_PER_MINUTE }));
      await reopen();
      const [instance] = await store.reader.instances({});
      expect(instance).toMatchObject({ instanceId: 's-1', endedMs: start + MS_PER_MINUTE, lastSeenMs: start + 3 * MS_PER_MINUTE });
      expect(cells((await store.reader.cellTotals(day)).cells)).toEqual(['alpha@1.0 declared: 5']);
    });

    it("a process's last export arriving after the process started again under its id has exported leaves the instance running; an export with no dated point changes nothing", async () => {
      const start = now;
      await store.ingest.applyMetrics(batch([{ start: 0, time: 1, value: 1 }], 'r-1'));
      now = start + MS_PER_MINUTE;
      // The process started again at minute 5 and exported before the first life's last export (minute 2) arrived.
      await store.ingest.applyMetrics(batch([{ start: 5, time: 6, value: 1 }], 'r-1'));
      now = start + 2 * MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch([{ start: 1, time: 2, value: 1 }], 'r-1', 'svc', { endedMs: T0 + 2 * MS_PER_MINUTE }));
      expect((await store.reader.instances({}))[0]?.endedMs).toBeNull();
      now = start + 3 * MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch([{ start: 6, time: 8, value: 1 }], 'r-1', 'svc', { endedMs: T0 + 8 * MS_PER_MINUTE }));
      now = start + 4 * MS_PER_MINUTE;
      await store.ingest.applyMetrics(batch([], 'r-1'));
      await reopen();
      expect((await store.reader.instances({}))[0]).toMatchObject({ endedMs: start + 3 * MS_PER_MINUTE, lastSeenMs: start + 4 * MS_PER_MINUTE });
      expect(cells((await store.reader.cellTotals(day)).cells)).toEqual(['alpha@1.0 declared: 4']);
    });

    it('a session that ended longer ago than the keep time is folded into its build\'s "ended sessions" row: every count stays (by client, build and instance), places under the instance limit free up, a late export counts once there, a new life of its id is an instance again', async () => {
      await reopen({ maxInstances: 5, retention: { ...RETENTION, endedSessionsMs: MS_PER_HOUR } });
      const start = now;
      const exported = (instance: string, transport: 'stdio' | 'http', points: PointSpec[], extra: Partial<ResourceBatch> = {}): MetricsBatch => {
        const one = batch(
          points.map((point) => ({ ...point, outcome: `o-${instance}` })),
          instance,
          'svc',
          extra,
        );
        const [first] = one.resources;
        return { ...one, resources: [{ ...first!, resource: { ...first!.resource, transport } }] };
      };
      const cumulative = (value: number, time: number, spec: Partial<PointSpec> = {}): PointSpec => ({
        temporality: Temporality.Cumulative,
        start: 0,
        time,
        value,
        ...spec,
      });
      const tasks = { id: TASKS, client: true, server: true };
      // Three sessions end (s-3 killed: it said nothing, it fell silent) and a long-lived instance ends, an hour before the keep time is up.
      const s1 = exported('s-1', 'stdio', [cumulative(3, 1), cumulative(1, 1, { extension: tasks })]);
      await store.ingest.applyMetrics(s1);
      await store.ingest.applyMetrics(
        exported('s-1', 'stdio', [cumulative(3, 2), cumulative(1, 2, { extension: tasks })], { endedMs: T0 + 2 * MS_PER_MINUTE }),
      );
      await store.ingest.applyMetrics(exported('s-2', 'stdio', [cumulative(2, 2, { extension: tasks })], { endedMs: T0 + 2 * MS_PER_MINUTE }));
      await store.ingest.applyMetrics(exported('s-3', 'stdio', [{ client: 'beta', start: 0, time: 1, value: 4 }]));
      await store.ingest.applyMetrics(exported('h-1', 'http', [cumulative(5, 2)], { endedMs: T0 + 2 * MS_PER_MINUTE }));
      // One session ended just now: kept as it is.
      now = start + 2 * MS_PER_HOUR;
      await store.ingest.applyMetrics(exported('s-4', 'stdio', [cumulative(1, 148)], { endedMs: T0 + 148 * MS_PER_MINUTE }));
      const wide = { fromMs: T0 - MS_PER_DAY, toMs: T0 + MS_PER_DAY };
      const byClient = async (): Promise<string[]> => cells((await store.reader.cellTotals(wide)).cells);
      const grouped = async (group: InstanceGrouping): Promise<string[]> =>
        (await readInstanceMatrix(store.reader, wide, group)).view.rows.map((row) => `${row.instance ?? row.build ?? row.service}: ${row.requests}`).sort();
      const before = { client: await byClient(), build: await grouped('build'), service: await grouped('service') };
      expect(before.client).toEqual(['alpha@1.0 declared: 9', `alpha@1.0 ${TASKS} c=true s=true n=true: 3`, 'beta@1.0 declared: 4']);
      expect(await store.ingest.applyMetrics(exported('n-0', 'http', []))).toMatchObject({ applied: 0 });
      const listed = async (): Promise<string[]> =>
        (await store.reader.instances({})).map((instance) => `${instance.instanceId} ${instance.transport} ${instance.endedSessions ?? '-'}`);
      // The limit is full: a sixth instance is stored under _OTHER.
      expect(await listed()).toEqual(['_OTHER http -', 'h-1 http -', 's-1 stdio -', 's-2 stdio -', 's-3 stdio -', 's-4 stdio -']);

      await store.lifecycle.maintain();
      const instances = await store.reader.instances({});
      const folded = instances.find((instance) => instance.endedSessions !== null);
      expect(folded?.instanceId).toMatch(/^ended sessions of server@1\.0 on host-1 \(#[0-9a-f]{8}\)$/);
      expect(folded).toMatchObject({ transport: 'stdio', endedSessions: 3, buildKey: instances.find((instance) => instance.instanceId === 's-4')?.buildKey });
      expect(folded).toMatchObject({ firstSeenMs: start, lastSeenMs: start, endedMs: start, advertised: [], counts: [] });
      expect(await listed()).toEqual(['_OTHER http -', `${folded?.instanceId} stdio 3`, 'h-1 http -', 's-4 stdio -']);
      expect(await byClient()).toEqual(before.client);
      expect(await grouped('build')).toEqual(before.build);
      expect(await grouped('service')).toEqual(before.service);
      expect(await grouped('instance')).toEqual([`${folded?.instanceId}: 7`, 'h-1: 5', 's-4: 1'].sort());
      // The sessions' places are free again: a new instance is stored as itself.
      await store.ingest.applyMetrics(exported('n-1', 'http', [cumulative(1, 149)]));
      expect(await listed()).toContain('n-1 http -');

      // s-1's first export again (a retry): counted once, in the build's row, and s-1 is not an instance again.
      await reopen({ maxInstances: 6, retention: { ...RETENTION, endedSessionsMs: MS_PER_HOUR } });
      expect(await store.ingest.applyMetrics(s1)).toMatchObject({ applied: 0, duplicates: 2 });
      expect(await store.ingest.applyMetrics(exported('s-3', 'stdio', [{ client: 'beta', start: 0, time: 1, value: 4 }]))).toMatchObject({
        applied: 0,
        duplicates: 1,
      });
      expect(await listed()).toEqual(['_OTHER http -', `${folded?.instanceId} stdio 3`, 'h-1 http -', 'n-1 http -', 's-4 stdio -']);
      expect(await byClient()).toEqual(['alpha@1.0 declared: 10', `alpha@1.0 ${TASKS} c=true s=true n=true: 3`, 'beta@1.0 declared: 4']);
      expect((await store.reader.instances({})).find((instance) => instance.endedSessions !== null)?.endedMs).toBe(start);

      // A process started again under s-2's id (newer points) is an instance of its own, running.
      await store.ingest.applyMetrics(exported('s-2', 'stdio', [cumulative(1, 150, { start: 149, client: 'gamma' })]));
      const again = (await store.reader.instances({})).find((instance) => instance.instanceId === 's-2');
      expect(again).toMatchObject({ endedMs: null, endedSessions: null, firstSeenMs: now });
      expect(await grouped('instance')).toContain('s-2: 1');
    });

    it('two resources of one instance in one export number their advertisement generations in turn: the later collection is current', async () => {
      const advertised = (extensionId: string, minutes: number): Partial<ResourceBatch> => ({
        advertised: [{ serverName: 'server', serverVersion: '1.0', extensionId, fingerprint: 'f', timeMs: T0 + minutes * MS_PER_MINUTE }],
      });
      const [first, second] = [batch([], 'i-1', 'svc', advertised(TASKS, 1)), batch([], 'i-1', 'svc', advertised(UI, 2))];
      await store.ingest.applyMetrics({ ...first, resources: [...first.resources, ...second.resources] });
      const [instance] = await store.reader.instances({});
      expect(instance?.advertisedMs).toBe(T0 + 2 * MS_PER_MINUTE);
      expect(instance?.advertised.map((row) => `${row.extensionId} ${row.current}`)).toEqual([`${TASKS} false`, `${UI} true`]);
    });

    it('an instance past the instance cap is stored under _OTHER with its counts, and what it advertises is not recorded', async () => {
      const advertise = (id: string): Partial<ResourceBatch> => ({
        advertised: [{ serverName: 'server', serverVersion: '1.0', extensionId: id, fingerprint: 'f', timeMs: T0 + MS_PER_MINUTE }],
        advertisedCounts: [{ serverName: 'server', serverVersion: '1.0', count: 1, timeMs: T0 + MS_PER_MINUTE }],
      });
      await reopen({ maxInstances: 1 });
      await store.ingest.applyMetrics(batch([{ start: 0, time: 1, value: 1 }], 'i-1', 'svc', advertise(TASKS)));
      await store.ingest.applyMetrics(batch([{ start: 1, time: 2, value: 2 }], 'i-2', 'svc', advertise(UI)));
      const instances = await store.reader.instances({});
      expect(
        instances.map((instance) => [`${instance.service}/${instance.instanceId}`, instance.advertised.map((row) => row.extensionId), instance.counts.length]),
      ).toEqual([
        ['svc/_OTHER', [], 0],
        ['svc/i-1', [TASKS], 1],
      ]);
      expect((await store.reader.cellTotals(day)).cells.reduce((sum, cell) => sum + cell.count, 0)).toBe(3);
    });

    it('examples: the newest few per row and per cell, newest first, bounded per cell, retries stored once', async () => {
      const example = (index: number, ids: string[]): SpanExample => ({
        service: 'svc',
        instanceId: 'i-1',
        traceId: index.toString(16).padStart(32, '0'),
        spanId: index.toString(16).padStart(16, '0'),
        name: 'tools/call echo',
        method: 'tools/call',
        outcome: 'complete',
        statusCode: null,
        clientName: 'alpha',
        clientVersion: '1.0',
        clientDeclaration: 'declared',
        startMs: T0 + index * 1000,
        durationMs: 1.5,
        clientExtensions: ids,
        serverExtensions: [TASKS],
        negotiated: ids.filter((id) => id === TASKS),
        required: [],
      });
      const spans = [example(1, [TASKS]), example(2, [UI]), example(3, [TASKS]), example(4, [])];
      const stored = await store.ingest.applySpans({ examples: spans, ignored: 0, rejected: 0, rejectedReason: undefined });
      expect(stored).toBeGreaterThan(0);
      await store.ingest.applySpans({ examples: spans, ignored: 0, rejected: 0, rejectedReason: undefined });
      const row = await store.reader.examples({ clientName: 'alpha', clientVersion: '1.0', limit: 10 });
      expect(row.map((e) => e.spanId)).toEqual([example(4, []).spanId, example(3, []).spanId]);
      expect(row[0]).toEqual(example(4, []));
      const ui = await store.reader.examples({ clientName: 'alpha', extensionId: UI, limit: 10 });
      expect(ui.map((e) => e.startMs - T0)).toEqual([2000]);
      // TASKS: every span involves it on the server side; the newest two are kept.
      const tasks = await store.reader.examples({ service: 'svc', extensionId: TASKS, limit: 1 });
      expect(tasks.map((e) => e.startMs - T0)).toEqual([4000]);
      expect(await store.reader.examples({ service: 'other', limit: 10 })).toEqual([]);
    });

    it('alert states: each activation stored with its transitions once, active ones listed first, filtered, paged, kept across reopening', async () => {
      const a = alert('fp-a', 'shop', T0);
      const b = alert('fp-b', 'cart', T0 + MS_PER_MINUTE);
      await store.alerts.recordAlerts({ alerts: [a, b], transitions: [moved(a, 'inactive', T0), moved(b, 'inactive', T0 + MS_PER_MINUTE)] });
      const aFiring = { ...a, state: 'firing' as const, firingSinceMs: T0 + 10 * MS_PER_MINUTE };
      // The same transition twice (a retried write) is stored once.
      await store.alerts.recordAlerts({ alerts: [aFiring], transitions: [moved(aFiring, 'pending', T0 + 10 * MS_PER_MINUTE)] });
      await store.alerts.recordAlerts({ alerts: [aFiring], transitions: [moved(aFiring, 'pending', T0 + 10 * MS_PER_MINUTE)] });
      const bResolved = { ...b, state: 'resolved' as const, resolvedAtMs: T0 + 2 * MS_PER_MINUTE };
      await store.alerts.recordAlerts({ alerts: [bResolved], transitions: [moved(bResolved, 'pending', T0 + 2 * MS_PER_MINUTE)] });
      // b's condition holds again later: a new activation of the same fingerprint.
      const bAgain = alert('fp-b', 'cart', T0 + 20 * MS_PER_MINUTE);
      await store.alerts.recordAlerts({ alerts: [bAgain], transitions: [moved(bAgain, 'inactive', T0 + 20 * MS_PER_MINUTE)] });
      await reopen();

      expect((await store.alerts.activeAlerts()).map((x) => [x.fingerprint, x.state, x.activeSinceMs - T0])).toEqual([
        ['fp-a', 'firing', 0],
        ['fp-b', 'pending', 20 * MS_PER_MINUTE],
      ]);
      const all = await store.alerts.alerts({ limit: 10, offset: 0 });
      expect(all.total).toBe(3);
      expect(all.alerts.map((x) => `${x.fingerprint} ${x.state}`)).toEqual(['fp-a firing', 'fp-b pending', 'fp-b resolved']);
      expect(all.alerts[0]).toEqual({
        ...aFiring,
        transitions: [
          { from: 'inactive', to: 'pending', atMs: T0 },
          { from: 'pending', to: 'firing', atMs: T0 + 10 * MS_PER_MINUTE },
        ],
      });
      expect(all.alerts[2]?.transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['inactive>pending', 'pending>resolved']);

      expect((await store.alerts.alerts({ states: ['resolved'], limit: 10, offset: 0 })).alerts.map((x) => x.resolvedAtMs)).toEqual([T0 + 2 * MS_PER_MINUTE]);
      expect((await store.alerts.alerts({ states: ['pending', 'firing'], service: 'cart', limit: 10, offset: 0 })).alerts.map((x) => x.fingerprint)).toEqual([
        'fp-b',
      ]);
      expect((await store.alerts.alerts({ rule: 'other', limit: 10, offset: 0 })).total).toBe(0);
      const second = await store.alerts.alerts({ limit: 1, offset: 1 });
      expect([second.total, second.alerts.map((x) => x.state)]).toEqual([3, ['pending']]);

      expect(await store.alerts.pruneAlerts(T0 + 2 * MS_PER_MINUTE)).toBe(0);
      expect(await store.alerts.pruneAlerts(T0 + 3 * MS_PER_MINUTE)).toBe(1);
      expect((await store.alerts.alerts({ limit: 10, offset: 0 })).alerts.map((x) => `${x.fingerprint} ${x.state}`)).toEqual(['fp-a firing', 'fp-b pending']);
    });

    it('health, size and close', async () => {
      await store.ingest.applyMetrics(batch([{ start: 0, time: 1, value: 1 }]));
      const health = await store.lifecycle.health();
      expect(health).toMatchObject({ writable: true });
      expect(health.schemaVersion).toBe(health.latestSchemaVersion);
      expect(await store.lifecycle.sizeBytes()).toBeGreaterThan(0);
      await store.lifecycle.flush();
      await store.lifecycle.close();
      await store.lifecycle.close();
      await open();
      expect(cells((await store.reader.cellTotals(day)).cells)).toEqual(['alpha@1.0 declared: 1']);
    });
  });
}
