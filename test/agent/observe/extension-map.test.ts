import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprint, readDeclaredExtensions, readRequiredExtensionIds } from '../../../agent/observe/extension-map.js';

const limits = { maxIds: 64, maxIdLength: 128 };

describe('the three declaration states', () => {
  it('unknown when no capabilities were received', () => {
    for (const capabilities of [undefined, null, 'x', 42, []]) {
      expect(readDeclaredExtensions(capabilities, limits).declaration).toBe('unknown');
    }
  });

  it('none when the map is absent, empty or not an object', () => {
    for (const capabilities of [{}, { extensions: {} }, { extensions: null }, { extensions: ['a/b'] }, { tools: {} }]) {
      expect(readDeclaredExtensions(capabilities, limits).declaration).toBe('none');
    }
  });

  it('declared as soon as one key is present, {} settings included', () => {
    const read = readDeclaredExtensions({ extensions: { 'io.modelcontextprotocol/tasks': {} } }, limits);
    expect(read).toMatchObject({ declaration: 'declared', ids: ['io.modelcontextprotocol/tasks'], invalid: 0, dropped: 0 });
  });

  it('declared, with the invalid ids counted but not named, even when none is valid', () => {
    const read = readDeclaredExtensions({ extensions: JSON.parse('{"__proto__":{},"not valid":1,"com.ok/x":{}}') }, limits);
    expect(read).toMatchObject({ declaration: 'declared', ids: ['com.ok/x'], invalid: 2 });
    expect(readDeclaredExtensions({ extensions: { 'bad id': {} } }, limits)).toMatchObject({ declaration: 'declared', ids: [], invalid: 1 });
  });

  it('counts an id longer than the configured maxIdLength as invalid', () => {
    const read = readDeclaredExtensions({ extensions: { 'a/bcd': {}, 'a/b': {} } }, { maxIds: 64, maxIdLength: 4 });
    expect(read).toMatchObject({ declaration: 'declared', ids: ['a/b'], invalid: 1 });
  });

  it('records at most maxIds ids and counts the rest as dropped', () => {
    const extensions = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`com.junk/id-${i}`, {}]));
    const read = readDeclaredExtensions({ extensions }, limits);
    expect(read.ids).toHaveLength(64);
    expect(read.dropped).toBe(10_000 - 64);
  });

  it('keeps settings aligned with ids, by reference (never copied)', () => {
    const settings = { maxAttempts: 3 };
    const read = readDeclaredExtensions({ extensions: { 'com.example/replay': settings, 'x y': {}, 'a/b': {} } }, limits);
    expect(read.ids).toEqual(['com.example/replay', 'a/b']);
    expect(read.settings[0]).toBe(settings);
  });
});

/** Maps whose declaration is never handed back again, with the limits they are read under. */
const UNREPEATABLE = [
  [{ 'a/b': {}, 'bad id': {} }, limits],
  [
    { 'a/b': {}, 'c/d': {} },
    { maxIds: 1, maxIdLength: 128 },
  ],
] as const;

/** Each map read twice gives two equal declarations, not the same one. */
function expectReadAnew(settingsRead: boolean, cases: readonly (readonly [Record<string, unknown>, { maxIds: number; maxIdLength: number }])[]): void {
  const memo = { last: undefined, settingsRead };
  for (const [extensions, options] of cases) {
    const first = readDeclaredExtensions({ extensions }, options, memo);
    const again = readDeclaredExtensions({ extensions }, options, memo);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  }
}

describe('a repeated declaration, where settings are read (spans)', () => {
  it('is the same object again when a map repeats valid ids with empty settings, in order', () => {
    const memo = { last: undefined, settingsRead: true };
    const first = readDeclaredExtensions({ extensions: { 'a/b': {}, 'c/d': {} } }, limits, memo);
    expect(readDeclaredExtensions({ extensions: { 'a/b': {}, 'c/d': {} } }, limits, memo)).toBe(first);
    for (const extensions of [{ 'c/d': {}, 'a/b': {} }, { 'a/b': {} }, { 'a/b': {}, 'c/d': {}, 'e/f': {} }, { 'a/b': {}, 'c/d': { mode: 1 } }]) {
      const read = readDeclaredExtensions({ extensions }, limits, memo);
      expect(read).not.toBe(first);
      expect(read.ids).toEqual(Object.keys(extensions));
      expect(read.settings).toEqual(Object.values(extensions));
    }
  });

  it('is read anew when it has settings, invalid or dropped ids', () => {
    expectReadAnew(true, [[{ 'a/b': { mode: 1 } }, limits], ...UNREPEATABLE]);
  });
});

describe('a repeated declaration, where nothing reads settings (metrics only)', () => {
  it('is the same object again when a map repeats valid ids in order, whatever their settings', () => {
    const memo = { last: undefined, settingsRead: false };
    const first = readDeclaredExtensions({ extensions: { 'a/b': { mode: 1 }, 'c/d': {} } }, limits, memo);
    expect(readDeclaredExtensions({ extensions: { 'a/b': { mode: 2 }, 'c/d': [] } }, limits, memo)).toBe(first);
    for (const extensions of [{ 'c/d': {}, 'a/b': {} }, { 'a/b': {} }, { 'a/b': {}, 'c/d': {}, 'e/f': {} }]) {
      const read = readDeclaredExtensions({ extensions }, limits, memo);
      expect(read).not.toBe(first);
      expect(read.ids).toEqual(Object.keys(extensions));
    }
  });

  it('is read anew when it has invalid or dropped ids', () => {
    expectReadAnew(false, UNREPEATABLE);
  });
});

describe('fingerprints', () => {
  it('are stable under key order and differ with content', () => {
    expect(fingerprint({ a: 1, b: { c: [1, 2], d: null } })).toBe(fingerprint({ b: { d: null, c: [1, 2] }, a: 1 }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
    expect(fingerprint({})).toMatch(/^[0-9a-f]{16}$/);
  });

  it('stay bounded on hostile settings', () => {
    let deep: unknown = {};
    for (let i = 0; i < 10_000; i++) deep = { deep };
    expect(canonicalJson(deep).length).toBeLessThan(2_000);
    const wide = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]));
    expect(canonicalJson(wide)).toContain('truncated');
    expect(fingerprint(wide)).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('required extensions', () => {
  it('reads the ids a -32021 answer names', () => {
    const data = { requiredCapabilities: { extensions: { 'com.example/replay': {} } } };
    expect(readRequiredExtensionIds(data, limits).ids).toEqual(['com.example/replay']);
    expect(readRequiredExtensionIds(undefined, limits).ids).toEqual([]);
  });
});
