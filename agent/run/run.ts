import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { pathToFileURL } from 'node:url';

export const RUN_USAGE = `Usage: extscope-agent run -- <command> [args...]

Runs a Node.js MCP server with the agent loaded, however it is started: NODE_OPTIONS gets
"--import <this package's register entry, as an absolute file URL>", so it resolves from any folder, and every
Node.js process the command starts (npx's own included) loads it. The server's stdin, stdout, stderr, signals and
exit code are its own; only the environment gains that option (and loses what an npx that started this
command set for itself, npm_config_package and npm_config_call).

For servers started with npx, which install into a cache of their own where "--import @extscope/agent/register"
would not resolve:
  npx -y @extscope/agent run -- npx -y @modelcontextprotocol/server-everything

Environment: the standard OTEL_* variables and the EXTSCOPE_* switches, as for the agent.
`;

/** Signals a terminal or a supervisor sends that the server should act on. */
const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2', 'SIGWINCH'];
/** The exit code a shell gives for a command it cannot run. */
const CANNOT_RUN = 127;

/** The register entry as a file URL: absolute (resolves from any folder) and free of spaces (NODE_OPTIONS splits on them). */
export function registerImport(): string {
  return pathToFileURL(new URL('../register/register.js', import.meta.url).pathname).href;
}

/**
 * What `npx --package <spec> extscope-agent …` (how a release tarball is run) leaves in the environment for its own
 * use: an `npx` in the command would take that package for its own and run the wrong thing.
 */
const NPX_OWN = ['npm_config_package', 'npm_config_call'];

/** The command's environment: the caller's, with the agent's `--import` added and what npx set for itself removed. */
export function commandEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...env, NODE_OPTIONS: withRegister(env['NODE_OPTIONS']) };
  for (const name of NPX_OWN) delete result[name];
  return result;
}

/** `existing` with `--import <register>` added once. */
export function withRegister(existing: string | undefined): string {
  const option = `--import=${registerImport()}`;
  const current = existing?.trim() ?? '';
  if (current.split(/\s+/).includes(option)) return current;
  return current === '' ? option : `${current} ${option}`;
}

/**
 * `extscope-agent run -- <command> [args...]`: ends as the command did, with its exit code or of the same signal.
 * Resolves only when no command ran (usage, a command that cannot be started), with the exit code to give.
 */
export async function runWithAgent(args: string[]): Promise<number> {
  if (args[0] === '--help' || args[0] === '-h') {
    // Only for `--help`, before any server is started: there is no protocol stream to share.
    process.stdout.write(RUN_USAGE);
    return 0;
  }
  const separator = args.indexOf('--');
  const command = separator === 0 ? args.slice(1) : [];
  if (command.length === 0) {
    process.stderr.write(`extscope-agent run: give the server's command after "--", e.g. extscope-agent run -- npx -y <server package>\n`);
    return 2;
  }
  const [file, ...rest] = command as [string, ...string[]];
  const child = spawn(file, rest, { stdio: 'inherit', env: commandEnv(process.env) });
  const failure = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  if (failure !== undefined) {
    process.stderr.write(`extscope-agent run: cannot run ${JSON.stringify(file)}: ${failure.message}\n`);
    return CANNOT_RUN;
  }
  const forward = (signal: NodeJS.Signals): void => {
    try {
      child.kill(signal);
    } catch {
      // The child is gone already: its exit ends this process.
    }
  };
  for (const signal of FORWARDED) process.on(signal, forward);
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (exitCode, exitSignal) => resolve({ code: exitCode, signal: exitSignal })),
  );
  for (const forwarded of FORWARDED) process.off(forwarded, forward);
  if (signal !== null) process.kill(process.pid, signal);
  // A signal whose default action does not end a process ends here, with the code a shell reports for it.
  process.exit(signal !== null ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
}
