import { describe, expect, it } from 'vitest';
import { Admission } from '../../../collector/receiver/otlp/admission.js';
import { type EvictionReason, ReceiveBudget } from '../../../collector/receiver/otlp/receive-budget.js';

const KIB = 1024;

/** A budget on a clock the test moves, and the bodies it evicted. */
function budget(totalBytes: number) {
  let now = 0;
  const evicted: [string, EvictionReason][] = [];
  const receive = new ReceiveBudget(totalBytes, 2000, () => now);
  return {
    receive,
    evicted,
    advance: (ms: number) => (now += ms),
    open: (name: string, peer: string) => receive.open(peer, (reason) => evicted.push([name, reason])),
  };
}

describe('the receive budget: bytes of bodies still arriving', () => {
  it('bounds the total; a body that makes no progress for 2 s gives its bytes back to one that is arriving', () => {
    const { receive, evicted, advance, open } = budget(100 * KIB);
    const stalled = open('stalled', '10.0.0.1');
    expect(stalled.take(90 * KIB)).toBe(true);
    const honest = open('honest', '10.0.0.1');
    expect(honest.take(20 * KIB)).toBe(false);
    expect(evicted).toEqual([]);
    advance(2000);
    expect(honest.take(20 * KIB)).toBe(true);
    expect(evicted).toEqual([['stalled', 'stalled']]);
    expect(receive.inUse).toBe(20 * KIB);
    // Evicted bodies take nothing more.
    expect(stalled.take(1)).toBe(false);
  });

  it('a body trickling a few bytes at a time counts as stalled', () => {
    const { evicted, advance, open } = budget(100 * KIB);
    const trickler = open('trickler', '10.0.0.1');
    expect(trickler.take(90 * KIB)).toBe(true);
    for (let step = 0; step < 5; step++) {
      advance(500);
      expect(trickler.take(10)).toBe(true);
    }
    advance(1000);
    expect(open('honest', '10.0.0.1').take(20 * KIB)).toBe(true);
    expect(evicted).toEqual([['trickler', 'stalled']]);
  });

  it('shares the total among peer addresses: one over its share gives way to another within its own', () => {
    const { receive, evicted, open } = budget(100 * KIB);
    const greedy = [open('greedy-1', '10.0.0.1'), open('greedy-2', '10.0.0.1')];
    for (const body of greedy) expect(body.take(50 * KIB)).toBe(true);
    // Another address: its share is half; the greedy address is over its share, and its bodies are arriving.
    const other = open('other', '10.0.0.2');
    expect(other.take(40 * KIB)).toBe(true);
    expect(evicted).toEqual([['greedy-1', 'over_share']]);
    // Within its share only: past half, the other address is refused rather than taking the rest.
    expect(other.take(20 * KIB)).toBe(false);
    expect(receive.inUse).toBe(90 * KIB);
  });

  it('gives everything back on release, once', () => {
    const { receive, open } = budget(100 * KIB);
    const body = open('a', '10.0.0.1');
    expect(body.take(60 * KIB)).toBe(true);
    body.release();
    body.release();
    expect(receive.inUse).toBe(0);
    expect(open('b', '10.0.0.2').take(100 * KIB)).toBe(true);
  });
});

describe('admission: a slot per export, taken when it has arrived in full, given back once', () => {
  it('an export begun holds no slot; entered, it holds one; ended on any path, it gives back exactly what it held', () => {
    const admission = new Admission(2);
    const a = admission.begin();
    const b = admission.begin();
    expect([admission.current, admission.receiving]).toEqual([0, 2]);
    expect(a?.enter()).toBe(true);
    expect(a?.enter()).toBe(true);
    expect([admission.current, admission.receiving]).toEqual([1, 1]);
    a?.end();
    a?.end();
    b?.end();
    expect([admission.current, admission.receiving]).toEqual([0, 0]);
  });

  it('at the limit a new export is not begun, and one that arrives in full then is refused and ended', () => {
    const admission = new Admission(1);
    const waiting = admission.begin();
    const first = admission.begin();
    expect(first?.enter()).toBe(true);
    expect(admission.isSaturated).toBe(true);
    expect(admission.begin()).toBeUndefined();
    expect(waiting?.enter()).toBe(false);
    waiting?.end();
    first?.end();
    expect([admission.current, admission.receiving, admission.isSaturated]).toEqual([0, 0, false]);
  });

  it('draining begins nothing new, lets an export already arriving finish, and resolves once all have ended', async () => {
    const admission = new Admission(4);
    const arriving = admission.begin();
    let drained = false;
    const drain = admission.drain().then(() => (drained = true));
    expect(admission.begin()).toBeUndefined();
    expect(arriving?.enter()).toBe(true);
    await Promise.resolve();
    expect(drained).toBe(false);
    arriving?.end();
    await drain;
    expect(drained).toBe(true);
  });
});
