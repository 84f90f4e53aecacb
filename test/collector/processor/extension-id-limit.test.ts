import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CounterPoint, type MetricsBatch, SeriesKind, Temporality } from '../../../collector/model/batches.js';
import type { MetricsConsumer, MetricsOutcome } from '../../../collector/model/consumer.js';
import { OVERFLOW_VALUE } from '../../../contract/index.js';
import { NANOS_PER_HOUR } from '../../../collector/model/time.js';
import { type AdmittedIdsState, ExtensionIdLimit } from '../../../collector/processor/extension-id-limit/index.js';
import { openSqliteStore } from '../../../collector/store/sqlite/index.js';
import type { StoreRoles } from '../../../collector/store/store.js';

const HOUR = 500_000n;

function batch(instance: string, ids: string[], hour = HOUR): MetricsBatch {
  const point = (id: string): CounterPoint =>
    ({
      dims: { kind: SeriesKind.Extension, extensionId: id },
      streamScope: '',
      streamAttributes: id,
      schema1Attributes: '',
      temporality: Temporality.Delta,
      startNs: hour * NANOS_PER_HOUR,
      timeNs: hour * NANOS_PER_HOUR + 1n,
      value: 1,
    }) as unknown as CounterPoint;
  const resource = {
    service: 'svc',
    instanceId: instance,
    serviceVersion: null,
    host: null,
    serverName: null,
    serverVersion: null,
    transport: null,
    deploymentEnvironment: null,
    k8sNamespace: null,
    k8sDeployment: null,
    canonical: instance,
    key: instance,
    instanceDerived: false,
  };
  return {
    resources: [{ resource, counters: ids.map(point), advertised: [], advertisedCounts: [] }],
    ignored: new Map(),
    rejections: [],
    rejectedReason: undefined,
  };
}

function limit(max: number, maxRememberedIds?: number, state?: AdmittedIdsState): { limit: ExtensionIdLimit; passed: MetricsBatch[] } {
  const passed: MetricsBatch[] = [];
  const next: MetricsConsumer<MetricsBatch> = {
    async consumeMetrics(data): Promise<MetricsOutcome> {
      passed.push(data);
      return { applied: 0, duplicates: 0, ignored: new Map(), rejections: [], rejectedReason: undefined, counts: [] };
    },
  };
  return { limit: new ExtensionIdLimit({ maxIdsPerInstanceHour: max, ...(maxRememberedIds === undefined ? {} : { maxRememberedIds }) }, next, state), passed };
}

const ids = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, index) => `com.example/${prefix}-${index}`);

const idsOf = (data: MetricsBatch | undefined): (string | null)[] =>
  data?.resources.flatMap((resource) => resource.counters.map((point) => point.dims.extensionId)) ?? [];

describe('extension-id limit', () => {
  it('counts ids past the limit of an instance in an hour under _OTHER, in the order they come, and passes the rest of the export on', async () => {
    const { limit: processor, passed } = limit(3);
    await processor.consumeMetrics(batch('i-1', ids('a', 2)));
    await processor.consumeMetrics(batch('i-1', [...ids('a', 2), ...ids('b', 2)]));
    expect(idsOf(passed[1])).toEqual([...ids('a', 2), 'com.example/b-0', OVERFLOW_VALUE]);
    // The overflowed id is a stream of its own (its id counts as itself in an hour where it fits).
    expect(passed[1]?.resources[0]?.counters[3]?.streamAttributes).toBe(`com.example/b-1\u0000${OVERFLOW_VALUE}`);
    expect(processor.overflowed).toBe(1);
    // Other instances and other hours count apart; ids already counted count once.
    await processor.consumeMetrics(batch('i-2', ids('c', 3)));
    await processor.consumeMetrics(batch('i-1', ids('d', 3), HOUR + 1n));
    await processor.consumeMetrics(batch('i-1', [...ids('a', 2), ...ids('b', 1)]));
    expect([idsOf(passed[2]), idsOf(passed[3]), idsOf(passed[4])].flat()).not.toContain(OVERFLOW_VALUE);
    expect(processor.overflowed).toBe(1);
  });

  it('forgets the oldest sets past its memory bound, which only lets more ids through', async () => {
    const { limit: processor, passed } = limit(3, 4);
    await processor.consumeMetrics(batch('i-1', ids('a', 3)));
    await processor.consumeMetrics(batch('i-1', ids('x', 1)));
    expect(idsOf(passed[1])).toEqual([OVERFLOW_VALUE]);
    // Two more instances' sets push i-1's out of the 4 remembered ids.
    await processor.consumeMetrics(batch('i-2', ids('b', 2)));
    await processor.consumeMetrics(batch('i-3', ids('c', 2)));
    await processor.consumeMetrics(batch('i-1', ids('x', 1)));
    expect(idsOf(passed[4])).toEqual(['com.example/x-0']);
  });
});

describe('extension-id limit with its state in a store', () => {
  it('a new processor on the same database (a restart) decides as the first did: ids that overflowed overflow again, admitted ones still count as themselves', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'extscope-id-limit-'));
    const open = (): StoreRoles =>
      openSqliteStore({
        path: join(dir, 'ids.db'),
        clock: () => Number(HOUR) * 3_600_000,
        retention: { minuteDays: 7, hourDays: 30, dedupHours: 6 },
        synchronous: 'normal',
        examplesPerCell: 1,
      });
    try {
      let store = open();
      const before = limit(3, undefined, store.idLimits);
      await before.limit.consumeMetrics(batch('i-1', ids('a', 3)));
      await before.limit.consumeMetrics(batch('i-1', ids('b', 2)));
      expect(idsOf(before.passed[1])).toEqual([OVERFLOW_VALUE, OVERFLOW_VALUE]);
      await store.lifecycle.close();

      store = open();
      const after = limit(3, undefined, store.idLimits);
      await after.limit.consumeMetrics(batch('i-1', ids('b', 2)));
      await after.limit.consumeMetrics(batch('i-1', ids('a', 3)));
      expect(idsOf(after.passed[0])).toEqual([OVERFLOW_VALUE, OVERFLOW_VALUE]);
      expect(idsOf(after.passed[1])).toEqual(ids('a', 3));
      await store.lifecycle.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
