import { parseRetryAfter } from './backoff.js';

/** How one HTTP attempt ended: delivered, worth retrying (network, timeout, 408, 429, 5xx), or not (other answers). */
export type AttemptResult =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'retry'; status?: number | undefined; error: string; retryAfterMs?: number | undefined }
  | { outcome: 'reject'; status: number; error: string };

const RETRYABLE_STATUS = new Set([408, 425, 429]);

/**
 * POSTs a JSON body. Never throws; redirects are not followed (a receiver that moved is a configuration error).
 * `cancel` aborts it (the notifier is closing).
 */
export async function postJson(url: string, body: string, headers: Record<string, string>, timeoutMs: number, cancel?: AbortSignal): Promise<AttemptResult> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'extscope-alerting', ...headers },
      body,
      redirect: 'manual',
      signal: cancel === undefined ? AbortSignal.timeout(timeoutMs) : AbortSignal.any([AbortSignal.timeout(timeoutMs), cancel]),
    });
  } catch (error) {
    return { outcome: 'retry', error: describe(error) };
  }
  // The body is not kept (it is the receiver's, possibly large); reading it releases the connection.
  await response.arrayBuffer().catch(() => undefined);
  const { status } = response;
  if (status >= 200 && status < 300) return { outcome: 'delivered', status };
  if (status >= 500 || RETRYABLE_STATUS.has(status)) {
    return { outcome: 'retry', status, error: `HTTP ${status}`, retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), Date.now()) };
  }
  return { outcome: 'reject', status, error: status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}` };
}

/** A network failure as one line: fetch's own message is only "fetch failed", the reason is in its cause. */
function describe(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'timed out';
  if (error instanceof Error && error.name === 'AbortError') return 'cancelled: the collector is shutting down';
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
