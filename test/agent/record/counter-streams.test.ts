import type { Attributes, ObservableResult } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { CounterStreams } from '../../../agent/record/counter-streams.js';

function observed(streams: CounterStreams): { value: number; attributes: Attributes }[] {
  const seen: { value: number; attributes: Attributes }[] = [];
  streams.observe({ observe: (value: number, attributes: Attributes = {}) => seen.push({ value, attributes }) } as ObservableResult);
  return seen;
}

describe('CounterStreams', () => {
  it('counts per two-level key; a stream is created once, with its attributes', () => {
    const streams = new CounterStreams();
    expect(streams.get('a', 'x')).toBeUndefined();
    const created = streams.create('a', 'x', { key: 'a/x' });
    expect(streams.get('a', 'x')).toBe(created);
    created.value++;
    streams.add('a', 'y', { key: 'a/y' }, 5);
    streams.add('a', 'x', { key: 'ignored' });
    expect(observed(streams)).toEqual([
      { value: 3, attributes: { key: 'a/x' } },
      { value: 5, attributes: { key: 'a/y' } },
    ]);
  });

  it('keeps at most maxStreams streams, and counts the rest in one overflow stream', () => {
    const streams = new CounterStreams(2);
    for (const key of ['a', 'b', 'c', 'd', 'a']) streams.add(key, '', { key });
    streams.add('a', 'inner', { key: 'a/inner' });
    const seen = observed(streams);
    expect(seen).toHaveLength(3); // a, b, and the overflow stream
    expect(seen.reduce((sum, { value }) => sum + value, 0)).toBe(6);
    expect(seen.find(({ attributes }) => attributes['otel.metric.overflow'] === true)?.value).toBe(3);
  });

  it('reports cumulative totals: every observation carries all counts made so far', () => {
    const streams = new CounterStreams();
    streams.add('a', '', {});
    expect(observed(streams)[0]?.value).toBe(1);
    streams.add('a', '', {});
    expect(observed(streams)[0]?.value).toBe(2);
  });
});
