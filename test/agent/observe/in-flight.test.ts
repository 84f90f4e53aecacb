import { describe, expect, it } from 'vitest';
import { InFlight } from '../../../agent/observe/in-flight.js';

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

  it('drains everything still in flight, reused ids included', () => {
    const inFlight = new InFlight<string>();
    inFlight.add(1, 'a');
    inFlight.add(2, 'b');
    inFlight.add(1, 'c');
    expect(inFlight.drain().sort()).toEqual(['a', 'b', 'c']);
    expect(inFlight.take(1)).toBeUndefined();
  });
});
