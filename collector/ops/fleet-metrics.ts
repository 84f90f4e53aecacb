import { Gauge, type Registry } from 'prom-client';
import { buildFleet } from '../analysis/fleet.js';
import type { RollupReader } from '../store/store.js';
import { MAX_COUNTER_SERIES } from './request-counters.js';

export interface FleetMetricsSources {
  reader: Pick<RollupReader, 'instances'>;
  clock: () => number;
  /** Instances not heard from for this long are stale: left out, as the fleet view leaves them out of drift. */
  staleAfterMs: number;
}

/**
 * What each live instance advertises now, as a 0/1 gauge per (service, instance, extension id): 1 when its latest
 * advertisement lists the id, 0 when it does not while another live instance of its service does. A gauge, not a
 * counter: an advertisement is a state each export repeats, and how often it was observed depends only on the
 * export interval. `sum by (service, extension)` gives how many instances advertise an id, `count` how many
 * could; a difference is fleet skew. The instance label is `service_instance` (`service.instance.id`), since
 * Prometheus' own `instance` label names the scrape target.
 */
export class FleetMetrics {
  private readonly advertises: Gauge<'service' | 'service_instance' | 'extension'>;

  constructor(
    registry: Registry,
    private readonly sources: FleetMetricsSources,
  ) {
    this.advertises = new Gauge({
      name: 'extscope_instance_advertises',
      help: 'Whether a live instance advertises an extension id now (1) or not while another live instance of its service does (0)',
      labelNames: ['service', 'service_instance', 'extension'],
      registers: [registry],
    });
  }

  /** Recomputes the gauge from the instances' latest advertisements (before each scrape). */
  async refresh(): Promise<void> {
    const { reader, clock, staleAfterMs } = this.sources;
    const now = clock();
    const live = buildFleet(await reader.instances({ seenSinceMs: now - staleAfterMs }), now, staleAfterMs).filter((instance) => !instance.stale && instance.advertisedMs !== null);
    const idsByService = new Map<string | null, Set<string>>();
    for (const instance of live) {
      let ids = idsByService.get(instance.service);
      if (ids === undefined) idsByService.set(instance.service, (ids = new Set()));
      for (const { id } of instance.advertises) ids.add(id);
    }
    this.advertises.reset();
    let series = 0;
    for (const instance of live) {
      const own = new Set(instance.advertises.map(({ id }) => id));
      for (const id of idsByService.get(instance.service) ?? []) {
        if (series++ >= MAX_COUNTER_SERIES) return;
        this.advertises.set({ service: instance.service ?? '', service_instance: instance.instanceId ?? '', extension: id }, own.has(id) ? 1 : 0);
      }
    }
  }
}
