import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getJson, runCli, spawnCollector, tempDir } from '../helpers/collector.js';

const GOOD = `# every kind, with options
interval: 15s
rules:
  - name: skew
    kind: advertisement_skew
    for: 10m
    severity: critical
    labels: { team: mcp }
    annotations: { runbook: "https://example.com/{{ $labels.service }}" }
  - name: withdrawn
    kind: extension_withdrawn
    level: instance
    scope: { services: [shop] }
  - name: drop
    kind: negotiation_drop
    window: 1h
    baseline: 1d
    drop: 15
    minRequests: 50
    perClient: true
  - { name: regression, kind: client_regression, minRequests: 5 }
  - { name: required, kind: missing_capability, ratePerMinute: 0.5, window: 10m }
  - { name: new-ids, kind: new_extension_id, scope: { clients: [alpha] } }
  - { name: stale, kind: stale_instance, after: 15m }
`;

/** One broken file with one error of each kind, each on a line of its own (line numbers are 1-based). */
const BROKEN = [
  'rules:', //                                 1
  '  - name: a', //                             2
  '    kind: advertisement_skew', //            3
  '    for: ten minutes', //                    4  not a duration
  '    minInstances: 1', //                     5  below the minimum
  '  - name: a', //                             6  duplicate name
  '    kind: negotiation_drop', //              7
  '    threshold: 3', //                        8  unknown field
  '    severity: urgent', //                    9  not a severity
  '  - name: c', //                            10
  '    kind: share_drop', //                   11  unknown kind
  '  - kind: stale_instance', //               12  no name
  '    scope: { clients: [x] }', //            13  scope the kind has not
  '    labels: { severity: high }', //         14  reserved label
  '  - name: e', //                            15
  '    kind: missing_capability', //           16
  '    window: 0m', //                         17  empty window
  '    ratePerMinute: many', //                18  not a number
].join('\n');

