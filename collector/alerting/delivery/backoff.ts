import type { RetryPolicy } from './config.js';

/**
 * The wait before retry number `retry` (1 for the first): exponential from the policy's initial delay, capped,
 * with "equal jitter" (half fixed, half random) so that receivers coming back are not hit by every collector at
 * once. A receiver's `Retry-After` is honoured up to the cap.
 */
export function backoffDelay(policy: RetryPolicy, retry: number, retryAfterMs?: number, random: () => number = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, retry - 1));
  const jittered = exponential / 2 + (random() * exponential) / 2;
  return Math.round(Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterMs ?? 0)));
}

/** `Retry-After` as delay-seconds or an HTTP date, in milliseconds from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
