/**
 * The one rule turning a cumulative total into an increment, for every store: per stream and start time, against
 * the state the last total left (its end time and value).
 *
 * - No state yet (a new stream, or a new start time: a restarted sender): the total counts whole.
 * - A point newer than the state: the difference; a lower total is a reset and counts whole.
 * - A point not newer than the state: a retry or an export arriving out of order, which the newer total already
 *   includes, adds nothing; unless its total is higher. A total only grows under one start time, so a higher
 *   one was taken later whatever its timestamp says: the sender's clock stepped back (an NTP correction). It
 *   counts its difference at once; waiting for the clock to pass the stored time would hold the counts, and lose
 *   them when the sender stops first. The stored time stays the later one, so resets are still told from
 *   points out of order.
 */
export interface CumulativeState {
  endNs: bigint;
  value: number;
}

/** `undefined`: the point adds nothing. */
export function convertCumulative(
  state: CumulativeState | undefined,
  point: { timeNs: bigint; value: number },
): { increment: number; state: CumulativeState } | undefined {
  if (state === undefined) return { increment: point.value, state: { endNs: point.timeNs, value: point.value } };
  if (point.timeNs > state.endNs)
    return { increment: point.value >= state.value ? point.value - state.value : point.value, state: { endNs: point.timeNs, value: point.value } };
  if (point.value > state.value) return { increment: point.value - state.value, state: { endNs: state.endNs, value: point.value } };
  return undefined;
}
