import { describe, expect, it } from 'vitest';
import type { KeyValue } from '../../../collector/otlp/messages.js';
import { StreamIdentity } from '../../../collector/processor/normalise-metrics/stream-identity.js';

const string = (key: string, value: string): KeyValue => ({ key, value: { stringValue: value } });

describe('stream identity', () => {
  it('is the same for the same names and values in any order, and differs by value type and by the set of names', () => {
    const identity = new StreamIdentity();
    const a = [string('b', 'x'), string('a', 'y')];
    const of = (attributes: KeyValue[]): string => identity.of(attributes);
    expect(of(a)).toBe(of([...a].reverse()));
    expect(of(a)).toBe(new StreamIdentity().of(a));
    const typed = new Set([
      of([string('n', '1')]),
      of([{ key: 'n', value: { intValue: 1 } }]),
      of([{ key: 'n', value: { boolValue: true } }]),
      of([string('n', 'true')]),
    ]);
    expect(typed.size).toBe(4);
    expect(of([...a, string('c', 'z')])).not.toBe(of(a));
    // The same values under other names are another stream.
    expect(of([string('a', 'x'), string('c', 'y')])).not.toBe(of(a));
  });
});
