/**
 * The release path. `npm publish --dry-run` of both packages, as the release workflow publishes them: each tarball
 * holds what it must and nothing else, and npm corrects nothing in either manifest (a `bin` path it rewrites is a
 * command a user would not get). The workflow in .github/workflows/release.yml runs the suite on a version tag,
 * then publishes both with provenance (the agent first) and builds the container image.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONTENTS, publishDryRun } from '../support/pack.mjs';
import { ROOT } from '../support/processes.js';

interface Manifest {
  name: string;
  version: string;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
}
const collectorPkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Manifest;
const agentPkg = JSON.parse(await readFile(join(ROOT, 'agent', 'package.json'), 'utf8')) as Manifest;

describe('npm publish --dry-run', () => {
  for (const [which, manifest] of [
    ['agent', agentPkg],
    ['collector', collectorPkg],
  ] as const) {
    it(
      `of the ${which} (${manifest.name}) passes, npm correcting nothing, and its tarball holds its build and nothing else`,
      { timeout: 180_000 },
      async () => {
        const published = await publishDryRun(which);
        expect([published.name, published.version]).toEqual([manifest.name, manifest.version]);
        expect(published.files.filter((path) => !CONTENTS[which].allowed.some((pattern) => pattern.test(path)))).toEqual([]);
        for (const path of CONTENTS[which].required) expect(published.files).toContain(path);
        expect(published.stderr).not.toMatch(/auto-corrected|errors corrected|EBADENGINE/);
        // Each command's file is in the tarball.
        for (const file of Object.values(manifest.bin ?? {})) expect(published.files).toContain(file);
      },
    );
  }

  it('the agent has the extscope-agent command; the collector has extscope and depends on the agent at the same version', () => {
    expect(agentPkg.bin).toEqual({ 'extscope-agent': 'dist/agent/bin/extscope-agent.js' });
    expect(collectorPkg.bin).toEqual({ extscope: 'dist/bin/extscope.js' });
    expect(collectorPkg.dependencies?.[agentPkg.name]).toBe(agentPkg.version);
    expect(collectorPkg.version).toBe(agentPkg.version);
  });
});

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Workflow {
  on: { push: { tags: string[] } };
  jobs: Record<string, { needs?: string; permissions?: Record<string, string>; steps: Step[] }>;
}

describe('the release workflow', () => {
  it('on a version tag runs the suite, then publishes both packages with provenance (the agent first) and builds the image', async () => {
    const workflow = parse(await readFile(join(ROOT, '.github/workflows/release.yml'), 'utf8')) as Workflow;
    expect(workflow.on.push.tags).toEqual(['v*.*.*']);
    const { suite, publish, image } = workflow.jobs;
    expect(suite?.steps.map((step) => step.run).filter(Boolean)).toEqual(['sudo bash .ci/run']);

    expect(publish?.needs).toBe('suite');
    expect(publish?.permissions?.['id-token']).toBe('write');
    const publishes = publish!.steps.map((step) => step.run ?? '').filter((run) => run.startsWith('npm publish'));
    expect(publishes).toEqual([
      'npm publish --provenance --access public --ignore-scripts --workspace agent',
      'npm publish --provenance --access public --ignore-scripts',
    ]);
    // The tag must name the version both manifests carry.
    const check = publish!.steps.find((step) => step.run?.includes('GITHUB_REF_NAME'))?.run ?? '';
    expect(check).toContain("require('./package.json').version");
    expect(check).toContain("require('./agent/package.json').version");

    expect(image?.needs).toBe('suite');
    const build = image!.steps.find((step) => step.uses?.startsWith('docker/build-push-action@'));
    expect(build?.with).toMatchObject({ context: '.', push: true });
  });
});
