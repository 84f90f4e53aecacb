import { setImmediate as nextTurn } from 'node:timers/promises';
import { isLive } from '../analysis/fleet.js';
import type { InstanceRecord } from '../model/records.js';
import type { RollupReader } from '../store/store.js';

export interface FleetMetricsSources {
  reader: Pick<RollupReader, 'instances'>;
  clock: () => number;
  /** Instances not heard from for this long are stale: left out, as the fleet view leaves them out of drift. */
  staleAfterMs: number;
}

/**
 * (instance, id) series the gauge may hold. A service is in it whole or not at all (its live instances × the ids
 * any of them advertises): a service cut part way would make `sum by (service, extension)` wrong without a sign.
 */
const MAX_FLEET_SERIES = 50_000;
/**
 * How old a computed gauge may be when nothing was ingested since: instances go stale with time alone, and other
 * replicas on one database ingest what this one does not see.
 */
const MAX_AGE_MS = 10_000;
/** Records looked at, or lines written, per turn of the event loop. */
const PER_TURN = 500;

const ADVERTISES = 'extscope_instance_advertises';
const OVERFLOW = 'extscope_instance_advertises_overflow_series';

/** A label value in the text exposition format: backslash, double quote and line feed escaped. */
const escape = (value: string): string => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

interface ServiceFleet {
  service: string;
  /** Each live instance's id and the ids it advertises now. */
  instances: { instanceId: string; ids: Set<string> }[];
  /** Every id a live instance of the service advertises, in order. */
  ids: string[];
}

/**
 * What each live instance advertises now, as a 0/1 gauge per (service, instance, extension id): 1 when its latest
 * advertisement lists the id, 0 when it does not while another live instance of its service does. A gauge, not a
 * counter: an advertisement is a state each export repeats, and how often it was observed depends only on the
 * export interval. `sum by (service, extension)` gives how many instances advertise an id, `count` how many
 * could; a difference is fleet skew. The instance label is `service_instance` (`service.instance.id`), since
 * Prometheus' own `instance` label names the scrape target.
 *
 * The gauge is text computed off the scrape: when an export was consumed since, or when it is older than
 * {@link MAX_AGE_MS}, a scrape starts a computation (or joins the one running: one at a time, shared) that reads the
 * live instances and writes a few hundred of them or lines per turn of the event loop. Recomputed on every scrape,
 * 2,000 instances took 10 s a scrape, and six scrapes blocked the event loop for 36 s. Past {@link MAX_FLEET_SERIES}
 * the largest services are left out whole, and `extscope_instance_advertises_overflow_series` says how many series
 * that left out (0 when none).
 */
export class FleetMetrics {
  private text = Buffer.alloc(0);
  private computedAt = Number.NEGATIVE_INFINITY;
  /** Set by every consumed export; a computation started after it sees that export. */
  private changed = true;
  private running: Promise<Buffer> | undefined;

  constructor(private readonly sources: FleetMetricsSources) {}

  /** The data may have changed (an export was consumed): the next scrape recomputes. */
  dataChanged(): void {
    this.changed = true;
  }

  /**
   * The gauge's exposition text (UTF-8), computed at most once at a time and shared by the scrapes waiting for it;
   * bytes, so that a scrape copies them rather than encoding megabytes of text again in one turn.
   */
  async exposition(): Promise<Buffer> {
    if (!this.changed && this.sources.clock() - this.computedAt < MAX_AGE_MS) return this.text;
    this.running ??= this.compute().finally(() => (this.running = undefined));
    return this.running;
  }

  private async compute(): Promise<Buffer> {
    const { reader, clock, staleAfterMs } = this.sources;
    this.changed = false;
    const now = clock();
    const records = await reader.instances({ seenSinceMs: now - staleAfterMs });
    await nextTurn();
    const services = await liveServices(records, now, staleAfterMs);
    // Smallest services first, so that as many whole services as possible fit.
    const sized = services
      .map((fleet) => ({ fleet, series: fleet.instances.length * fleet.ids.length }))
      .sort((a, b) => a.series - b.series || compare(a.fleet.service, b.fleet.service));
    let kept = 0;
    let overflow = 0;
    const shown: ServiceFleet[] = [];
    for (const { fleet, series } of sized) {
      if (kept + series <= MAX_FLEET_SERIES) {
        kept += series;
        shown.push(fleet);
      } else overflow += series;
    }
    shown.sort((a, b) => compare(a.service, b.service));
    // Encoded a turn's lines at a time; the parts are joined once, by copying bytes.
    const parts: Buffer[] = [];
    let lines = [
      `# HELP ${ADVERTISES} Whether a live instance advertises an extension id now (1) or not while another live instance of its service does (0)`,
      `# TYPE ${ADVERTISES} gauge`,
    ];
    for (const fleet of shown) {
      const service = escape(fleet.service);
      for (const { instanceId, ids } of fleet.instances) {
        const prefix = `${ADVERTISES}{service="${service}",service_instance="${escape(instanceId)}",extension="`;
        for (const id of fleet.ids) lines.push(`${prefix}${escape(id)}"} ${ids.has(id) ? 1 : 0}`);
        if (lines.length >= PER_TURN) {
          parts.push(Buffer.from(`${lines.join('\n')}\n`));
          lines = [];
          await nextTurn();
        }
      }
    }
    lines.push(
      `# HELP ${OVERFLOW} Series of ${ADVERTISES} left out (whole services, the largest first) past the limit of ${MAX_FLEET_SERIES}; 0 when none is`,
      `# TYPE ${OVERFLOW} gauge`,
      `${OVERFLOW} ${overflow}`,
    );
    parts.push(Buffer.from(`${lines.join('\n')}\n`));
    this.text = Buffer.concat(parts);
    this.computedAt = now;
    return this.text;
  }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The live instances (not ended, heard from within the stale window, advertising at all: analysis/fleet.ts) per service, with what each
 * advertises now: a few hundred records per turn of the event loop.
 */
async function liveServices(records: readonly InstanceRecord[], now: number, staleAfterMs: number): Promise<ServiceFleet[]> {
  const services = new Map<string, { instances: ServiceFleet['instances']; ids: Set<string> }>();
  for (let index = 0; index < records.length; index++) {
    if (index > 0 && index % PER_TURN === 0) await nextTurn();
    const record = records[index] as InstanceRecord;
    if (!isLive(record, now, staleAfterMs)) continue;
    const service = record.service ?? '';
    let fleet = services.get(service);
    if (fleet === undefined) services.set(service, (fleet = { instances: [], ids: new Set() }));
    const ids = new Set<string>();
    for (const row of record.advertised) {
      if (!row.current) continue;
      ids.add(row.extensionId);
      fleet.ids.add(row.extensionId);
    }
    fleet.instances.push({ instanceId: record.instanceId ?? '', ids });
  }
  return [...services].map(([service, { instances, ids }]) => ({ service, instances, ids: [...ids].sort(compare) }));
}
