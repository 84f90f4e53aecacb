/**
 * The READMEs as a newcomer reads them, in the repository or on a package's page on npm: the commands they give
 * exist, every variable the collector reads is documented, and every link and image is an absolute address whose
 * file is in the repository (a relative one would break outside it).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../../collector/config.js';
import { GRPC_EXPORTERS } from '../../agent/register/exporters.js';
import { ROOT } from '../support/processes.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

const REPOSITORY = 'https://github.com/extscope/extscope/';
const RAW = 'https://raw.githubusercontent.com/extscope/extscope/main/';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/**
 * Links and images of a Markdown text that would break outside the repository: relative ones, in-page anchors with
 * no heading, and addresses into this repository (on main) naming a file or folder it does not have.
 */
function brokenLinks(markdown: string): string[] {
  const headings = new Set([...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!)));
  const targets = [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
  return targets.filter((target) => {
    if (target.startsWith('#')) return !headings.has(target.slice(1));
    const path = target.startsWith(RAW)
      ? target.slice(RAW.length)
      : /^https:\/\/github\.com\/extscope\/extscope\/(?:blob|tree)\/main\/([^#?]*)/.exec(target)?.[1];
    if (path !== undefined) return !existsSync(join(ROOT, path));
    return (
      !/^https?:\/\//.test(target) ||
      (target.startsWith(REPOSITORY) && !/^https:\/\/github\.com\/extscope\/extscope\/(issues|blob\/main|tree\/main)/.test(target))
    );
  });
}
const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('README.md', () => {
  it('gives exactly two commands to start with, and both are package scripts', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'));
    const block = /```sh\n([\s\S]*?)```/.exec(quickStart)![1]!;
    const commands = block
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => line.replace(/#.*$/, '').trim());
    expect(commands).toEqual(['npm install && npm start', 'npm test']);
    expect(scripts['start']).toBeDefined();
    expect(scripts['test']).toBeDefined();
    expect(readme).toContain('npm run demo');
    expect(scripts['demo']).toBe('node scripts/demo.mjs');
  });

  it('documents every environment variable the collector reads (here or in a page of docs/)', () => {
    const docs = readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => readFileSync(join(ROOT, 'docs', name), 'utf8'));
    const text = [readme, ...docs].join('\n');
    const missing = ENVIRONMENT.map((variable) => variable.name).filter((name) => !text.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it('shows the matrix screenshot from docs/img by its absolute address, and the file exists', () => {
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((match) => match[1]!);
    expect(images).toEqual([`${RAW}docs/img/matrix.png`]);
    expect(existsSync(join(ROOT, 'docs/img/matrix.png'))).toBe(true);
  });

  it('links only by absolute address or to its own headings, each to a file that exists', () => {
    expect(brokenLinks(readme)).toEqual([]);
    expect(readme).not.toMatch(/file:\/\/|\/work\//);
  });

  it('says how to install each package: from the tarballs a clone packs (a package script) or a release holds, from the registry once published, with Docker', () => {
    const install = readme.slice(readme.indexOf('## Install'), readme.indexOf('## Quick start'));
    expect(install).toContain('npm install && npm run pack');
    expect(scripts['pack']).toBe('npm run build && node scripts/pack.mjs');
    expect(install).toContain('npm install /path/to/extscope-agent-0.1.0.tgz @opentelemetry/api');
    expect(install).toContain('npm install /path/to/extscope-0.1.0.tgz /path/to/extscope-agent-0.1.0.tgz');
    expect(install).toContain('npx @extscope/agent wrap -- python server.py');
    expect(install).toMatch(/once the packages are published there/);
    expect(install).toContain('.github/workflows/release.yml');
    expect(install).toContain('npm install @extscope/agent @opentelemetry/api');
    expect(install).toContain('node --import @extscope/agent/register server.js');
    expect(install).toContain('npx extscope collector');
    expect(install).toContain('docker compose up');
  });
});

describe('agent/README.md', () => {
  const agentReadme = readFileSync(join(ROOT, 'agent', 'README.md'), 'utf8');

  it('links only by absolute address or to its own headings, each to a file that exists', () => {
    expect(brokenLinks(agentReadme)).toEqual([]);
  });

  it("sits beside a copy of the repository's licence, which the agent package ships", () => {
    expect(readFileSync(join(ROOT, 'agent', 'LICENSE'), 'utf8')).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
  });

  it('gives the install command, the zero-code entry and the installed size it measured', () => {
    expect(agentReadme).toContain('npm install @extscope/agent @opentelemetry/api');
    expect(agentReadme).toContain('node --import @extscope/agent/register server.js');
    for (const name of Object.values(GRPC_EXPORTERS)) expect(agentReadme).toContain(name);
    expect(agentReadme).toMatch(/\d+ packages/);
  });
});
