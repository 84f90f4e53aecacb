import { describe, expect, it } from 'vitest';
import { MAX_EXTENSION_ID_LENGTH, isValidExtensionId } from '../../contract/index.js';

describe('extension identifiers', () => {
  it.each(['io.modelcontextprotocol/tasks', 'com.example/replay', 'a/b', 'com.example-corp.x1/my_ext.v2', 'org.example/9lives'])('accepts %s', (id) =>
    expect(isValidExtensionId(id)).toBe(true),
  );

  it.each([
    '',
    'tasks',
    '/tasks',
    'com.example/',
    '1com.example/x',
    'com.-example/x',
    'com.example-/x',
    'com..example/x',
    'com.example/-x',
    'com.example/x-',
    'com.example/a/b',
    'com.example/x y',
    'com.example/<script>',
    '__proto__',
    'com.exämple/x',
  ])('rejects %j', (id) => expect(isValidExtensionId(id)).toBe(false));

  it('caps the length at the contract limit, or at the one given', () => {
    expect(MAX_EXTENSION_ID_LENGTH).toBe(128);
    expect(isValidExtensionId(`a/${'x'.repeat(126)}`)).toBe(true);
    expect(isValidExtensionId(`a/${'x'.repeat(127)}`)).toBe(false);
    expect(isValidExtensionId('a/bcd', 4)).toBe(false);
    // The answer for an id does not depend on the limit it was first checked with.
    expect(isValidExtensionId('a/bcd')).toBe(true);
  });
});
