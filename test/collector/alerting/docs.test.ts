/** docs/alerting.md holds: its example rules file is valid, and its Prometheus rule is the one promtool tests. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultRules } from '../../../collector/alerting/engine.js';
import { parseRules } from '../../../collector/alerting/rules/load.js';
import { ROOT } from '../../support/processes.js';
import { runCli, tempDir } from '../helpers/collector.js';

const PROMTOOL = '/usr/bin/promtool';
const run = promisify(execFile);

async function docs(): Promise<string> {
  return readFile(join(ROOT, 'docs', 'alerting.md'), 'utf8');
}

/** The first fenced yaml block after `marker` (or after the heading `marker`). */
function yamlAfter(text: string, marker: string): string {
  const start = text.indexOf(marker);
  expect(start, `${marker} in docs/alerting.md`).toBeGreaterThanOrEqual(0);
  const match = /```yaml\n([\s\S]*?)```/.exec(text.slice(start));
  expect(match, `a yaml block after ${marker}`).not.toBeNull();
  return match?.[1] ?? '';
}

describe('docs/alerting.md', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('its example rules file passes extscope rules check, with every kind', async () => {
    const file = join(temp.dir, 'example.yaml');
    const example = yamlAfter(await docs(), '<!-- rules example -->');
    await writeFile(file, example);
    const result = await runCli(['rules', 'check', file]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('SUCCESS: 8 rules found');
    const parsed = parseRules(example, file);
    expect(parsed.ok && new Set(parsed.rules.rules.map((rule) => rule.kind)).size).toBe(7);
  });

  it('the built-in rules it lists are the ones a collector without a rules file evaluates', async () => {
    const listed = parseRules(yamlAfter(await docs(), '### Built-in rules'), 'docs');
    expect(listed.ok).toBe(true);
    if (listed.ok) expect(listed.rules.rules).toEqual(defaultRules().rules);
  });

  it('its Prometheus rule is the rule file promtool checks and unit-tests', async () => {
    if (!existsSync(PROMTOOL)) throw new Error(`${PROMTOOL} is missing: this test needs Debian's prometheus package (apt-get install -y prometheus)`);
    const path = join(ROOT, 'docs', 'prometheus', 'extscope-negotiation-drop.rules.yml');
    expect(yamlAfter(await docs(), '<!-- prometheus rule -->')).toBe(await readFile(path, 'utf8'));
    const check = await run(PROMTOOL, ['check', 'rules', path]);
    expect(check.stdout).toContain('SUCCESS: 1 rules found');
    const tests = join(ROOT, 'test', 'collector', 'alerting', 'prometheus');
    const unit = await run(PROMTOOL, ['test', 'rules', 'negotiation-drop.test.yml'], { cwd: tests });
    expect(unit.stdout).toContain('SUCCESS');
  });
});
