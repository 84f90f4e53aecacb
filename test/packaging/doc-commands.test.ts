/**
 * The shell commands the READMEs and docs/ give, as a reader copies them: every `extscope`, `extscope-agent` (`npx
 * @extscope/agent`) and `npm run demo` command names only options its own `--help` lists (each help is run here, from
 * the build), every `npm run` script exists, and every file of the repository a command names (a script, a
 * configuration) is there. What runs here without a service is run: `extscope rules check` of the repository's
 * rules files.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes.js';

const DOCUMENTS = [
  'README.md',
  'agent/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
/** Words a command of ours starts with (after `npx`'s own options and any VAR=value). */
const SHELL_START = /^(?:[A-Z_]+=\S*\s+)*(?:extscope|extscope-agent|npx|npm|node|bash|docker|otelcol-contrib|kill|pkill|curl|sqlite3|git)\b/;

interface Command {
  document: string;
  text: string;
}

/** Shell lines of a Markdown text: fenced sh/bash blocks, and indented lines that start as a command. */
function shellCommands(document: string): Command[] {
  const markdown = readFileSync(join(ROOT, document), 'utf8');
  const lines: string[] = [];
  for (const match of markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)) lines.push(...match[1]!.split('\n'));
  for (const match of markdown.matchAll(/^ {4}(\S.*)$/gm)) if (SHELL_START.test(match[1]!)) lines.push(match[1]!);
  // Continuation lines joined; comments and a `$ ` prompt dropped.
  const joined = lines.join('\n').replace(/\\\n\s*/g, ' ');
  return joined
    .split('\n')
    .map((line) =>
      line
        .replace(/^\$ /, '')
        .replace(/(^|\s)#.*$/, '')
        .trim(),
    )
    .filter((line) => line !== '' && SHELL_START.test(line))
    .flatMap((line) => line.split(/\s*(?:&&|;|\|\|?)\s*/))
    .map((text) => ({ document, text: text.replace(/^(?:[A-Z_]+=\S*\s+)+/, '').trim() }))
    .filter((command) => command.text !== '');
}

const COMMANDS = DOCUMENTS.flatMap(shellCommands);

/** Shell words, quotes removed (the docs quote only simple strings). */
const words = (text: string): string[] => [...text.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3]!);

const helps = new Map<string, string>();
/** The `--help` of one command of ours, run from the build. */
function helpOf(program: 'extscope' | 'extscope-agent' | 'demo', subcommand: string[]): string {
  const key = `${program} ${subcommand.join(' ')}`;
  let text = helps.get(key);
  if (text === undefined) {
    const file = { extscope: 'dist/bin/extscope.js', 'extscope-agent': 'agent/dist/agent/bin/extscope-agent.js', demo: 'scripts/demo.mjs' }[program];
    text = execFileSync(process.execPath, [join(ROOT, file), ...subcommand, '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    helps.set(key, text);
  }
  return text;
}

/** Each of our commands in a line: which program, its subcommand, and the options given to it (not to a wrapped command). */
function ourInvocation(text: string): { program: 'extscope' | 'extscope-agent' | 'demo'; subcommand: string[]; options: string[] } | undefined {
  let argv = words(text);
  if (argv[0] === 'npx') {
    argv = argv.slice(1);
    // npx's own options: -y, --no-install, --package <spec> (then the command names the program).
    while (argv[0]?.startsWith('-') === true) argv = argv[0] === '--package' ? argv.slice(2) : argv.slice(1);
    if (argv[0] === '--') argv = argv.slice(1);
    if (argv[0] === '@extscope/agent') argv = ['extscope-agent', ...argv.slice(1)];
  }
  let program: 'extscope' | 'extscope-agent' | 'demo';
  if (argv[0] === 'extscope' || argv[0] === 'extscope-agent') program = argv[0];
  else if (argv[0] === 'npm' && argv[1] === 'run' && argv[2] === 'demo') {
    program = 'demo';
    argv = ['demo', ...argv.slice(argv[3] === '--' ? 4 : 3)];
  } else return undefined;
  const rest = argv.slice(1);
  const subcommand: string[] = [];
  if (program !== 'demo' && rest[0] !== undefined && !rest[0].startsWith('-')) subcommand.push(rest.shift()!);
  if ((subcommand[0] === 'db' || subcommand[0] === 'rules') && rest[0] !== undefined && !rest[0].startsWith('-')) subcommand.push(rest.shift()!);
  const end = rest.indexOf('--');
  const options = (end >= 0 ? rest.slice(0, end) : rest).filter((word) => word.startsWith('--') && word !== '--help').map((word) => word.split('=')[0]!);
  return { program, subcommand, options };
}

/** Repository paths a command names (scripts, configurations), as written. */
const repositoryPaths = (text: string): string[] =>
  words(text)
    .map((word) => word.replace(/^file:/, ''))
    .filter((word) => /^(deploy|scripts|demo|docs|test|migrations|agent|collector)\/[\w./-]+$/.test(word));

describe('the shell commands in the READMEs and docs/', () => {
  it('are found (the test reads the documents it means to)', () => {
    expect(COMMANDS.length).toBeGreaterThan(40);
    for (const document of ['README.md', 'agent/README.md', 'docs/wrap-and-proxy.md', 'docs/otel-collector.md', 'docs/alerting.md'])
      expect(
        COMMANDS.some((command) => command.document === document),
        document,
      ).toBe(true);
  });

  it('name only options the command lists in its --help', { timeout: 300_000 }, () => {
    const unknown: string[] = [];
    let checked = 0;
    for (const command of COMMANDS) {
      const invocation = ourInvocation(command.text);
      if (invocation === undefined) continue;
      const help = helpOf(invocation.program, invocation.subcommand);
      checked++;
      for (const option of invocation.options)
        if (!new RegExp(`(^|[\\s\\[,(])${option}(?![\\w-])`, 'm').test(help)) unknown.push(`${command.document}: ${command.text} (${option})`);
    }
    expect(unknown).toEqual([]);
    expect(checked).toBeGreaterThan(15);
  });

  it('run only npm scripts the package has, and name only files the repository has', () => {
    const missing: string[] = [];
    for (const command of COMMANDS) {
      const script = /^npm run ([\w:-]+)/.exec(command.text)?.[1];
      if (script !== undefined && scripts[script] === undefined) missing.push(`${command.document}: npm run ${script}`);
      for (const path of repositoryPaths(command.text)) if (!existsSync(join(ROOT, path))) missing.push(`${command.document}: ${path}`);
    }
    expect(missing).toEqual([]);
  });

  it('extscope rules check passes on every rules file of the repository the docs and the demo use', () => {
    for (const file of ['demo/rules.yml']) {
      const result = spawnSync(process.execPath, [join(ROOT, 'dist/bin/extscope.js'), 'rules', 'check', file], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect({ file, status: result.status, stderr: result.stderr }).toEqual({ file, status: 0, stderr: '' });
    }
  });
});
