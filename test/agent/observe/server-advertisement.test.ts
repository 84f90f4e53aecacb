import { describe, expect, it } from 'vitest';
import { ServerAdvertisements } from '../../../agent/observe/server-advertisement.js';

const LIMITS = { maxIds: 64, maxIdLength: 128 };

describe('ServerAdvertisements', () => {
  it('gives a fresh server per request the same advertisement as the last one with that extensions object, name and version', () => {
    const advertisements = new ServerAdvertisements(LIMITS);
    const extensions = { 'a/x': {}, 'b/y': { mode: 'fast' } };
    const server = (name: string, version: string, map: object = extensions) => ({
      getCapabilities: () => ({ extensions: map }),
      _serverInfo: { name, version },
    });
    const first = advertisements.read(server('s', '1'));
    expect(first).toMatchObject({ identity: { name: 's', version: '1' }, extensions: { ids: ['a/x', 'b/y'] } });
    expect(advertisements.read(server('s', '1'))).toBe(first);
    const renamed = advertisements.read(server('t', '1'));
    expect(renamed).not.toBe(first);
    expect(renamed.identity).toEqual({ name: 't', version: '1' });
    expect(renamed.extensions).toBe(first.extensions); // read once per extensions object
    expect(advertisements.read(server('s', '2')).identity).toEqual({ name: 's', version: '2' });
    const copy = advertisements.read(server('s', '1', { ...extensions }));
    expect(copy).not.toBe(first);
    expect(copy.fingerprints).toEqual(first.fingerprints);
  });

  it('gives servers whose factory builds the capabilities anew the same advertisement while the map repeats the last one read', () => {
    const advertisements = new ServerAdvertisements(LIMITS);
    const server = (map: object, version = '1') => ({ getCapabilities: () => ({ extensions: map }), _serverInfo: { name: 's', version } });
    const first = advertisements.read(server({ 'a/x': {}, 'b/y': {} }));
    expect(advertisements.read(server({ 'a/x': {}, 'b/y': {} }))).toBe(first);
    expect(advertisements.read(server({ 'a/x': {}, 'b/y': {} }, '2')).extensions).toBe(first.extensions);
    // A map with settings in between (never the memo's) leaves the last repeatable one in place.
    advertisements.read(server({ 'c/z': { mode: 'fast' } }));
    expect(advertisements.read(server({ 'a/x': {}, 'b/y': {} }, '2')).extensions).toBe(first.extensions);
    // Anything that differs is read as its own: other ids, another order, settings, an invalid id.
    for (const map of [{ 'a/x': {} }, { 'b/y': {}, 'a/x': {} }, { 'a/x': {}, 'b/y': { mode: 'fast' } }, { 'a/x': {}, 'b/y': {}, 'not an id': {} }]) {
      const read = advertisements.read(server(map));
      expect(read.extensions).not.toBe(first.extensions);
      expect(read.extensions.ids.length + read.extensions.invalid).toBe(Object.keys(map).length);
    }
    const settled = advertisements.read(server({ 'b/y': {}, 'a/x': {} }));
    expect(settled.extensions.ids).toEqual(['b/y', 'a/x']);
    expect(advertisements.read(server({ 'b/y': {}, 'a/x': {} }))).toBe(settled);
  });
});
