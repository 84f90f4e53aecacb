import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../../agent/version.js';

describe('the instrumentation scope', () => {
  it('is named and versioned as package.json says', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
    expect([PACKAGE_NAME, PACKAGE_VERSION]).toEqual([pkg.name, pkg.version]);
  });
});