describe('extscope rules check', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('accepts valid files (YAML with every kind, and JSON) and counts their rules, exit 0', async () => {
    const file = join(temp.dir, 'rules.yaml');
    await writeFile(file, GOOD);
    const json = join(temp.dir, 'rules.json');
    await writeFile(
      json,
      JSON.stringify(
        {
          rules: [
            { name: 'skew', kind: 'advertisement_skew', for: '5m' },
            { name: 'stale', kind: 'stale_instance' },
          ],
        },
        null,
        2,
      ),
    );
    const result = await runCli(['rules', 'check', file, json]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`Checking ${file}\n  SUCCESS: 7 rules found`);
    expect(result.stdout).toContain(`Checking ${json}\n  SUCCESS: 2 rules found`);
    expect(result.code).toBe(0);
  });

  it('names every error with its line and reason, exit 1', async () => {
    const file = join(temp.dir, 'broken.yaml');
    await writeFile(file, BROKEN);
    const result = await runCli(['rules', 'check', file]);
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith(`${file}:`));
    const byLine = lines.map((line) => line.slice(file.length + 1).replace(/^(\d+):\d+: /, '$1 '));
    expect(byLine).toEqual([
      '4 rules[0].for: must be a duration such as 30s, 10m, 1h or 7d (got "ten minutes")',
      '5 rules[0].minInstances: must be >= 2 (got 1)',
      '6 rules[1].name: duplicate rule name "a" (also rules[0])',
      '8 rules[1].threshold: unknown field (not an option of this rule kind)',
      '9 rules[1].severity: must be one of info, warning, critical (got "urgent")',
      '11 rules[2].kind: unknown rule kind "share_drop": must be one of advertisement_skew, extension_withdrawn, negotiation_drop, client_regression, missing_capability, new_extension_id, stale_instance',
      '12 rules[3]: missing required field "name"',
      '13 rules[3].scope.clients: stale_instance alerts are not about clients: it may be scoped by services only',
      '14 rules[3].labels.severity: label "severity" is set by extscope (use the rule\'s severity field)',
      '17 rules[4].window: must be longer than 0 (a window of no time holds nothing)',
      '18 rules[4].ratePerMinute: must be a number (got "many")',
    ]);
  });

  it('reports a YAML syntax error with its line, and an empty or unreadable file (which the collector refuses too)', async () => {
    const syntax = join(temp.dir, 'syntax.yaml');
    await writeFile(syntax, 'rules:\n  - name: a\n    kind: [stale_instance\n');
    const empty = join(temp.dir, 'empty.yaml');
    await writeFile(empty, '# nothing\n');
    const missing = join(temp.dir, 'missing.yaml');
    const result = await runCli(['rules', 'check', syntax, empty, missing]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`${syntax}:4:1: not valid YAML: `));
    expect(result.stderr).toContain(`${empty}:1:1: the file is empty: expected a mapping with a "rules" list`);
    expect(result.stderr).toContain(`${missing}: cannot be read:`);
    const collector = await runCli(['collector', '--port', '0', '--db', join(temp.dir, 'x.db'), '--rules', missing]);
    expect(collector.code).toBe(2);
    expect(collector.stderr).toContain(`extscope collector: invalid rules file ${missing}: cannot be read: ENOENT`);
  });

  it('names errors in a JSON file by line too', async () => {
    const file = join(temp.dir, 'rules.json');
    await writeFile(
      file,
      '{\n  "rules": [\n    { "name": "a", "kind": "stale_instance", "after": "soon" },\n    { "name": "b", "kind": "negotiation_drop", "drop": -5 }\n  ]\n}\n',
    );
    const result = await runCli(['rules', 'check', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file}:3:55: rules[0].after: must be a duration such as 30s, 10m, 1h or 7d (got "soon")`);
    expect(result.stderr).toContain(`${file}:4:56: rules[1].drop: must be > 0 (got -5)`);
    // One error per mistake: a duration that is not one is not also called empty.
    expect(result.stderr.split('\n').filter((line) => line.startsWith(`${file}:`))).toHaveLength(2);
  });

  it('the collector refuses to start on that file with the same errors', async () => {
    const file = join(temp.dir, 'broken.yaml');
    await writeFile(file, BROKEN);
    const check = await runCli(['rules', 'check', file]);
    const errors = check.stderr.split('\n').filter((line) => line.startsWith(`${file}:`));
    expect(errors).toHaveLength(11);
    for (const [args, env] of [
      [['--rules', file], {}],
      [[], { EXTSCOPE_RULES: file }],
    ] as const) {
      const collector = await runCli(['collector', '--port', '0', '--db', join(temp.dir, 'x.db'), ...args], env);
      expect(collector.code).toBe(2);
      expect(collector.stderr).toContain(`extscope collector: invalid rules file ${file} (11 errors):\n${errors.join('\n')}\n`);
    }
  });

  it('SIGHUP reloads the rules file; an invalid reload keeps the rules in force and logs why', async () => {
    const file = join(temp.dir, 'rules.yaml');
    await writeFile(file, 'rules:\n  - { name: stale, kind: stale_instance }\n');
    const collector = await spawnCollector(join(temp.dir, 'c.db'), ['--rules', file]);
    const rules = async (): Promise<unknown> =>
      (await getJson<{ evaluation: { rules: number; rulesFile: string } }>(`${collector.url}/api/v1/alerts`)).body.evaluation;
    try {
      expect(await rules()).toMatchObject({ rules: 1, rulesFile: file, intervalSeconds: 30 });
      await writeFile(file, GOOD);
      collector.child.kill('SIGHUP');
      await expect.poll(rules, { timeout: 15_000, interval: 100 }).toMatchObject({ rules: 7, intervalSeconds: 15 });
      await writeFile(file, BROKEN);
      collector.child.kill('SIGHUP');
      await expect.poll(() => collector.output.join(''), { timeout: 15_000, interval: 100 }).toContain('rules reload failed, keeping the 7 rules in force');
      expect(collector.output.join('')).toContain('rules[1].threshold: unknown field');
      expect(await rules()).toMatchObject({ rules: 7 });
      // Still serving, and still alive after the signals.
      expect(collector.child.exitCode).toBe(null);
    } finally {
      collector.child.kill('SIGTERM');
      await collector.exited;
    }
  });
});
