import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { MAX_REJECTING_SERVICES, RejectionTally } from '../../../collector/ops/rejections.js';

describe('RejectionTally', () => {
  it('counts by reason and service, and past the bound of distinct services counts every new one under _OTHER, on /metrics and in its summary alike', async () => {
    const registry = new Registry();
    const tally = new RejectionTally(registry, () => 1_000);
    const services = MAX_REJECTING_SERVICES + 50;
    for (let index = 0; index < services; index++) tally.record([{ reason: 'no_instance_identity', service: `svc-${index}`, points: 2 }]);
    tally.record([
      { reason: 'no_start_time', service: 'svc-0', points: 3 },
      { reason: 'too_old', service: null, points: 1 },
    ]);

    const summary = tally.summary();
    expect(summary.sinceMs).toBe(1_000);
    // svc-0 … svc-99 are kept apart; svc-100 … svc-149 and the service-less sender (the 101st) go to _OTHER.
    expect(summary.entries[0]).toEqual({ reason: 'no_instance_identity', service: '_OTHER', points: 100 });
    expect(summary.entries.find((entry) => entry.reason === 'too_old')).toEqual({ reason: 'too_old', service: '_OTHER', points: 1 });
    expect(summary.entries.find((entry) => entry.reason === 'no_start_time')).toEqual({ reason: 'no_start_time', service: 'svc-0', points: 3 });
    expect(new Set(summary.entries.map((entry) => entry.service)).size).toBe(MAX_REJECTING_SERVICES + 1);
    expect(summary.entries.reduce((sum, entry) => sum + entry.points, 0)).toBe(services * 2 + 4);

    const exposition = await registry.metrics();
    const series = exposition.split('\n').filter((line) => line.startsWith('extscope_collector_points_rejected_total{'));
    expect(series).toHaveLength(summary.entries.length);
    expect(series).toContain('extscope_collector_points_rejected_total{reason="no_instance_identity",service="_OTHER"} 100');
    expect(series).toContain('extscope_collector_points_rejected_total{reason="no_instance_identity",service="svc-99"} 2');
  });

  it('keeps a service-less sender apart while there is room, under the empty label', async () => {
    const registry = new Registry();
    const tally = new RejectionTally(registry, () => 0);
    tally.record([{ reason: 'no_instance_identity', service: null, points: 5 }]);
    expect(tally.summary().entries).toEqual([{ reason: 'no_instance_identity', service: null, points: 5 }]);
    expect(await registry.metrics()).toContain('extscope_collector_points_rejected_total{reason="no_instance_identity",service=""} 5');
  });
});
