import { describe, expect, it } from 'vitest';
import { InFlight, MAX_IN_FLIGHT } from '../../../agent/observe/in-flight.js';

describe('InFlight', () => {
  it('pairs by id, typed (1 and "1" differ), alone or among others', () => {
    const inFlight = new InFlight<string>();
    inFlight.add(1, 'one');
    inFlight.add('1', 'string one');
    inFlight.add(2, 'two');
    expect(inFlight.take(2)).toBe('two');
    expect(inFlight.take(1)).toBe('one');
    expect(inFlight.take(1)).toBeUndefined();
    expect(inFlight.take('1')).toBe('string one');
    inFlight.add(3, 'three'); // alone again
    expect(inFlight.take(3)).toBe('three');
    expect(inFlight.drain()).toEqual([]);
  });

  it('a reused id waits behind the first under it: answers pair in arrival order, wherever the first is kept', () => {
    for (const before of [[], ['other']]) {
      const inFlight = new InFlight<string>();
      for (const value of before) inFlight.add(value, value);
      inFlight.add(7, 'first');
      inFlight.add(7, 'second');
      inFlight.add(7, 'third');
      expect([inFlight.take(7), inFlight.take(7), inFlight.take(7), inFlight.take(7)]).toEqual(['first', 'second', 'third', undefined]);
    }
  });

  it('replaces the oldest value a predicate accepts, keeping its place in line', () => {
    const inFlight = new InFlight<string>();
    inFlight.add(1, 'a');
    inFlight.add(1, 'b');
    const unmarked = (value: string) => !value.startsWith('*');
    expect(inFlight.replaceOldest(1, unmarked, '*a')).toBe('a');
    expect(inFlight.replaceOldest(1, unmarked, '*b')).toBe('b');
    expect(inFlight.replaceOldest(1, unmarked, '*c')).toBeUndefined();
    expect(inFlight.replaceOldest(2, unmarked, '*d')).toBeUndefined();
    expect([inFlight.take(1), inFlight.take(1)]).toEqual(['*a', '*b']);
  });

  it('tables of different transports stay apart; one with nothing in flight drains to nothing', () => {
    const used = new InFlight<string>();
    const fresh = new InFlight<string>();
    const drained = new InFlight<string>();
    expect(drained.drain()).toEqual([]);
    for (let id = 0; id < 64; id++) used.add(id, `used ${id}`);
    for (let id = 0; id < 64; id++) {
      expect(fresh.take(id)).toBeUndefined();
      expect(drained.take(id)).toBeUndefined();
    }
    expect(fresh.drain()).toEqual([]);
    fresh.add(5, 'fresh 5');
    expect(used.take(5)).toBe('used 5');
    expect(fresh.take(5)).toBe('fresh 5');
    expect(used.drain()).toHaveLength(63);
  });

  it('one request alone in flight is taken, replaced and drained as in the tables, and moves into them when a second comes', () => {
    const alone = new InFlight<string>();
    alone.add('a', 'first');
    expect(alone.take('b')).toBeUndefined();
    expect(alone.replaceOldest('a', (value) => value === 'other', 'x')).toBeUndefined();
    expect(alone.replaceOldest('a', (value) => value === 'first', 'replaced')).toBe('first');
    expect(alone.drain()).toEqual(['replaced']);
    expect(alone.take('a')).toBeUndefined();
    alone.add(9, 'nine');
    alone.add('s', 'string'); // a second in flight: both kept
    expect([alone.take(9), alone.take('s'), alone.take(9)]).toEqual(['nine', 'string', undefined]);
    alone.add(9, 'again'); // the tables are kept from now on
    expect(alone.drain()).toEqual(['again']);
  });

  it('drains everything still in flight, reused ids included', () => {
    const inFlight = new InFlight<string>();
    inFlight.add(1, 'a');
    inFlight.add(2, 'b');
    inFlight.add(1, 'c');
    expect(inFlight.drain().sort()).toEqual(['a', 'b', 'c']);
    expect(inFlight.take(1)).toBeUndefined();
  });

  it('keeps integer ids that share a slot (mod 64) apart, and a reused id behind its first wherever either is kept', () => {
    const inFlight = new InFlight<string>();
    inFlight.add(3, 'a'); // slot 3
    inFlight.add(67, 'b'); // slot 3 taken: kept in the Map
    inFlight.add(-1, 'negative');
    inFlight.add(2.5, 'fraction');
    expect(inFlight.take(3)).toBe('a'); // slot 3 free again, 67 still in the Map
    inFlight.add(67, 'c'); // reuse of 67: waits behind 'b', not in the free slot
    inFlight.add(131, 'd'); // slot 3 is free: kept there
    expect([inFlight.take(67), inFlight.take(67), inFlight.take(67)]).toEqual(['b', 'c', undefined]);
    expect([inFlight.take(131), inFlight.take(-1), inFlight.take(2.5)]).toEqual(['d', 'negative', 'fraction']);
    expect(inFlight.drain()).toEqual([]);
  });

  it('is full at MAX_IN_FLIGHT distinct ids, slots and Map together; a reused id does not count again', () => {
    const inFlight = new InFlight<number>();
    for (let id = 0; id < MAX_IN_FLIGHT - 1; id++) inFlight.add(id, id);
    expect(inFlight.add(5, -5)).toBe(true); // a reuse
    expect(inFlight.full).toBe(false);
    expect(inFlight.add('last', 0)).toBe(true);
    expect(inFlight.full).toBe(true);
    expect(inFlight.add('refused', 0)).toBe(false);
    expect(inFlight.take(5)).toBe(5); // -5 still waits under 5: 5 stays in flight
    expect(inFlight.full).toBe(true);
    expect(inFlight.take(70)).toBe(70); // kept in the Map (slot 6 holds 6)
    expect(inFlight.full).toBe(false);
    expect(inFlight.drain()).toHaveLength(MAX_IN_FLIGHT - 1); // MAX_IN_FLIGHT + 1 values added, two taken
  });
});
