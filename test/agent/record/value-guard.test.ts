import { describe, expect, it } from 'vitest';
import { capLength, ValueGuard } from '../../../agent/record/value-guard.js';
import { MAX_ATTRIBUTE_LENGTH } from '../../../contract/index.js';

describe('ValueGuard', () => {
  it('admits `limit` distinct values, then folds the rest into _OTHER and counts them', () => {
    const overflowed: string[] = [];
    const guard = new ValueGuard('attr', 3, (attribute) => overflowed.push(attribute), 10);
    expect(['a', 'b', 'c', 'a'].map((value) => guard.admit(value))).toEqual(['a', 'b', 'c', 'a']);
    expect(guard.admit('d')).toBe('_OTHER');
    expect(guard.admit('x'.repeat(50))).toBe('_OTHER');
    expect(overflowed).toEqual(['attr', 'attr']);
    // Exactly the first three stay admitted.
    expect(['a', 'b', 'c'].map((value) => guard.admit(value))).toEqual(['a', 'b', 'c']);
    expect(overflowed).toHaveLength(2);
  });

  it('caps the length before admitting, at the contract limit by default', () => {
    const guard = new ValueGuard('attr', 10, () => {});
    expect(guard.admit('x'.repeat(MAX_ATTRIBUTE_LENGTH + 5))).toBe('x'.repeat(MAX_ATTRIBUTE_LENGTH));
    expect(capLength('abcdef', 3)).toBe('abc');
    expect(capLength('y'.repeat(MAX_ATTRIBUTE_LENGTH + 1))).toHaveLength(MAX_ATTRIBUTE_LENGTH);
  });
});
