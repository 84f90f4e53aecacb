import { describe, expect, it } from 'vitest';
import { ServerAdvertisements } from '../../../agent/observe/server-advertisement.js';

const LIMITS = { maxIds: 64, maxIdLength: 128 };

describe('ServerAdvertisements', () => {
  it('gives a fresh server per request the same advertisement as the last one with that extensions object, name and version', () => {
    const advertisements = new ServerAdvertisements(LIMITS);
    const extensions = { 'a/x': {}, 'b/y': { mode: 'fast' } };
    const server = (name: string, version: string, map: object = extensions) => ({ getCapabilities: () => ({ extensions: map }), _serverInfo: { name, version } });
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
});
