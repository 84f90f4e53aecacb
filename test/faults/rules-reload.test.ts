import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChildCollector, getJson, runCli, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { probeHealth } from './health-probe.js';

/**
 * What an operator's mistake at the rules path does to a running collector on SIGHUP. Before the rules file was
 * read asynchronously, bounded and checked to be a regular file, a FIFO there blocked the event loop for ever
 * (`readFileSync` waits for a writer), and a 60 MB file was read whole and parsed as YAML on the event loop;
 * an alias bomb threw out of the YAML library (a stack trace from `extscope rules check`).
 */

const ONE_RULE = 'rules:\n  - { name: stale, kind: stale_instance }\n';
const TWO_RULES = 'rules:\n  - { name: stale, kind: stale_instance }\n  - { name: skew, kind: advertisement_skew }\n';
/** Nine aliases per level, six levels: 9^6 (531441) expansions of `a`. */
const ALIAS_BOMB = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
  'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
  'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
  'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
  'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
  'rules: [*f]',
  '',
].join('\n');

/** 60 MB of valid-looking rules. */
function hugeRules(): Buffer {
  const line = '  - { name: padding, kind: stale_instance, after: 15m, labels: { team: platform } }\n';
  return Buffer.from(`rules:\n${line.repeat(Math.ceil(60e6 / line.length))}`);
}

/** `count` valid rules, each with a long annotation: over 100 KB. */
function manyRules(count: number): string {
  return `rules:\n${Array.from({ length: count }, (_, index) => `  - { name: r${index}, kind: stale_instance, annotations: { summary: "${'x'.repeat(100)}" } }\n`).join('')}`;
}

/** Just under 1 MiB of rules: more of them than a file may hold. */
function nearLimitRules(): string {
  let text = 'rules:\n';
  for (let index = 0; text.length < 1_040_000; index++) text += `  - { name: r${index}, kind: stale_instance, after: 15m }\n`;
  return text;
}

interface LogLine {
  level: number;
  msg: string;
}

