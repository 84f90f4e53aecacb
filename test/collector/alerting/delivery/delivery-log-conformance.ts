/**
 * What every store backend's delivery log must do (store/store.ts, DeliveryLogStore): run by each backend's
 * test file with a factory, like the store conformance suite.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MS_PER_DAY } from '../../../../collector/model/time.js';
import type { DeliveryEntry, StoreRoles } from '../../../../collector/store/store.js';

export interface DeliveryLogBackend {
  /** A new, empty store whose clock is `clock` and whose hourly retention is `hourDays`. */
  open(clock: () => number, hourDays: number): Promise<Pick<StoreRoles, 'deliveries' | 'lifecycle'>>;
  cleanup(): Promise<void>;
}

const T0 = Date.UTC(2026, 11, 1, 12);

function entry(overrides: Partial<DeliveryEntry> = {}): DeliveryEntry {
  return {
    receiver: 'webhook',
    transitionId: 't-1',
    fingerprint: 'fp-1',
    rule: 'skew',
    from: 'pending',
    to: 'firing',
    state: 'queued',
    attempts: 0,
    queuedAtMs: T0,
    atMs: T0,
    ...overrides,
  };
}

export function deliveryLogConformance(name: string, backend: () => DeliveryLogBackend): void {
  describe(`${name} delivery log`, () => {
    let now = T0;
    let made: DeliveryLogBackend;
    let log: Awaited<ReturnType<DeliveryLogBackend['open']>>;
    beforeEach(async () => {
      now = T0;
      made = backend();
      log = await made.open(() => now, 10);
    });
    afterEach(async () => {
      await log.lifecycle.close();
      await made.cleanup();
    });

    it('keeps one row per receiver and transition, rewritten at each attempt, created and delivered times kept', async () => {
      await log.deliveries.recordDeliveries([entry()]);
      await log.deliveries.recordDeliveries([
        entry({ state: 'retrying', attempts: 1, lastStatus: 503, lastError: 'HTTP 503', nextAttemptAtMs: T0 + 2000, atMs: T0 + 1000 }),
      ]);
      await log.deliveries.recordDeliveries([entry({ state: 'delivered', attempts: 2, lastStatus: 200, atMs: T0 + 3000 })]);
      await log.deliveries.recordDeliveries([entry({ receiver: 'alertmanager', state: 'queued', atMs: T0 + 3500 })]);
      const rows = await log.deliveries.deliveries({ receiver: 'webhook', limit: 10 });
      expect(rows).toEqual([
        {
          receiver: 'webhook',
          transitionId: 't-1',
          fingerprint: 'fp-1',
          rule: 'skew',
          from: 'pending',
          to: 'firing',
          state: 'delivered',
          attempts: 2,
          lastStatus: 200,
          lastError: undefined,
          createdAtMs: T0,
          updatedAtMs: T0 + 3000,
          nextAttemptAtMs: undefined,
          deliveredAtMs: T0 + 3000,
        },
      ]);
      expect((await log.deliveries.deliveries({ limit: 10 })).map((row) => row.receiver)).toEqual(['alertmanager', 'webhook']);
    });

    it('keeps the body of unfinished notifications (queued, retrying, abandoned) and gives them back oldest first; a finished one loses it', async () => {
      await log.deliveries.recordDeliveries([
        entry({ transitionId: 't-1', body: '{"n":1}' }),
        entry({ transitionId: 't-2', body: '{"n":2}', queuedAtMs: T0 + 1, atMs: T0 + 1 }),
        entry({ transitionId: 't-3', body: '{"n":3}', queuedAtMs: T0 + 2, atMs: T0 + 2 }),
        entry({ transitionId: 't-4', body: '{"n":4}', queuedAtMs: T0 + 3, atMs: T0 + 3 }),
        entry({ receiver: 'other', transitionId: 't-5', body: '{"n":5}' }),
      ]);
      // A later step written without the body keeps it; a final state drops it.
      await log.deliveries.recordDeliveries([
        entry({ transitionId: 't-1', state: 'retrying', attempts: 2, atMs: T0 + 10 }),
        entry({ transitionId: 't-2', state: 'abandoned', attempts: 1, body: '{"n":2}', queuedAtMs: T0 + 1, atMs: T0 + 10 }),
        entry({ transitionId: 't-3', state: 'delivered', attempts: 1, body: '{"n":3}', queuedAtMs: T0 + 2, atMs: T0 + 10 }),
        entry({ transitionId: 't-4', state: 'failed', attempts: 10, body: '{"n":4}', queuedAtMs: T0 + 3, atMs: T0 + 10 }),
      ]);
      const unfinished = await log.deliveries.unfinishedDeliveries('webhook', 10);
      expect(unfinished.map(({ record, body }) => [record.transitionId, record.state, record.attempts, body])).toEqual([
        ['t-1', 'retrying', 2, '{"n":1}'],
        ['t-2', 'abandoned', 1, '{"n":2}'],
      ]);
      expect((await log.deliveries.unfinishedDeliveries('webhook', 1)).map(({ record }) => record.transitionId)).toEqual(['t-1']);
      // Delivered again: finished, so no longer given back.
      await log.deliveries.recordDeliveries([entry({ transitionId: 't-1', state: 'delivered', attempts: 3, atMs: T0 + 20 })]);
      expect((await log.deliveries.unfinishedDeliveries('webhook', 10)).map(({ record }) => record.transitionId)).toEqual(['t-2']);
    });

    it('writes a batch at once', async () => {
      await log.deliveries.recordDeliveries([
        entry({ transitionId: 'a' }),
        entry({ transitionId: 'b', queuedAtMs: T0 - 5, atMs: T0 + 5 }),
        entry({ transitionId: 'a', state: 'dropped', atMs: T0 + 6 }),
      ]);
      const rows = await log.deliveries.deliveries({ limit: 10 });
      expect(rows.map((row) => [row.transitionId, row.state, row.createdAtMs, row.updatedAtMs])).toEqual([
        ['a', 'dropped', T0, T0 + 6],
        ['b', 'queued', T0 - 5, T0 + 5],
      ]);
    });

    it('filters by state, fingerprint and transition, most recently updated first, up to the limit', async () => {
      for (let i = 1; i <= 5; i++)
        await log.deliveries.recordDeliveries([
          entry({ transitionId: `t-${i}`, fingerprint: i % 2 === 0 ? 'even' : 'odd', state: i === 5 ? 'failed' : 'queued', atMs: T0 + i }),
        ]);
      expect((await log.deliveries.deliveries({ limit: 10, fingerprint: 'odd' })).map((row) => row.transitionId)).toEqual(['t-5', 't-3', 't-1']);
      expect((await log.deliveries.deliveries({ limit: 10, state: 'failed' })).map((row) => row.transitionId)).toEqual(['t-5']);
      expect((await log.deliveries.deliveries({ limit: 10, transitionId: 't-2' })).map((row) => row.fingerprint)).toEqual(['even']);
      expect((await log.deliveries.deliveries({ limit: 2 })).map((row) => row.transitionId)).toEqual(['t-5', 't-4']);
    });

    it('keeps a long error short, and drops rows past the hourly retention', async () => {
      await log.deliveries.recordDeliveries([entry({ state: 'failed', lastError: 'x'.repeat(10_000) })]);
      const [row] = await log.deliveries.deliveries({ limit: 1 });
      expect(row?.lastError?.length).toBeLessThanOrEqual(500);
      await log.deliveries.recordDeliveries([entry({ transitionId: 't-new', atMs: T0 + 9 * MS_PER_DAY })]);
      now = T0 + 10 * MS_PER_DAY + 1;
      await log.lifecycle.maintain();
      expect((await log.deliveries.deliveries({ limit: 10 })).map((each) => each.transitionId)).toEqual(['t-new']);
    });
  });
}
