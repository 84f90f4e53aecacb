import type { IgnoredReason, MetricsBatch } from '../../model/batches.js';
import { PermanentError } from '../../model/errors.js';
import { MAX_COUNT_PER_STREAM_MINUTE } from '../../model/records.js';
import { REJECTED_REASONS, type RejectedReason, addRejected } from '../../model/rejections.js';
import { MS_PER_HOUR, MS_PER_SECOND, NANOS_PER_MINUTE, msToNanos, nanosToMs } from '../../model/time.js';
import { FLAG_NO_RECORDED_VALUE, type Metric, type NumberDataPoint } from '../../otlp/messages.js';
import { signedInteger, unsignedNanos } from '../../otlp/values.js';

export interface PointWindow {
  now: number;
  maxFutureSkewMs: number;
  /** Points older than this (relative to `now`) are refused individually: their dedup keys are gone. */
  dedupWindowMs: number;
}

/** One stream's delta increments in one minute of an export; `next`: another minute of the same stream. */
interface MinuteTotal {
  minute: bigint;
  total: number;
  next: MinuteTotal | undefined;
}

/** Per-export bookkeeping shared by the point readers: time checks, ignored and refused points. */
export class PointContext {
  private readonly maxTimeNs: bigint;
  private readonly minTimeNs: bigint;
  /**
   * Delta increments of this export per stream and minute, against {@link MAX_COUNT_PER_STREAM_MINUTE}: by the
   * stream's scope, then its attributes (both strings the caller already holds), then a short chain of minutes
   * (nearly always one). No key is built per point: joining the two into a new string, and hashing it, cost more
   * than the rest of the check.
   */
  private readonly perStreamMinute = new Map<string, Map<string, MinuteTotal>>();
  /** What the sender is told, once per reason. */
  private readonly messages = new Map<RejectedReason, string>();
  /** The service of the resource being read: refused points are counted under it. */
  service: string | null = null;

  constructor(
    private readonly window: PointWindow,
    private readonly batch: MetricsBatch,
  ) {
    this.maxTimeNs = msToNanos(window.now + window.maxFutureSkewMs);
    this.minTimeNs = msToNanos(window.now - window.dedupWindowMs);
  }

  ignore(reason: IgnoredReason, count: number): void {
    if (count > 0) this.batch.ignored.set(reason, (this.batch.ignored.get(reason) ?? 0) + count);
  }

  /** A point flagged as carrying no value is ignored (counted); returns whether it was. */
  noValue(point: NumberDataPoint): boolean {
    if (((point.flags ?? 0) & FLAG_NO_RECORDED_VALUE) === 0) return false;
    this.ignore('no_recorded_value', 1);
    return true;
  }

  time(point: NumberDataPoint, where: string): bigint {
    const timeNs = unsignedNanos(point.timeUnixNano);
    if (timeNs === undefined || timeNs <= 0n) throw new PermanentError(`${where}: a data point has no time_unix_nano`, 'bad_timestamp');
    if (timeNs > this.maxTimeNs) {
      throw new PermanentError(
        `${where}: a data point is dated ${new Date(nanosToMs(timeNs)).toISOString()}, more than ${Math.round(this.window.maxFutureSkewMs / MS_PER_SECOND)} s ahead of the collector's clock`,
        'future_timestamp',
      );
    }
    return timeNs;
  }

  /** A delta increment: refuses the export when it, or its stream's sum in its minute, is beyond the bound. */
  deltaIncrement(streamScope: string, streamAttributes: string, timeNs: bigint, value: number, where: string): void {
    const minute = timeNs / NANOS_PER_MINUTE;
    let streams = this.perStreamMinute.get(streamScope);
    if (streams === undefined) this.perStreamMinute.set(streamScope, (streams = new Map()));
    const first = streams.get(streamAttributes);
    let entry = first;
    while (entry !== undefined && entry.minute !== minute) entry = entry.next;
    const total = (entry?.total ?? 0) + value;
    if (total > MAX_COUNT_PER_STREAM_MINUTE) {
      throw new PermanentError(
        `${where}: ${total} requests in one minute of one stream; the limit is ${MAX_COUNT_PER_STREAM_MINUTE} (more than an MCP server can answer)`,
        'count_too_large',
      );
    }
    if (entry !== undefined) entry.total = total;
    else streams.set(streamAttributes, { minute, total, next: first });
  }

  /** Refuses `points` points of the current service (partial success); the sender is told why, once per reason. */
  reject(reason: RejectedReason, points = 1, message: string = REJECTED_REASONS[reason]): void {
    if (points <= 0) return;
    addRejected(this.batch.rejections, reason, this.service, points);
    if (!this.messages.has(reason)) {
      this.messages.set(reason, message);
      this.batch.rejectedReason = [...this.messages.values()].join('; ');
    }
  }

  /** Counts the point as refused when it is older than the dedup window. */
  tooOld(timeNs: bigint): boolean {
    if (timeNs >= this.minTimeNs) return false;
    const hours = Math.round(this.window.dedupWindowMs / MS_PER_HOUR);
    this.reject('too_old', 1, `data points older than ${hours} h were not applied: a retry of them could no longer be recognised`);
    return true;
  }
}

export function countPoints(metric: Metric): number {
  return (
    (metric.sum?.dataPoints?.length ?? 0) +
    (metric.gauge?.dataPoints?.length ?? 0) +
    (metric.histogram?.dataPoints?.length ?? 0) +
    (metric.exponentialHistogram?.dataPoints?.length ?? 0) +
    (metric.summary?.dataPoints?.length ?? 0)
  );
}

/** A count: whole and non-negative. `undefined` when the point carries no value at all. */
export function countValue(point: NumberDataPoint, where: string): number | undefined {
  let value: number;
  if (point.asInt !== null && point.asInt !== undefined) {
    value = signedInteger(point.asInt);
    if (Number.isNaN(value)) throw new PermanentError(`${where}: an integer count is beyond 2^53`, 'bad_value');
  } else if (point.asDouble !== null && point.asDouble !== undefined) value = point.asDouble;
  else return undefined;
  if (!Number.isFinite(value)) throw new PermanentError(`${where}: a count is ${String(value)}`, 'bad_value');
  if (value < 0) throw new PermanentError(`${where}: a count is negative (${value})`, 'bad_value');
  if (!Number.isSafeInteger(value)) throw new PermanentError(`${where}: a count is not a whole number below 2^53 (${value})`, 'bad_value');
  return value;
}

export function gaugeValue(point: NumberDataPoint, where: string): number | undefined {
  let value: number;
  if (point.asInt !== null && point.asInt !== undefined) value = signedInteger(point.asInt);
  else if (point.asDouble !== null && point.asDouble !== undefined) value = point.asDouble;
  else return undefined;
  if (!Number.isFinite(value)) throw new PermanentError(`${where}: a gauge value is ${String(value)}`, 'bad_value');
  if (value < 0) throw new PermanentError(`${where}: a gauge value is negative (${value})`, 'bad_value');
  return value;
}
