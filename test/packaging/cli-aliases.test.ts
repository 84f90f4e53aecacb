/**
 * `extscope wrap`, `proxy` and `run` are aliases of the agent package's own commands (`extscope-agent`): both
 * programs list them in the same words and hand them to the same code, so a command's help and its mistakes read
 * the same, byte for byte, with the same exit code, whichever program runs it.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes.js';

const PROGRAMS = { extscope: 'dist/bin/extscope.js', 'extscope-agent': 'agent/dist/agent/bin/extscope-agent.js' };

function cli(program: keyof typeof PROGRAMS, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [join(ROOT, PROGRAMS[program]), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The lines of a program's `--help` that list wrap, proxy and run. */
const agentLines = (help: string): string[] => help.split('\n').filter((line) => /^ {2}(wrap|proxy|run) /.test(line));

describe('extscope wrap, proxy and run: the agent package commands, dispatched in one place', () => {
  it('both programs list wrap, proxy and run with the same lines', () => {
    const collector = cli('extscope', ['--help']);
    const agent = cli('extscope-agent', ['--help']);
    expect([collector.code, agent.code]).toEqual([0, 0]);
    expect(agentLines(agent.stdout).map((line) => line.split(' ', 3)[2])).toEqual(['wrap', 'proxy', 'run']);
    expect(agentLines(collector.stdout)).toEqual(agentLines(agent.stdout));
  });

  for (const command of ['wrap', 'proxy', 'run']) {
    it(`${command} --help prints the same usage from both programs (exit 0)`, () => {
      const collector = cli('extscope', [command, '--help']);
      const agent = cli('extscope-agent', [command, '--help']);
      expect(collector.code).toBe(0);
      expect(collector.stdout).toMatch(new RegExp(`^Usage: extscope(-agent)? ${command} `));
      expect(agent).toEqual(collector);
    });
  }

  it('a mistake in proxy arguments is the same one line and exit code 2 from both programs', () => {
    const collector = cli('extscope', ['proxy', '--listen', '23731', '--upstream', 'http://127.0.0.1:3000']);
    const agent = cli('extscope-agent', ['proxy', '--listen', '23731', '--upstream', 'http://127.0.0.1:3000']);
    expect(collector.code).toBe(2);
    expect(collector.stderr).toContain("--listen takes a host and a port: --listen 127.0.0.1:23731 (this machine only), got '23731'");
    expect(agent).toEqual(collector);
  });

  it('a command neither program has: one line naming the commands, exit code 2', () => {
    const collector = cli('extscope', ['proxi']);
    const agent = cli('extscope-agent', ['proxi']);
    expect([collector.code, agent.code]).toEqual([2, 2]);
    expect(collector.stderr).toBe('extscope: unknown command "proxi": the commands are collector, wrap, proxy, run, rules and db (extscope --help)\n');
    expect(agent.stderr).toBe('extscope-agent: unknown command "proxi": the commands are wrap, proxy and run (extscope-agent --help)\n');
  });
});
