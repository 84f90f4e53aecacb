/**
 * Webhook signatures, the way Stripe and Slack sign theirs: HMAC-SHA256 with the shared secret over
 * `<timestamp>.<raw body>`, the timestamp (Unix seconds) sent beside it, so a receiver can tell a fresh
 * message from a replayed one and a changed timestamp breaks the signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE_HEADER = 'x-extscope-signature';
const TIMESTAMP_HEADER = 'x-extscope-timestamp';
/** The transition id: the same on every attempt of one notification, so a receiver can drop repeats. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** The signature header's value is `v1=<hex>`; a new scheme would be `v2=`, sent beside it during a change. */
const SIGNATURE_SCHEME = 'v1';
/** A receiver should refuse messages whose timestamp is further than this from its own clock. */
const DEFAULT_TOLERANCE_SECONDS = 300;

export function signature(secret: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestampSeconds}.`).update(body).digest('hex');
  return `${SIGNATURE_SCHEME}=${mac}`;
}

/** The headers of one attempt: signed at send time, so a retry carries a fresh timestamp. */
export function signedHeaders(secret: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return { [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: signature(secret, timestamp, body) };
}

export type VerifyResult = { ok: true } | { ok: false; reason: 'missing' | 'stale' | 'mismatch' };

/** What a receiver does (see docs/alerting-delivery.md): fresh timestamp, then a constant-time comparison. */
export function verifySignature(
  secret: string,
  body: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  nowMs: number,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): VerifyResult {
  const { timestamp, signature: received } = headers;
  if (timestamp === undefined || received === undefined || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'missing' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceSeconds) return { ok: false, reason: 'stale' };
  const expected = Buffer.from(signature(secret, Number(timestamp), body));
  // Several schemes may be sent, comma-separated; one valid `v1` is enough.
  for (const candidate of received.split(',').map((part) => Buffer.from(part.trim()))) {
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) return { ok: true };
  }
  return { ok: false, reason: 'mismatch' };
}
