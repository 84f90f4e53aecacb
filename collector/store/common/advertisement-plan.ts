import type { ResourceBatch, ResourceIdentity } from '../../model/batches.js';
import { recordsAdvertisements } from './overflow-rule.js';

/** Where an instance's advertisements stand: the collection time of its latest one, and its generation number. */
export interface AdvertisingState {
  advertisedMs: number | null;
  generation: number;
}

/** An `advertised` row to upsert (first seen: the least, last seen and generation: the greatest). Absent values are ''. */
type AdvertisedRow = [
  serverName: string,
  serverVersion: string,
  extensionId: string,
  fingerprint: string,
  firstSeenMs: number,
  lastSeenMs: number,
  generation: number,
];

/**
 * An `advertised_counts` row to upsert (first seen: the least, last seen and generation: the greatest): the count
 * of the latest generation wins, of several points of one generation the last one's.
 */
type AdvertisedCountRow = [serverName: string, serverVersion: string, count: number, firstSeenMs: number, lastSeenMs: number, generation: number];

export interface AdvertisementPlan {
  /** The instance's new state, when this export starts a generation. */
  instance: AdvertisingState | undefined;
  /** One row per key (a statement may not touch a row twice), in key order (so that writers lock rows in one order). */
  advertised: AdvertisedRow[];
  /** One row per key, in key order, as upserting every point in turn would leave it. */
  counts: AdvertisedCountRow[];
}

/**
 * What each instance advertises, in generations: a gauge collection newer than the last one starts a new
 * generation, and the rows it touches are what the instance advertises now. Points of the same collection time
 * (an export split by a forwarding collector) join the current generation; older ones only widen first/last seen.
 * `undefined`: nothing to write (no gauges, or an instance stored under `_OTHER`, see overflow-rule.ts).
 */
export function planAdvertisements(batch: ResourceBatch, stored: ResourceIdentity, state: AdvertisingState): AdvertisementPlan | undefined {
  if (batch.advertised.length === 0 && batch.advertisedCounts.length === 0) return undefined;
  if (!recordsAdvertisements(batch.resource, stored)) return undefined;
  let newest = Number.NEGATIVE_INFINITY;
  for (const point of batch.advertised) newest = Math.max(newest, point.timeMs);
  for (const point of batch.advertisedCounts) newest = Math.max(newest, point.timeMs);
  let generation = state.generation;
  let instance: AdvertisingState | undefined;
  if (state.advertisedMs === null || newest > state.advertisedMs) {
    generation++;
    instance = { advertisedMs: newest, generation };
  }
  const currentMs = Math.max(newest, state.advertisedMs ?? newest);
  const genFor = (timeMs: number): number => (timeMs >= currentMs ? generation : 0);
  const advertised = new Map<string, AdvertisedRow>();
  for (const point of batch.advertised) {
    const row: AdvertisedRow = [
      point.serverName ?? '',
      point.serverVersion ?? '',
      point.extensionId,
      point.fingerprint ?? '',
      point.timeMs,
      point.timeMs,
      genFor(point.timeMs),
    ];
    addAdvertised(advertised, row);
  }
  const counts = new Map<string, AdvertisedCountRow>();
  for (const point of batch.advertisedCounts) {
    addCount(counts, [point.serverName ?? '', point.serverVersion ?? '', point.count, point.timeMs, point.timeMs, genFor(point.timeMs)]);
  }
  return { instance, advertised: inKeyOrder(advertised), counts: inKeyOrder(counts) };
}

/**
 * The plans of one instance's resources in one export (planned in turn, each from the state the one before left)
 * as one: one row per key, as writing them one after the other would leave the rows.
 */
export function mergeAdvertisements(plans: readonly AdvertisementPlan[]): AdvertisementPlan {
  const advertised = new Map<string, AdvertisedRow>();
  const counts = new Map<string, AdvertisedCountRow>();
  let instance: AdvertisingState | undefined;
  for (const plan of plans) {
    instance = plan.instance ?? instance;
    for (const row of plan.advertised) addAdvertised(advertised, row);
    for (const row of plan.counts) addCount(counts, row);
  }
  return { instance, advertised: inKeyOrder(advertised), counts: inKeyOrder(counts) };
}

function addAdvertised(rows: Map<string, AdvertisedRow>, row: AdvertisedRow): void {
  const key = JSON.stringify(row.slice(0, 4));
  const seen = rows.get(key);
  rows.set(key, seen === undefined ? row : [row[0], row[1], row[2], row[3], Math.min(seen[4], row[4]), Math.max(seen[5], row[5]), Math.max(seen[6], row[6])]);
}

/** A later row of a key takes its count when its generation is not older: what upserting them in turn leaves. */
function addCount(rows: Map<string, AdvertisedCountRow>, row: AdvertisedCountRow): void {
  const key = JSON.stringify(row.slice(0, 2));
  const seen = rows.get(key);
  rows.set(
    key,
    seen === undefined
      ? row
      : [row[0], row[1], row[5] >= seen[5] ? row[2] : seen[2], Math.min(seen[3], row[3]), Math.max(seen[4], row[4]), Math.max(seen[5], row[5])],
  );
}

const inKeyOrder = <Row>(rows: Map<string, Row>): Row[] => [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row);
