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

/**
 * A length of time as people say it, rounded down to a whole unit: minutes up to two hours, hours up to two days,
 * days after ("95 minutes", "26 hours", "12 days"), so that a long silence does not read as thousands of minutes.
 */
export function spokenDuration(ms: number): string {
  const [count, unit] =
    ms < 2 * MS_PER_HOUR
      ? [Math.floor(ms / MS_PER_MINUTE), 'minute']
      : ms < 2 * MS_PER_DAY
        ? [Math.floor(ms / MS_PER_HOUR), 'hour']
        : [Math.floor(ms / MS_PER_DAY), 'day'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}
