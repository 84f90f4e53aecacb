/**
 * The code maps a newcomer reads first (the README's "Code layout and tests" and docs/architecture.md's "Where things
 * are") name every folder of the code, as the contract page is kept equal to the tables: a folder added without a
 * line in both maps fails here.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes.js';

/** Folders of the code, three levels deep at most below `agent/`, `collector/` and `dashboard/src/` (builds excluded). */
function folders(top: string, depth = 3): string[] {
  const found: string[] = [];
  const walk = (dir: string, level: number): void => {
    if (level > depth) return;
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (name === 'dist' || name === 'node_modules' || name.startsWith('.') || !statSync(path).isDirectory()) continue;
      found.push(relative(ROOT, path));
      walk(path, level + 1);
    }
  };
  walk(join(ROOT, top), 1);
  return found;
}

/** The first fenced block after `heading`: the map. */
function map(file: string, heading: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const at = text.indexOf(heading);
  expect(at, `${file} has the heading ${heading}`).toBeGreaterThanOrEqual(0);
  return /```\n([\s\S]*?)```/.exec(text.slice(at))![1]!;
}

const CODE = [...folders('agent'), ...folders('collector'), ...folders('dashboard/src')];

describe('the code maps', () => {
  it('find folders to check (the walk itself works)', () => {
    expect(CODE).toEqual(expect.arrayContaining(['agent/observe', 'collector/store/common', 'collector/store/sqlite/writer', 'dashboard/src/views']));
  });

  for (const [file, heading] of [
    ['README.md', '## Code layout and tests'],
    ['docs/architecture.md', '## Where things are'],
  ] as const) {
    it(`${file} names every folder of agent/, collector/ and dashboard/src/`, () => {
      const text = map(file, heading);
      // A folder is named by its own name followed by a slash (`writer/`, `otlp-grpc/`), as the maps write them.
      const missing = CODE.filter((folder) => !text.includes(`${folder.split('/').at(-1)}/`));
      expect(missing).toEqual([]);
    });
  }
});
