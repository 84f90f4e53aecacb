import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COLLECTOR_VERSION } from '../../collector/version.js';

describe('the collector version', () => {
  it('is the version package.json says', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(COLLECTOR_VERSION).toBe(pkg.version);
  });
});
