/** Time units, each written once. OTLP timestamps are bigint nanoseconds; everything else is milliseconds. */

export const MS_PER_SECOND = 1000;
export const MS_PER_MINUTE = 60 * MS_PER_SECOND;
export const MS_PER_HOUR = 60 * MS_PER_MINUTE;
export const MS_PER_DAY = 24 * MS_PER_HOUR;
export const MS_PER_WEEK = 7 * MS_PER_DAY;

export const MINUTES_PER_HOUR = 60;
export const MINUTES_PER_DAY = 24 * MINUTES_PER_HOUR;

const NANOS_PER_MS = 1_000_000n;
export const NANOS_PER_MINUTE = BigInt(MS_PER_MINUTE) * NANOS_PER_MS;
export const NANOS_PER_HOUR = BigInt(MS_PER_HOUR) * NANOS_PER_MS;

export function nanosToMs(nanos: bigint): number {
  return Number(nanos / NANOS_PER_MS);
}

export function msToNanos(ms: number): bigint {
  return BigInt(Math.floor(ms)) * NANOS_PER_MS;
}
