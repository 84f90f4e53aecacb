import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND, MS_PER_WEEK } from '../../model/time.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: MS_PER_SECOND, m: MS_PER_MINUTE, h: MS_PER_HOUR, d: MS_PER_DAY, w: MS_PER_WEEK };

/** `1h30m` → 5 400 000. The schema has checked the shape; an unknown unit gives NaN. */
export function parseDuration(text: string): number {
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) total += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  return total;
}
