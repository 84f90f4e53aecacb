/**
 * The README as a newcomer reads it: the commands it gives exist, every variable the collector reads is
 * documented, and the screenshot it shows is in the repository.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../../collector/config.js';
import { ROOT } from '../support/processes.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('README.md', () => {
  it('gives exactly two commands to start with, and both are package scripts', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'));
    const block = /```sh\n([\s\S]*?)```/.exec(quickStart)![1]!;
    const commands = block.split('\n').filter((line) => line.trim() !== '').map((line) => line.replace(/#.*$/, '').trim());
    expect(commands).toEqual(['npm install && npm start', 'npm test']);
    expect(scripts['start']).toBeDefined();
    expect(scripts['test']).toBeDefined();
    expect(readme).toContain('npm run demo');
    expect(scripts['demo']).toBe('node scripts/demo.mjs');
  });

  it('documents every environment variable the collector reads (here or in a page of docs/)', () => {
    const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => readFileSync(join(ROOT, 'docs', name), 'utf8'));
    const text = [readme, ...docs].join('\n');
    const missing = ENVIRONMENT.map((variable) => variable.name).filter((name) => !text.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it('shows the matrix screenshot from docs/img, which exists', () => {
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((match) => match[1]!);
    expect(images).toContain('docs/img/matrix.png');
    for (const image of images) expect(existsSync(join(ROOT, image)), image).toBe(true);
  });

  it('refers to nothing outside the repository by path', () => {
    expect(readme).not.toMatch(/\]\(\/|\]\(\.\.\/|file:\/\/|\/work\//);
  });
});
