/**
 * The rule both stores turn cumulative totals into increments with (store/common/cumulative-rule.ts), on its own:
 * first totals, growth, zero growth, resets, retries, points out of order and a sender's clock stepping back.
 */
import { describe, expect, it } from 'vitest';
import { type CumulativeState, convertCumulative } from '../../../collector/store/common/cumulative-rule.js';

const S = 1_000_000_000n;
const at = (seconds: number, value: number) => ({ timeNs: BigInt(seconds) * S, value });
const state = (seconds: number, value: number): CumulativeState => ({ endNs: BigInt(seconds) * S, value });

/** Feeds `points` through the rule in order; the increments (null: adds nothing) and the state left. */
function run(points: { timeNs: bigint; value: number }[], start?: CumulativeState): { increments: (number | null)[]; state: CumulativeState | undefined } {
  let current = start;
  const increments = points.map((point) => {
    const result = convertCumulative(current, point);
    if (result === undefined) return null;
    current = result.state;
    return result.increment;
  });
  return { increments, state: current };
}

describe('the cumulative rule', () => {
  it('counts the first total of a stream whole, and remembers its time and value', () => {
    expect(convertCumulative(undefined, at(60, 7))).toEqual({ increment: 7, state: state(60, 7) });
  });

  it('counts a first total of zero as an increment of zero (a stream that exists, with nothing counted yet)', () => {
    expect(convertCumulative(undefined, at(60, 0))).toEqual({ increment: 0, state: state(60, 0) });
  });

  it('counts the growth of each newer total, so the increments add up to the last total', () => {
    const { increments, state: last } = run([at(60, 3), at(120, 10), at(180, 10), at(240, 25)]);
    expect(increments).toEqual([3, 7, 0, 15]);
    expect(increments.reduce((sum, n) => sum! + n!, 0)).toBe(25);
    expect(last).toEqual(state(240, 25));
  });

  it('a newer total that did not grow is a zero increment that moves the state forward (not a duplicate)', () => {
    expect(convertCumulative(state(60, 10), at(120, 10))).toEqual({ increment: 0, state: state(120, 10) });
  });

  it('a newer total lower than the last is a reset: it counts whole', () => {
    expect(convertCumulative(state(60, 50), at(120, 4))).toEqual({ increment: 4, state: state(120, 4) });
    // A reset to zero counts nothing, and the next total counts from zero.
    const { increments } = run([at(60, 50), at(120, 0), at(180, 6)]);
    expect(increments).toEqual([50, 0, 6]);
  });

  it('a retry of the last total adds nothing and leaves the state alone', () => {
    expect(convertCumulative(state(60, 10), at(60, 10))).toBeUndefined();
  });

  it('an older total arriving late adds nothing: the newer total already includes it', () => {
    expect(convertCumulative(state(120, 10), at(60, 4))).toBeUndefined();
    // Not a reset either: a lower value at an older time is the past, not a restart.
    const { increments, state: last } = run([at(60, 4), at(120, 10), at(60, 4), at(180, 12)]);
    expect(increments).toEqual([4, 6, null, 2]);
    expect(last).toEqual(state(180, 12));
  });

  it('a higher total at an older time (the clock stepped back) counts its growth at once and keeps the later time', () => {
    expect(convertCumulative(state(120, 10), at(90, 13))).toEqual({ increment: 3, state: state(120, 13) });
    // The same total sent again at its stepped-back time is a retry; a lower one after it is still told from a reset.
    const { increments, state: last } = run([at(120, 10), at(90, 13), at(90, 13), at(100, 11), at(150, 2)]);
    expect(increments).toEqual([10, 3, null, null, 2]);
    expect(last).toEqual(state(150, 2));
  });

  it('counts each unit of a total exactly once in every order of delivery, when there is no reset', () => {
    const points = [at(60, 1), at(120, 4), at(180, 4), at(240, 9), at(300, 15)];
    const orders = permutations([0, 1, 2, 3, 4]);
    expect(orders).toHaveLength(120);
    for (const order of orders) {
      const { increments, state: last } = run(order.map((index) => points[index]!));
      expect(
        increments.reduce<number>((sum, n) => sum + (n ?? 0), 0),
        order.join(),
      ).toBe(15);
      expect(last?.value, order.join()).toBe(15);
    }
  });

  it('takes totals larger than 2^32 exactly (timestamps are bigint nanoseconds)', () => {
    const big = 2 ** 40;
    expect(convertCumulative(state(60, big), { timeNs: 120n * S + 1n, value: big + 5 })).toEqual({
      increment: 5,
      state: { endNs: 120n * S + 1n, value: big + 5 },
    });
    // One nanosecond later is newer; the same nanosecond is not.
    expect(convertCumulative({ endNs: 120n * S + 1n, value: big + 5 }, { timeNs: 120n * S + 1n, value: big + 5 })).toBeUndefined();
  });
});

function permutations(items: number[]): number[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, index) => permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]));
}
