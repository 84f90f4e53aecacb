import { Counter, type Registry } from 'prom-client';
import { OVERFLOW_VALUE } from '../../contract/index.js';
import type { RejectedPoints, RejectedReason } from '../model/rejections.js';

/**
 * Distinct service names this tally keeps apart; points of any other service are counted under `_OTHER`. Service
 * names are chosen by senders: a bound keeps `/metrics` and the API answer small whatever they send.
 */
export const MAX_REJECTING_SERVICES = 100;

export interface RejectionSummary {
  /** Since when this collector process counts. */
  sinceMs: number;
  /** One entry per reason and service (`_OTHER` past {@link MAX_REJECTING_SERVICES}), most points first. */
  entries: RejectedPoints[];
}

/**
 * Data points refused one by one (partial success), by reason and service, since the collector started: on
 * `/metrics` as `extscope_collector_points_rejected_total{reason,service}` and, through {@link summary}, in the
 * query API. A sender without a service name is counted under the empty service label.
 */
export class RejectionTally {
  private readonly counter: Counter<'reason' | 'service'>;
  private readonly entries = new Map<string, RejectedPoints>();
  private readonly services = new Set<string | null>();
  private readonly sinceMs: number;

  constructor(registry: Registry, clock: () => number) {
    this.sinceMs = clock();
    this.counter = new Counter({
      name: 'extscope_collector_points_rejected_total',
      help: `Data points refused one by one (partial success), by reason and service.name (beyond ${MAX_REJECTING_SERVICES} services: _OTHER)`,
      labelNames: ['reason', 'service'],
      registers: [registry],
    });
  }

  record(rejections: readonly RejectedPoints[]): void {
    for (const { reason, service, points } of rejections) {
      if (points > 0) this.add(reason, this.bounded(service), points);
    }
  }

  summary(): RejectionSummary {
    return { sinceMs: this.sinceMs, entries: [...this.entries.values()].map((entry) => ({ ...entry })).sort((a, b) => b.points - a.points) };
  }

  private bounded(service: string | null): string | null {
    if (this.services.has(service)) return service;
    if (this.services.size >= MAX_REJECTING_SERVICES) return OVERFLOW_VALUE;
    this.services.add(service);
    return service;
  }

  private add(reason: RejectedReason, service: string | null, points: number): void {
    this.counter.inc({ reason, service: service ?? '' }, points);
    const key = JSON.stringify([reason, service]);
    const entry = this.entries.get(key);
    if (entry === undefined) this.entries.set(key, { reason, service, points });
    else entry.points += points;
  }
}
