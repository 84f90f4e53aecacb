import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

/**
 * `node --import @extscope/agent/register <fixture>` (or plain `node <fixture>`), run from the repository root;
 * `preload` modules are imported before the agent.
 */
export function nodeArgs(script: string, agent: boolean, preload: string[] = []): string[] {
  return [...[...preload, ...(agent ? ['@extscope/agent/register'] : [])].flatMap((module) => ['--import', module]), script];
}

const EXPORT_FAILS = /^extscope: exporting (\S+) to (\S+) fails \(/;
const EXPORT_WORKS_AGAIN = /^extscope: exporting (\S+) to (\S+) works again \(/;

/**
 * What a child wrote to stderr, less the agent's export-health pairs: a "fails" line answered later by its "works
 * again" line. With {@link agentEnv}'s 200 ms interval an export may take 100 ms at most, and on a loaded machine one
 * now and then times out and the next succeeds; the agent then says so truthfully. Anything else stays, and so does a
 * failure never answered.
 */
export function stderrBesidesRecoveredExports(stderr: string): string {
  const lines = stderr.split('\n');
  const dropped = new Set<number>();
  lines.forEach((line, index) => {
    const failed = EXPORT_FAILS.exec(line);
    if (failed === null) return;
    const answer = lines.findIndex((later, at) => {
      if (at <= index || dropped.has(at)) return false;
      const again = EXPORT_WORKS_AGAIN.exec(later);
      return again !== null && again[1] === failed[1] && again[2] === failed[2];
    });
    if (answer === -1) return;
    dropped.add(index);
    dropped.add(answer);
  });
  return lines.filter((_, index) => !dropped.has(index)).join('\n');
}

/** Environment for a child exporting to `endpoint` quickly, so tests need not wait a minute for an export. */
export function agentEnv(endpoint: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('OTEL_') && !key.startsWith('EXTSCOPE_')) env[key] = value;
  }
  return {
    ...env,
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_METRIC_EXPORT_INTERVAL: '200',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    ...extra,
  };
}

export interface Exchange {
  stdout: Buffer;
  stderr: string;
  code: number | null;
}

/**
 * Speaks raw JSON-RPC over a child's stdio: writes each line, and for requests waits for the answer before the
 * next, so the byte stream is deterministic. Closes stdin at the end and waits for the process to exit.
 */
export interface ExchangeOptions {
  /** Modules the child imports first (`node --import`), before the agent. */
  preload?: string[];
  /** How long the client stays connected after its last answer before closing stdin (a session that lingers). */
  lingerMs?: number;
  /** The child is killed (and `code` is null) if it has not exited this long after stdin closed. */
  exitWithinMs?: number;
  /** Arguments before the node command line: the child is `node <wrapper...> node <script>` (e.g. `extscope wrap --`). */
  wrapper?: string[];
  /** How long to wait for each answer before failing (10 s; the first includes the child's start). */
  answerWithinMs?: number;
  /** The child's working directory (the repository root by default; a project of its own for an installed package). */
  cwd?: string;
}

export async function rawStdioExchange(
  script: string,
  lines: object[],
  agent: boolean,
  env: Record<string, string>,
  args: string[] = [],
  options: ExchangeOptions = {},
): Promise<Exchange> {
  const argv = [...nodeArgs(script, agent, options.preload), ...args];
  const child: ChildProcessWithoutNullStreams =
    options.wrapper === undefined
      ? spawn(process.execPath, argv, { cwd: options.cwd ?? ROOT, env })
      : spawn(process.execPath, [...options.wrapper, process.execPath, ...argv], { cwd: options.cwd ?? ROOT, env });
  const stdout: Buffer[] = [];
  let stderr = '';
  let answers = 0;
  let waiting: (() => void) | undefined;
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    pending += chunk.toString('utf8');
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      pending = pending.slice(newline + 1);
      answers++;
      waiting?.();
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  for (const line of lines) {
    const expectsAnswer = 'id' in line;
    const target = answers + 1;
    const answered = expectsAnswer
      ? new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(line)}; stderr: ${stderr}`)), options.answerWithinMs ?? 10_000);
          waiting = () => {
            if (answers >= target) {
              clearTimeout(timer);
              resolve();
            }
          };
        })
      : Promise.resolve();
    child.stdin.write(`${JSON.stringify(line)}\n`);
    await answered;
  }
  if (options.lingerMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.lingerMs));
  child.stdin.end();
  const killer = options.exitWithinMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.exitWithinMs);
  const code = await exited;
  clearTimeout(killer);
  return { stdout: Buffer.concat(stdout), stderr, code };
}

/**
 * Starts `command args`, writes `chunks` to its stdin as fast as it reads them (however large), ends stdin, and
 * waits for it to exit: a client that sends what it has and leaves, wherever its last chunk stops.
 */
export async function feedStdin(
  command: string,
  args: string[],
  chunks: Buffer[],
  env: Record<string, string>,
  cwd = ROOT,
  options: { answersBeforeLast?: number } = {},
): Promise<Exchange> {
  const child = spawn(command, args, { cwd, env });
  const stdout: Buffer[] = [];
  let stderr = '';
  let lines = 0;
  let onLine: (() => void) | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    for (const byte of chunk) if (byte === 0x0a) lines++;
    onLine?.();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  for (const [index, chunk] of chunks.entries()) {
    // A server may drop what is still in flight when its input ends: the answers asked for come first.
    const wanted = options.answersBeforeLast;
    if (index === chunks.length - 1 && wanted !== undefined && lines < wanted) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${wanted} answers did not come within 60 s; stderr: ${stderr}`)), 60_000);
        onLine = () => {
          if (lines < wanted) return;
          clearTimeout(timer);
          onLine = undefined;
          resolve();
        };
      });
    }
    if (!child.stdin.write(chunk)) await new Promise((resolve) => child.stdin.once('drain', resolve));
  }
  child.stdin.end();
  const code = await exited;
  return { stdout: Buffer.concat(stdout), stderr, code };
}
