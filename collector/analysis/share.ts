/**
 * What a share is, decided once: every figure the API serves, every export writes and every alert rule reports
 * is taken over the same requests.
 */

/** A share of a whole: null when there is nothing to share (no requests), never a division by zero. */
export function share(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

/**
 * The requests a share is taken over: those where the answering server's declaration is known. A request answered
 * before any server instance existed (an unsupported revision, `subscriptions/listen` answered by the transport)
 * says nothing about what the server offers; counted as a request, it would lower the share of an extension every
 * instance advertises. Those stay visible as their own count instead.
 */
export function knownRequests(requests: number, serverUnknown: number): number {
  return Math.max(0, requests - serverUnknown);
}

/** Negotiated requests as a share of the requests whose server's declaration is known. */
export function negotiatedShare(negotiated: number, requests: number, serverUnknown: number): number | null {
  return share(negotiated, knownRequests(requests, serverUnknown));
}