describe('rules reload never stalls the collector', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: ChildCollector | undefined;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    collector?.child.kill('SIGKILL');
    await collector?.exited;
    collector = undefined;
    await temp.cleanup();
  });

  it(
    'a 60 MB file, a FIFO, a directory, an alias bomb and a file of too many rules at the rules path: each one line in the log, the rules in force kept, /healthz answering throughout; valid files afterwards are loaded',
    { timeout: 120_000 },
    async () => {
      const file = join(temp.dir, 'rules.yaml');
      await writeFile(file, ONE_RULE);
      const running = await spawnCollector(join(temp.dir, 'c.db'), ['--rules', file]);
      collector = running;
      const evaluation = async (): Promise<{ rules: number; rulesFile: string }> =>
        (await getJson<{ evaluation: { rules: number; rulesFile: string } }>(`${running.url}/api/v1/alerts`)).body.evaluation;
      const failures = (): LogLine[] =>
        running.output
          .join('')
          .split('\n')
          .filter((line) => line.includes('rules reload failed'))
          .map((line) => JSON.parse(line) as LogLine);
      expect(await evaluation()).toMatchObject({ rules: 1, rulesFile: file });
      const prober = probeHealth(`${running.url}/healthz`);

      /** Puts `make`'s thing at the rules path, signals, and returns the reload's log line. */
      const reloadWith = async (make: (path: string) => Promise<void>): Promise<string> => {
        const before = failures().length;
        await rm(file, { recursive: true, force: true });
        await make(file);
        running.child.kill('SIGHUP');
        await expect.poll(() => failures().length, { timeout: 60_000, interval: 100 }).toBe(before + 1);
        expect(await evaluation()).toMatchObject({ rules: 1, rulesFile: file });
        return failures()[before]?.msg ?? '';
      };

      const huge = await reloadWith(async (path) => {
        // Written aside and renamed: the collector never sees it half written.
        await writeFile(`${path}.new`, hugeRules());
        await rename(`${path}.new`, path);
      });
      expect(huge).toMatch(
        new RegExp(
          `^rules reload failed, keeping the 1 rules in force: invalid rules file ${file}: is \\d{8} bytes: a rules file may hold at most 1 MiB \\(1048576 bytes\\)$`,
        ),
      );

      const fifo = await reloadWith(async (path) => void execFileSync('mkfifo', [path]));
      expect(fifo).toBe(`rules reload failed, keeping the 1 rules in force: invalid rules file ${file}: is a FIFO (named pipe), not a regular file`);

      const directory = await reloadWith(async (path) => void (await mkdir(path)));
      expect(directory).toBe(`rules reload failed, keeping the 1 rules in force: invalid rules file ${file}: is a directory, not a regular file`);

      const bomb = await reloadWith(async (path) => writeFile(path, ALIAS_BOMB));
      expect(bomb).toBe(
        `rules reload failed, keeping the 1 rules in force: invalid rules file ${file}:2:8: not valid YAML: aliases expand more than 100 times (an alias bomb); the file is not read`,
      );

      // Just under the size limit: parsed (on a worker thread) and checked, then refused for what it holds.
      const nearLimit = await reloadWith(async (path) => writeFile(path, nearLimitRules()));
      expect(nearLimit).toBe(
        `rules reload failed, keeping the 1 rules in force: invalid rules file ${file}:2:3: rules: must NOT have more than 1000 items (got a list)`,
      );

      // The reloads that failed held nothing up: the next valid files are read, a large one (parsed on a worker
      // thread) and a small one.
      await rm(file, { force: true });
      await writeFile(file, manyRules(900));
      running.child.kill('SIGHUP');
      await expect.poll(async () => (await evaluation()).rules, { timeout: 15_000, interval: 100 }).toBe(900);
      await writeFile(file, TWO_RULES);
      running.child.kill('SIGHUP');
      await expect.poll(async () => (await evaluation()).rules, { timeout: 15_000, interval: 100 }).toBe(2);

      const probed = await prober.stop();
      console.log(
        `[faults] /healthz during the reloads: ${probed.latencies.length} answers, slowest ${Math.round(probed.latencies.at(-1) ?? 0)} ms, ${probed.failures.length} failures`,
      );
      expect(probed.failures).toEqual([]);
      expect(probed.latencies.length).toBeGreaterThan(0);
      expect(running.child.exitCode).toBe(null);
    },
  );

  it('extscope rules check reports each as one FILE[:LINE:COL]: line, exit 1, no stack trace; the collector refuses to start with that line', async () => {
    const huge = join(temp.dir, 'huge.yaml');
    await writeFile(huge, hugeRules());
    const fifo = join(temp.dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    const bomb = join(temp.dir, 'bomb.yaml');
    await writeFile(bomb, ALIAS_BOMB);
    const long = join(temp.dir, 'long.yaml');
    await writeFile(long, `rules:\n  - name: a\n    kind: ${'x'.repeat(100_000)}\n`);
    const result = await runCli(['rules', 'check', huge, fifo, bomb, long]);
    expect(result.code).toBe(1);
    const errors = result.stderr.split('\n').filter((line) => line.startsWith(temp.dir));
    expect(errors).toEqual([
      expect.stringMatching(new RegExp(`^${huge}: is \\d{8} bytes: a rules file may hold at most 1 MiB \\(1048576 bytes\\)$`)),
      `${fifo}: is a FIFO (named pipe), not a regular file`,
      `${bomb}:2:8: not valid YAML: aliases expand more than 100 times (an alias bomb); the file is not read`,
      `${long}:3:11: rules[0].kind: unknown rule kind "${'x'.repeat(59)}… (100002 characters): must be one of advertisement_skew, extension_withdrawn, negotiation_drop, client_regression, missing_capability, new_extension_id, stale_instance`,
    ]);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    // Never a whole value: the 100 000-character kind is quoted in 60 characters.
    expect(result.stderr.length).toBeLessThan(2000);
    // The collector refuses to start on each, with the same one line (and opens no database).
    for (const [path, reason] of [
      [fifo, ': is a FIFO (named pipe), not a regular file'],
      [bomb, ':2:8: not valid YAML: aliases expand more than 100 times (an alias bomb); the file is not read'],
    ] as const) {
      const started = await runCli(['collector', '--port', '0', '--db', join(temp.dir, 'never.db'), '--rules', path]);
      expect({ code: started.code, stderr: started.stderr }).toEqual({ code: 2, stderr: `extscope collector: invalid rules file ${path}${reason}\n` });
    }
    expect(existsSync(join(temp.dir, 'never.db'))).toBe(false);
  });
});
