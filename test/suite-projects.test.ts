/**
 * `npm test` runs every test file: vitest itself (its node API, reading vitest.config.ts) says which project each
 * file of test/ falls into, and each falls into exactly one. A new file cannot drop out of the suite, nor run twice;
 * a unit pattern matching nothing (a file moved or renamed) is stale.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Vitest, createVitest } from 'vitest/node';
import { ALONE_TESTS, UNIT_TESTS } from '../vitest.config.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every `*.test.ts` under test/, walked on disk (not through any glob vitest uses). */
function testFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return path === 'test/bench' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the test projects', () => {
  let vitest: Vitest;
  /** Project names by file, as vitest plans a plain `vitest run`. */
  const projectsOf = new Map<string, string[]>();

  beforeAll(async () => {
    vitest = await createVitest('test', { root: ROOT, config: join(ROOT, 'vitest.config.ts'), watch: false });
    for (const spec of await vitest.globTestSpecifications()) {
      const file = relative(ROOT, spec.moduleId);
      projectsOf.set(file, [...(projectsOf.get(file) ?? []), spec.project.name]);
    }
  });
  afterAll(async () => {
    await vitest?.close();
  });

  it('are unit, system and alone', () => {
    expect(vitest.projects.map((project) => project.name).sort()).toEqual(['alone', 'system', 'unit']);
  });

  it('run every test file of test/ in exactly one of them', () => {
    const files = testFiles('test');
    expect(files.length).toBeGreaterThan(100);
    const misplaced = files.filter((file) => projectsOf.get(file)?.length !== 1).map((file) => `${file}: ${(projectsOf.get(file) ?? ['none']).join(', ')}`);
    expect(misplaced).toEqual([]);
    expect([...projectsOf.keys()].filter((file) => !files.includes(file))).toEqual([]);
  });

  it('list no unit or alone file or folder that matches nothing', () => {
    for (const [name, patterns] of [
      ['unit', UNIT_TESTS],
      ['alone', ALONE_TESTS],
    ] as const) {
      const files = [...projectsOf].filter(([, names]) => names.includes(name)).map(([file]) => file);
      expect(patterns.filter((pattern) => !files.some((file) => matches(pattern, file)))).toEqual([]);
    }
  });
});

/** `pattern` (a file, or `folder/*.test.ts`: the folder's own files) names `file`. */
function matches(pattern: string, file: string): boolean {
  const folder = /^(.*\/)\*\.test\.ts$/.exec(pattern)?.[1];
  return folder === undefined ? pattern === file : file.startsWith(folder) && !file.slice(folder.length).includes('/');
}
